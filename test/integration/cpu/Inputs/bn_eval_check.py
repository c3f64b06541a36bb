"""Evaluation of examples/fashion_cnn.mlir against float64 PyTorch: the
test accuracy gacc-run reported (--metrics) and that of torch's model in
eval mode (BatchNorm normalizing by the running statistics) with gacc's
saved weights and running statistics (--save-params), on the 10000
Fashion-MNIST test images. Also prints the accuracy in train mode (batch
statistics of each batch of 32), which evaluation must not be."""
import argparse
import gzip
import json
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import safetensors_io  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--params", required=True)
ap.add_argument("--metrics", required=True)
args = ap.parse_args()

D = "/usr/share/datasets/fashion-mnist/"


def idx(name, off):
    return np.frombuffer(gzip.open(D + name).read(), np.uint8, offset=off)


x = torch.tensor(idx("t10k-images-idx3-ubyte.gz", 16).reshape(-1, 1, 28, 28) / 255.0, dtype=torch.float64)
y = torch.tensor(idx("t10k-labels-idx1-ubyte.gz", 8).astype(np.int64))
p = {k: torch.tensor(v.astype(np.float64)) for k, v in safetensors_io.load(args.params).items()}


def forward(x, training):
    h = x
    for i in (1, 2):
        h = F.conv2d(h, p[f"conv{i}_weight"], p[f"conv{i}_bias"], padding=1)
        h = F.batch_norm(h, p[f"bn{i}_running_mean"].clone(), p[f"bn{i}_running_var"].clone(),
                         p[f"bn{i}_weight"], p[f"bn{i}_bias"], training=training, eps=1e-5)
        h = F.max_pool2d(F.relu(h), 2)
    return F.linear(h.flatten(1), p["fc_weight"], p["fc_bias"])


with torch.no_grad():
    acc = {mode: float(torch.cat([(forward(x[i:i + 32], mode == "train").argmax(1) == y[i:i + 32])
                                  for i in range(0, len(x), 32)]).double().mean())
           for mode in ("eval", "train")}
got = [r for r in map(json.loads, open(args.metrics))
       if r.get("kind") == "summary"][-1]["test_accuracy"]
print(f"test accuracy: gacc {got:.4f}, torch eval mode {acc['eval']:.4f} (train mode {acc['train']:.4f})")
ok = abs(got - acc["eval"]) <= 2e-4 and abs(acc["train"] - acc["eval"]) > 1e-3
print("EVAL OK" if ok else "EVAL FAILED")
sys.exit(0 if ok else 1)

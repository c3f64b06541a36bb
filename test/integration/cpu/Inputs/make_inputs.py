"""Writes initial parameters (torch's own initializers, torch.manual_seed) as
safetensors for gacc-run --load-params, a sample order, and for the `seq`
model a tensors data file with sequences of different lengths (targets past
each sequence's end are ignore_index), for the `cnn` and `bn_cnn` models one
of random 2 × 9 × 9 images with labels of 5 classes (`bn_cnn` also writes
its BatchNorms' running statistics, moved off torch's initial values)."""
import argparse
import random
import sys

import numpy as np
import torch

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import safetensors_io  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--model", required=True,
                choices=["fashion_mlp", "fashion_residual_mlp", "fashion_linalg_mlp", "kjv_char", "seq", "cnn", "bn_cnn", "gpt", "gpt_lora"])
ap.add_argument("--init", required=True)
ap.add_argument("--order", required=True)
ap.add_argument("--samples", type=int, required=True, help="indices in the order file")
ap.add_argument("--population", type=int, required=True, help="training samples available")
ap.add_argument("--data", default="", help="seq: where to write the tensors file")
args = ap.parse_args()

torch.manual_seed(0)
if args.model == "fashion_mlp":
    l1, l2 = torch.nn.Linear(784, 256), torch.nn.Linear(256, 10)
    params = {"fc1_weight": l1.weight, "fc1_bias": l1.bias, "fc2_weight": l2.weight, "fc2_bias": l2.bias}
elif args.model == "fashion_residual_mlp":
    l1, lr, l2 = torch.nn.Linear(784, 256), torch.nn.Linear(256, 256), torch.nn.Linear(256, 10)
    params = {"fc1_weight": l1.weight, "fc1_bias": l1.bias, "res_weight": lr.weight, "res_bias": lr.bias,
              "fc2_weight": l2.weight, "fc2_bias": l2.bias}
elif args.model == "fashion_linalg_mlp":
    # Weights stored [in, out] (x · W), torch.nn.Linear's initialization.
    l1, l2 = torch.nn.Linear(784, 256), torch.nn.Linear(256, 10)
    params = {"fc1_weight": l1.weight.T.contiguous(), "fc1_bias": l1.bias,
              "fc2_weight": l2.weight.T.contiguous(), "fc2_bias": l2.bias}
elif args.model == "kjv_char":
    e, l1, ln, l2 = torch.nn.Embedding(64, 64), torch.nn.Linear(64, 128), torch.nn.LayerNorm(128), torch.nn.Linear(128, 64)
    with torch.no_grad():  # a non-trivial layer norm affine
        ln.weight.uniform_(0.5, 1.5)
        ln.bias.uniform_(-0.1, 0.1)
    params = {"embedding": e.weight, "fc1_weight": l1.weight, "fc1_bias": l1.bias,
              "ln_weight": ln.weight, "ln_bias": ln.bias, "fc2_weight": l2.weight, "fc2_bias": l2.bias}
elif args.model == "cnn":
    c1 = torch.nn.Conv2d(2, 4, 3, stride=2, padding=1, groups=2)
    gn = torch.nn.GroupNorm(2, 4)
    c2 = torch.nn.Conv2d(4, 6, 3, padding=2, dilation=2, bias=False)
    fc = torch.nn.Linear(6, 5)
    with torch.no_grad():  # a non-trivial group norm affine
        gn.weight.uniform_(0.5, 1.5)
        gn.bias.uniform_(-0.5, 0.5)
    params = {"conv1_weight": c1.weight, "conv1_bias": c1.bias, "gn_weight": gn.weight,
              "gn_bias": gn.bias, "conv2_weight": c2.weight, "fc_weight": fc.weight,
              "fc_bias": fc.bias}
    rng = np.random.default_rng(0)
    images = rng.normal(size=(args.population, 2, 9, 9)).astype(np.float32)
    labels = rng.integers(0, 5, size=args.population).astype(np.int32)
    safetensors_io.save_any(args.data, {"input0": images, "input1": labels})
elif args.model == "bn_cnn":
    c1, fc1, fc = torch.nn.Conv2d(2, 4, 3, padding=1), torch.nn.Linear(4, 6), torch.nn.Linear(6, 5)
    bn1, bn2 = torch.nn.BatchNorm2d(4), torch.nn.BatchNorm1d(6)
    with torch.no_grad():  # non-trivial affines and running statistics
        for bn in (bn1, bn2):
            bn.weight.uniform_(0.5, 1.5)
            bn.bias.uniform_(-0.5, 0.5)
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 1.5)
    params = {"conv1_weight": c1.weight, "conv1_bias": c1.bias, "fc1_weight": fc1.weight,
              "fc1_bias": fc1.bias, "fc_weight": fc.weight, "fc_bias": fc.bias}
    for name, bn in (("bn1", bn1), ("bn2", bn2)):
        params.update({name + "_weight": bn.weight, name + "_bias": bn.bias,
                       name + "_running_mean": bn.running_mean, name + "_running_var": bn.running_var})
    rng = np.random.default_rng(0)
    images = (rng.normal(size=(args.population, 2, 9, 9)) + 0.5).astype(np.float32)
    labels = rng.integers(0, 5, size=args.population).astype(np.int32)
    safetensors_io.save_any(args.data, {"input0": images, "input1": labels})
elif args.model in ("gpt", "gpt_lora"):
    # One pre-LN block on the seq data (the data part below is shared).
    params = {"wte": torch.randn(11, 8) * 0.3, "wpe": torch.randn(5, 8) * 0.3}
    for ln in ("ln1", "ln2", "lnf"):
        params[ln + "_w"] = torch.empty(8).uniform_(0.5, 1.5)
        params[ln + "_b"] = torch.empty(8).uniform_(-0.3, 0.3)
    for name, (o, i) in {"attn": (24, 8), "proj": (8, 8), "fc": (16, 8), "out": (8, 16)}.items():
        lin = torch.nn.Linear(i, o)
        params[name + "_w"], params[name + "_b"] = lin.weight, lin.bias
    if args.model == "gpt_lora":  # rank-2 adapters; B non-zero so A trains from the first step
        for name, (o, i) in {"qkv": (24, 8), "proj": (8, 8)}.items():
            params[f"lora_{name}_a"] = torch.nn.Linear(i, 2, bias=False).weight
            params[f"lora_{name}_b"] = torch.randn(o, 2) * 0.1
if args.model in ("seq", "gpt", "gpt_lora"):
    if args.model == "seq":
        e, l1, ln, l2 = torch.nn.Embedding(11, 6), torch.nn.Linear(6, 7), torch.nn.LayerNorm(7), torch.nn.Linear(7, 11)
        with torch.no_grad():
            ln.weight.uniform_(0.5, 1.5)
            ln.bias.uniform_(-0.5, 0.5)
        params = {"embedding": e.weight, "w1": l1.weight, "b1": l1.bias,
                  "ln_w": ln.weight, "ln_b": ln.bias, "w2": l2.weight, "b2": l2.bias}
    rng = np.random.default_rng(0)
    n, s = args.population, 5
    tokens = rng.integers(0, 11, size=(n, s)).astype(np.int32)
    targets = rng.integers(0, 11, size=(n, s)).astype(np.int32)
    lengths = rng.integers(1, s + 1, size=n)  # 1 to 5 targets: very unequal
    for i, L in enumerate(lengths):
        targets[i, L:] = -100
    safetensors_io.save_any(args.data, {"input0": tokens, "input1": targets})
safetensors_io.save(args.init, {k: v.detach().numpy() for k, v in params.items()})
r = random.Random(1)
with open(args.order, "w") as f:
    f.write("\n".join(map(str, r.sample(range(args.population), args.samples))) + "\n")

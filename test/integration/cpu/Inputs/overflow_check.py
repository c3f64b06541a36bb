"""fp16 overflow: writes a tensors file of 512 Fashion-MNIST samples whose
sample 40 (window 1, micro-batch 2 of 8 × 32) is multiplied by 1e5, so that
its fp16 input overflows; or checks gacc-run's results on it."""
import argparse
import json
import sys

import numpy as np

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import safetensors_io  # noqa: E402
from torch_parity import read_idx  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("mode", choices=["make", "check"])
ap.add_argument("--data")
ap.add_argument("--init")
ap.add_argument("--one")
ap.add_argument("--three")
ap.add_argument("--metrics")
args = ap.parse_args()

if args.mode == "make":
    d = "/usr/share/datasets/fashion-mnist"
    x = read_idx(f"{d}/train-images-idx3-ubyte.gz").reshape(-1, 784)[:512].astype(np.float32) / 255
    y = read_idx(f"{d}/train-labels-idx1-ubyte.gz")[:512].astype(np.int32)
    x[40] *= 1e5
    safetensors_io.save_any(args.data, {"input0": x, "input1": y})
    sys.exit(0)

init = safetensors_io.load(args.init)
one = safetensors_io.load(args.one)
three = safetensors_io.load(args.three)
rows = [r for r in map(json.loads, open(args.metrics))
        if r.get("kind") == "step" and "loss_scale" in r]
same = all(np.array_equal(init[k], one[k]) for k in init)
moved = all(np.isfinite(three[k]).all() for k in init) and any(
    not np.array_equal(init[k], three[k]) for k in init)
print("window 1 skipped:", rows[0]["skipped"], "scale", rows[0]["loss_scale"])
print("parameters unchanged by the skipped window:", same)
print("windows 2-3:", [(r["skipped"], r["loss_scale"]) for r in rows[1:3]])
print("training resumed with finite parameters:", moved)
ok = rows[0]["skipped"] and same and moved and all(not r["skipped"] for r in rows[1:3]) \
    and rows[1]["loss_scale"] == rows[0]["loss_scale"] / 2
print("OVERFLOW HANDLED" if ok else "OVERFLOW MISHANDLED")
sys.exit(0 if ok else 1)

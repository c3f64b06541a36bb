"""Prints the maximum relative difference (max|a − b| / max|b|) between the
tensors of two safetensors files and exits 1 above --tol."""
import argparse
import sys

import numpy as np

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import safetensors_io  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("a")
p.add_argument("b")
p.add_argument("--tol", type=float, default=1e-5)
args = p.parse_args()
a, b = safetensors_io.load(args.a), safetensors_io.load(args.b)
if sorted(a) != sorted(b):
    print(f"tensor names differ: {sorted(a)} vs {sorted(b)}")
    sys.exit(1)
worst = 0.0
for n in sorted(a):
    d = float(np.max(np.abs(a[n].astype(np.float64) - b[n])) / max(np.max(np.abs(b[n])), 1e-30))
    worst = max(worst, d)
print(f"max relative difference {worst:.2e} ({'within' if worst <= args.tol else 'ABOVE'} {args.tol:g})")
sys.exit(0 if worst <= args.tol else 1)

"""Prints the largest relative difference between the tensors of two
safetensors files and exits 1 above --tol. Per tensor, --metric max is
max|a − b| / max|b| (the default), --metric norm is ‖a − b‖₂ / ‖b‖₂.
--exclude leaves out tensors whose values are rounding noise (for example
the gradient of a convolution bias that a BatchNorm cancels), --verbose
prints every tensor's difference before the verdict."""
import argparse
import sys

import numpy as np

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import safetensors_io  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("a")
p.add_argument("b")
p.add_argument("--tol", type=float, default=1e-5)
p.add_argument("--metric", choices=["max", "norm"], default="max")
p.add_argument("--exclude", default="", help="comma-separated tensor names left out")
p.add_argument("--verbose", action="store_true")
args = p.parse_args()
a, b = safetensors_io.load(args.a), safetensors_io.load(args.b)
if sorted(a) != sorted(b):
    print(f"tensor names differ: {sorted(a)} vs {sorted(b)}")
    sys.exit(1)
excluded = [n for n in args.exclude.split(",") if n]
for n in excluded:
    if n not in a:
        print(f"--exclude: no tensor {n}")
        sys.exit(1)
worst = 0.0
for n in sorted(set(a) - set(excluded)):
    diff = a[n].astype(np.float64) - b[n]
    if args.metric == "max":
        d = float(np.max(np.abs(diff)) / max(np.max(np.abs(b[n])), 1e-30))
    else:
        d = float(np.linalg.norm(diff) / max(np.linalg.norm(b[n]), 1e-30))
    worst = max(worst, d)
    if args.verbose:
        print(f"  {n}: {d:.2e}")
print(f"max relative difference ({args.metric}) {worst:.2e} ({'within' if worst <= args.tol else 'ABOVE'} {args.tol:g})")
sys.exit(0 if worst <= args.tol else 1)

"""Checks a gacc-run metrics file (JSON lines): the last epoch's test
accuracy against --min-accuracy, the summary's keys, that every logged
step has loss and lr, that every row has one of the documented kinds and
the keys of its kind, that numbers are written as the shortest decimal
that reads back as them, and that the step's f32 results (loss, lr,
grad_norm, loss_scale) are the shortest decimal of their f32 value. Prints one verdict per check, then "METRICS OK" and
exits 0 only when every check passed (exit status 1 otherwise)."""
import argparse
import json
import sys

import numpy as np

# The keys whose numbers are f32 results of the step (jsonNumber).
F32_KEYS = ("loss", "lr", "grad_norm", "loss_scale")


def shortest_f32(x):
    """Whether the double x is the shortest decimal of an f32 value."""
    text = np.format_float_positional(np.float32(x), unique=True, trim="-")
    return float(text) == x

p = argparse.ArgumentParser()
p.add_argument("metrics")
p.add_argument("--min-accuracy", type=float, required=True)
args = p.parse_args()
lines = open(args.metrics).read().splitlines()
rows = [json.loads(line) for line in lines]
epochs = [r for r in rows if r.get("kind") == "epoch"]
steps = [r for r in rows if r.get("kind") == "step"]
summary = rows[-1] if rows else {}
# The key that tells each kind of row (README's --metrics).
kind_keys = {"memory_plan": "memory_plan", "resumed": "resumed_at_step",
             "step": "loss", "epoch": "epoch", "summary": "median_step_ms"}
checks = {
    "accuracy": bool(epochs) and epochs[-1]["test_accuracy"] >= args.min_accuracy,
    "summary keys": summary.get("kind") == "summary" and all(
        k in summary for k in ("median_step_ms", "samples_per_s", "peak_rss_mb")),
    "steps logged": len(steps) > 0 and all("lr" in r and "step" in r for r in steps),
    "kinds": all(r.get("kind") in kind_keys and kind_keys[r["kind"]] in r
                 for r in rows) and summary.get("kind") == "summary",
    # lr 0.05, not 0.050000000000000003 (17 digits of the double).
    "shortest numbers": all(
        len(l) == len(json.dumps(r, separators=(",", ":"), ensure_ascii=False))
        for l, r in zip(lines, rows)),
    # The step's f32 results as their f32 value's shortest decimal: 0.05,
    # not the f32 widened to a double (0.05000000074505806), which the
    # check above would take as shortest.
    "f32 numbers": all(shortest_f32(r[k]) for r in rows for k in F32_KEYS
                       if isinstance(r.get(k), float)),
}
for name, ok in checks.items():
    detail = f" {epochs[-1]['test_accuracy']}" if name == "accuracy" and epochs else ""
    print(f"{name} {'ok' if ok else 'FAILED'}{detail}")
ok = all(checks.values())
print("METRICS OK" if ok else "METRICS FAILED")
sys.exit(0 if ok else 1)

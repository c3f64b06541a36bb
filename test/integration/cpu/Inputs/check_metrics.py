"""Checks a gacc-run metrics file (JSON lines): the last epoch's test
accuracy against --min-accuracy, the summary's keys, that every logged
step has loss and lr, and every row its kind. Prints one verdict per check, then "METRICS OK" and
exits 0 only when every check passed (exit status 1 otherwise)."""
import argparse
import json
import sys

p = argparse.ArgumentParser()
p.add_argument("metrics")
p.add_argument("--min-accuracy", type=float, required=True)
args = p.parse_args()
rows = [json.loads(line) for line in open(args.metrics)]
epochs = [r for r in rows if "test_accuracy" in r and "summary" not in r]
steps = [r for r in rows if "loss" in r]
summary = rows[-1] if rows else {}
checks = {
    "accuracy": bool(epochs) and epochs[-1]["test_accuracy"] >= args.min_accuracy,
    "summary keys": summary.get("summary") is True and all(
        k in summary for k in ("median_step_ms", "samples_per_s", "peak_rss_mb")),
    "steps logged": len(steps) > 0 and all("lr" in r and "step" in r for r in steps),
    "kinds": all(r.get("kind") == "step" for r in steps)
    and all(r.get("kind") == "epoch" for r in epochs)
    and summary.get("kind") == "summary",
}
for name, ok in checks.items():
    detail = f" {epochs[-1]['test_accuracy']}" if name == "accuracy" and epochs else ""
    print(f"{name} {'ok' if ok else 'FAILED'}{detail}")
ok = all(checks.values())
print("METRICS OK" if ok else "METRICS FAILED")
sys.exit(0 if ok else 1)

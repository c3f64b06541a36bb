"""Checks a gacc-run metrics file (JSON lines): the last epoch's test
accuracy against --min-accuracy, the summary's keys, and that every logged
step has loss and lr. Prints one verdict per check."""
import argparse
import json

p = argparse.ArgumentParser()
p.add_argument("metrics")
p.add_argument("--min-accuracy", type=float, required=True)
args = p.parse_args()
rows = [json.loads(line) for line in open(args.metrics)]
epochs = [r for r in rows if "test_accuracy" in r and "summary" not in r]
steps = [r for r in rows if "loss" in r]
summary = rows[-1]
acc = epochs[-1]["test_accuracy"]
print("accuracy", "ok" if acc >= args.min_accuracy else "LOW", acc)
print("summary keys", summary.get("summary") is True and
      all(k in summary for k in ("median_step_ms", "samples_per_s", "peak_rss_mb")))
print("steps logged", len(steps) > 0 and all("lr" in r and "step" in r for r in steps))

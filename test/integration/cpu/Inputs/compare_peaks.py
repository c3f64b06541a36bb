"""Compares the memory of two gacc-run runs (--memory-plan --metrics):
the planned and measured peaks of the summary rows, side by side.

  compare_peaks.py BASE.jsonl OTHER.jsonl

Prints both and LOWER when OTHER's planned and measured peaks are both
below BASE's, else NOT LOWER (exit 1).
"""
import json
import sys


def peaks(path):
    rows = [json.loads(l) for l in open(path) if l.strip()]
    summary = [r for r in rows if r.get("kind") == "summary"][-1]
    return summary["planned_peak_bytes"], summary["measured_peak_bytes"]


base, other = peaks(sys.argv[1]), peaks(sys.argv[2])
mib = 1024.0 * 1024.0
print("planned peak %.2f MiB -> %.2f MiB; measured peak %.2f MiB -> %.2f MiB"
      % (base[0] / mib, other[0] / mib, base[1] / mib, other[1] / mib))
lower = other[0] < base[0] and other[1] < base[1]
print("LOWER" if lower else "NOT LOWER")
sys.exit(0 if lower else 1)

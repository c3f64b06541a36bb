"""Compares the per-step metrics of a single-process run (a) and a
data-parallel run (b) of gacc-run: the same number of steps, equal
normalization counts, losses within --loss-tol relative, and exactly
--collectives collectives in every step of b (0 in a). Exits 1 otherwise."""
import argparse
import json
import sys

p = argparse.ArgumentParser()
p.add_argument("single")
p.add_argument("parallel")
p.add_argument("--steps", type=int, required=True)
p.add_argument("--collectives", type=int, default=1)
p.add_argument("--loss-tol", type=float, default=1e-5)
args = p.parse_args()


def steps(path):
    rows = [json.loads(line) for line in open(path)]
    return [r for r in rows if "loss" in r and "step" in r]


a, b = steps(args.single), steps(args.parallel)
problems = []
if len(a) != args.steps or len(b) != args.steps:
    problems.append(f"expected {args.steps} step rows, got {len(a)} and {len(b)}")
worst = 0.0
for ra, rb in zip(a, b):
    if ra["count"] != rb["count"]:
        problems.append(f"step {ra['step']}: count {ra['count']} vs {rb['count']}")
    worst = max(worst, abs(ra["loss"] - rb["loss"]) / max(abs(ra["loss"]), 1e-30))
    if ra["collectives"] != 0 or rb["collectives"] != args.collectives:
        problems.append(f"step {ra['step']}: collectives {ra['collectives']} "
                        f"(single) and {rb['collectives']} (data-parallel)")
if worst > args.loss_tol:
    problems.append(f"loss difference {worst:.2e} above {args.loss_tol:g}")
for line in problems:
    print(line)
if problems:
    sys.exit(1)
print(f"{len(a)} steps: counts equal, max loss difference {worst:.2e}, "
      f"collectives per step {args.collectives}")

"""Checks that --memory-budget picks the fewest micro-batches whose planned
peak fits: for each budget, gacc-run's choice of N accumulation steps has
the micro-batch m = ceil(E / N) and a plan within the budget (gacc-opt
-gacc-plan-memory), and N - 1 steps' micro-batch ceil(E / (N - 1)) has
not (or N is 1).
Usage: budget_choice.py GACC_RUN GACC_OPT MODEL EFFECTIVE_BATCH BUDGET..."""
import re
import subprocess
import sys

run, opt, model, eff = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
units = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}


def planned_peak(m):
    out = subprocess.run([opt, model, "-gacc-plan-memory=micro-batch=%d" % m,
                          "-o", "/dev/null"], capture_output=True, text=True,
                         check=True).stdout
    return int(re.search(r"^\s*peak\s+(\d+)", out, re.M).group(1))


for budget in sys.argv[5:]:
    number, unit = re.fullmatch(r"([\d.]+)(\w+)", budget).groups()
    limit = float(number) * units[unit]
    out = subprocess.run([run, model, "--memory-budget", budget,
                          "--max-steps", "1", "--no-eval"],
                         capture_output=True, text=True, check=True).stdout
    m, n = map(int, re.search(r"micro-batch (\d+) × (\d+) accumulation",
                              out).groups())
    assert planned_peak(m) <= limit, (budget, m, "does not fit")
    assert m == -(-eff // n), (budget, m, n, "pads more than N needs")
    assert n == 1 or planned_peak(-(-eff // (n - 1))) > limit, \
        (budget, n, "not the fewest")
    assert "effective batch %d" % eff in out, out
    print("budget %s: micro-batch %d x %d, the fewest that fit" %
          (budget, m, n))

"""Feeds mutants of a model through gacc-opt's pipelines: every run must end
with either the lowered IR (exit 0) or diagnostics (an "error:" line and a
non-zero exit), never a crash (a signal, a stack dump, "LLVM ERROR", an
assertion) or a hang.

Mutations (seeded, so a failure can be reproduced with the printed seed and
index): a dimension of a tensor type changed, a line deleted or duplicated,
two operands swapped, an operand replaced by another value, an element type
changed, an integer or float attribute set to an edge value, an op renamed
to another op, the file truncated.

Prints one line per crash (the mutation, the pipeline and the first lines of
the output) and a summary "N runs: X compiled, Y rejected with a
diagnostic, Z crashed"; exits 1 when anything crashed.
"""
import argparse
import concurrent.futures
import os
import random
import re
import subprocess
import sys
import tempfile

OP_SWAPS = {
    "gacc.relu": ["gacc.gelu", "gacc.layer_norm", "gacc.linear"],
    "gacc.gelu": ["gacc.relu"],
    "gacc.linear": ["gacc.embedding", "gacc.cross_entropy"],
    "gacc.cross_entropy": ["gacc.linear", "gacc.relu"],
    "gacc.embedding": ["gacc.linear"],
    "gacc.layer_norm": ["gacc.batch_norm", "gacc.linear"],
    "arith.addf": ["arith.mulf", "arith.subf", "arith.maximumf", "arith.remf"],
    "arith.mulf": ["arith.addf", "arith.divf"],
    "linalg.matmul": ["linalg.batch_matmul", "linalg.matvec"],
    "linalg.generic": ["linalg.map"],
    "linalg.fill": ["linalg.copy"],
    "math.tanh": ["math.exp", "math.log"],
}
EDGE_INTS = ["0", "-1", "1", "3", "7", "1000000000", "9223372036854775807"]
EDGE_FLOATS = ["0.0", "-1.0", "1.0e+30", "-0.5", "0x7FC00000", "1.0e-30"]
ELEMENT_TYPES = ["f16", "bf16", "f64", "i32", "i64", "i1", "index"]


def mutate(text, rng):
    """One mutation of `text`; returns (description, mutant)."""
    lines = text.split("\n")
    kind = rng.choice(["dim", "delete", "duplicate", "swap", "replace", "etype",
                       "int", "float", "op", "truncate"])
    if kind == "dim":
        spots = [m for m in re.finditer(r"tensor<((\d+x)+)", text)]
        if spots:
            m = rng.choice(spots)
            dims = m.group(1).split("x")[:-1]
            i = rng.randrange(len(dims))
            old = dims[i]
            dims[i] = str(rng.choice([0, 1, 2, 3, int(old) + 1, max(int(old) - 1, 0), 4096]))
            new = "tensor<" + "x".join(dims) + "x"
            return f"dim {old}->{dims[i]} at {m.start()}", text[:m.start()] + new + text[m.end():]
    if kind in ("delete", "duplicate"):
        body = [i for i, l in enumerate(lines) if l.strip() and not l.strip().startswith("//")]
        i = rng.choice(body)
        if kind == "delete":
            return f"delete line {i + 1}", "\n".join(lines[:i] + lines[i + 1:])
        return f"duplicate line {i + 1}", "\n".join(lines[:i + 1] + [lines[i]] + lines[i + 1:])
    if kind == "swap":
        spots = [m for m in re.finditer(r"(%\w+), (%\w+)", text)]
        if spots:
            m = rng.choice(spots)
            return (f"swap {m.group(1)} {m.group(2)}",
                    text[:m.start()] + m.group(2) + ", " + m.group(1) + text[m.end():])
    if kind == "replace":
        names = sorted(set(re.findall(r"%\w+", text)))
        uses = [m for m in re.finditer(r"(?<![\w%])%\w+(?!\s*[=:])", text)]
        if uses and names:
            m = rng.choice(uses)
            other = rng.choice(names)
            return f"replace {m.group(0)} by {other}", text[:m.start()] + other + text[m.end():]
    if kind == "etype":
        spots = [m for m in re.finditer(r"x(f32|i32|i64)>", text)]
        if spots:
            m = rng.choice(spots)
            t = rng.choice(ELEMENT_TYPES)
            return f"element type {m.group(1)}->{t}", text[:m.start()] + f"x{t}>" + text[m.end():]
    if kind == "int":
        spots = [m for m in re.finditer(r"(= )(-?\d+)( : i64)", text)]
        if spots:
            m = rng.choice(spots)
            v = rng.choice(EDGE_INTS)
            return f"int {m.group(2)}->{v}", text[:m.start(2)] + v + text[m.end(2):]
    if kind == "float":
        spots = [m for m in re.finditer(r"(= )(-?\d+\.\d+(e[-+]?\d+)?)", text)]
        if spots:
            m = rng.choice(spots)
            v = rng.choice(EDGE_FLOATS)
            return f"float {m.group(2)}->{v}", text[:m.start(2)] + v + text[m.end(2):]
    if kind == "op":
        spots = [m for m in re.finditer("|".join(re.escape(k) for k in OP_SWAPS), text)]
        if spots:
            m = rng.choice(spots)
            new = rng.choice(OP_SWAPS[m.group(0)])
            return f"op {m.group(0)}->{new}", text[:m.start()] + new + text[m.end():]
    cut = rng.randrange(len(text))
    return f"truncate at {cut}", text[:cut]


CRASH = re.compile(r"PLEASE submit a bug report|Stack dump|LLVM ERROR|Assertion .* failed|"
                   r"UNREACHABLE|Segmentation fault")


def run(gacc_opt, pipeline, text, timeout):
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(text)
        path = f.name
    try:
        r = subprocess.run([gacc_opt, path, pipeline, "-o", os.devnull],
                           capture_output=True, text=True, timeout=timeout)
        out = r.stdout + r.stderr
        if r.returncode < 0 or r.returncode >= 128 or CRASH.search(out):
            return "crashed", out
        if r.returncode != 0 and "error:" not in out:
            return "crashed", "non-zero exit without a diagnostic\n" + out
        return ("compiled" if r.returncode == 0 else "rejected"), out
    except subprocess.TimeoutExpired:
        return "crashed", f"no result within {timeout} s"
    finally:
        os.unlink(path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("models", nargs="+")
    ap.add_argument("--gacc-opt", required=True)
    ap.add_argument("--mutants", type=int, default=16, help="per model")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=int, default=120)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = ap.parse_args()
    pipelines = ["-gacc-lower-to-cpu-pipeline",
                 "-gacc-lower-to-nvvm-pipeline=format=isa"]
    jobs = []
    for model in args.models:
        text = open(model).read()
        rng = random.Random(f"{args.seed}:{os.path.basename(model)}")
        for i in range(args.mutants):
            what, mutant = mutate(text, rng)
            for p in pipelines:
                jobs.append((os.path.basename(model), i, what, p, mutant))
    counts = {"compiled": 0, "rejected": 0, "crashed": 0}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = pool.map(lambda j: run(args.gacc_opt, j[3], j[4], args.timeout), jobs)
        for (model, i, what, pipeline, _), (verdict, out) in zip(jobs, results):
            counts[verdict] += 1
            if verdict == "crashed":
                head = "\n    ".join(out.strip().split("\n")[:6])
                print(f"CRASH {model} mutant {i} ({what}) {pipeline}:\n    {head}")
    print(f"{len(jobs)} runs: {counts['compiled']} compiled, {counts['rejected']} "
          f"rejected with a diagnostic, {counts['crashed']} crashed")
    return 1 if counts["crashed"] else 0


if __name__ == "__main__":
    sys.exit(main())

"""Stops a gacc-run training run in the middle of a window and resumes it,
then compares the parameters with an uninterrupted run's, byte for byte.

  stop_and_resume.py --tool gacc-run --model M.mlir --dir DIR --pause S:K
                     [--launcher "mpirun -np 2 ..."] [--signal TERM|KILL]
                     [--every E] -- ARGS...

1. The uninterrupted run: gacc-run M ARGS --checkpoint-dir DIR/full-ck
   --save-params DIR/full (checkpoints that are never needed: the step is
   compiled as the stopped run's is, so the comparison is of resuming, not
   of a run without checkpoints, whose step may compute a weight gradient
   once per window, --defer-weight-gradients, and round differently).
2. The stopped run: gacc-run M ARGS --checkpoint-dir DIR/ck
   --pause-after-micro-batch S:K [--checkpoint-every E]. Rank 0 waits after
   micro-batch K of optimizer step S; this script sends it the signal. With
   TERM the run must write a checkpoint there and exit 0 with one line
   saying where; with KILL (a crash) it dies, and the last periodic
   checkpoint (--every) is what remains.
3. The resumed run: gacc-run M ARGS --resume DIR/ck --save-params DIR/resumed.
4. full and resumed must be identical files (with --ema, the weights'
   moving averages written by --save-ema too).

Prints what it checked and BIT-IDENTICAL, or the first failure (exit 1).
"""
import argparse
import os
import shlex
import signal
import subprocess
import sys
import time

parser = argparse.ArgumentParser()
parser.add_argument("--tool", required=True)
parser.add_argument("--model", required=True)
parser.add_argument("--dir", required=True)
parser.add_argument("--pause", required=True)
parser.add_argument("--launcher", default="")
parser.add_argument("--signal", default="TERM", choices=["TERM", "KILL"])
parser.add_argument("--every", type=int, default=0)
parser.add_argument("--ema", action="store_true",
                    help="also compare the moving averages (--save-ema)")
parser.add_argument("args", nargs=argparse.REMAINDER)
a = parser.parse_args()
extra = [x for x in a.args if x != "--"]
os.makedirs(a.dir, exist_ok=True)
launcher = shlex.split(a.launcher)
base = launcher + [a.tool, a.model] + extra
ck = os.path.join(a.dir, "ck")


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(cmd, what):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        fail("%s exited %d:\n%s%s" % (what, p.returncode, p.stdout, p.stderr))
    return p.stdout


full = os.path.join(a.dir, "full.safetensors")
resumed = os.path.join(a.dir, "resumed.safetensors")
full_ema = os.path.join(a.dir, "full-ema.safetensors")
resumed_ema = os.path.join(a.dir, "resumed-ema.safetensors")
for f in [full, resumed, full_ema, resumed_ema]:
    if os.path.exists(f):
        os.remove(f)
subprocess.run(["rm", "-rf", ck])
full_ck = os.path.join(a.dir, "full-ck")
subprocess.run(["rm", "-rf", full_ck])
run(base + ["--checkpoint-dir", full_ck, "--save-params", full] + (["--save-ema", full_ema] if a.ema else []),
    "the uninterrupted run")

stopped = base + ["--checkpoint-dir", ck, "--pause-after-micro-batch", a.pause]
if a.every:
    stopped += ["--checkpoint-every", str(a.every)]
err_path = os.path.join(a.dir, "stopped.err")
with open(err_path, "w") as err:
    proc = subprocess.Popen(stopped, stdout=subprocess.PIPE, stderr=err,
                            text=True)
    pid = None
    deadline = time.time() + 300
    while pid is None and time.time() < deadline and proc.poll() is None:
        for line in open(err_path):
            if "paused after micro-batch" in line:
                pid = int(line.split("(pid ")[1].split(")")[0])
        time.sleep(0.1)
    if pid is None:
        proc.kill()
        fail("the run never paused:\n" + open(err_path).read())
    os.kill(pid, signal.SIGTERM if a.signal == "TERM" else signal.SIGKILL)
    out, _ = proc.communicate(timeout=300)
step, k = a.pause.split(":")
if a.signal == "TERM":
    if proc.returncode != 0:
        fail("the stopped run exited %d:\n%s%s" % (proc.returncode, out,
                                                    open(err_path).read()))
    expected = "stopped by SIGTERM after micro-batch %s of " % k
    lines = [l for l in out.splitlines() if expected in l]
    if not lines or ("of optimizer step %s; checkpoint written to " % step) not in lines[0]:
        fail("no line saying where the checkpoint went:\n" + out)
    print("stopped: " + lines[0].split("gacc-run: ")[-1])
else:
    if proc.returncode == 0:
        fail("the killed run exited 0")
    print("killed after micro-batch %s of optimizer step %s" % (k, step))

out = run(base + ["--resume", ck, "--save-params", resumed] +
          (["--save-ema", resumed_ema] if a.ema else []), "the resumed run")
print("resumed: " + [l for l in out.splitlines() if "resumed from" in l][0]
      .split("gacc-run: ")[-1])
if open(full, "rb").read() != open(resumed, "rb").read():
    fail("the resumed run's parameters differ from the uninterrupted run's")
if a.ema and open(full_ema, "rb").read() != open(resumed_ema, "rb").read():
    fail("the resumed run's moving averages differ from the uninterrupted run's")
print("BIT-IDENTICAL")

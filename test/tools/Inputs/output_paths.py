"""gacc-run's outputs through symbolic links, FIFOs and /dev/stdout: a link
is written through to its target (and stays a link), a FIFO is written in
place (and stays a FIFO), /dev/stdout writes into what standard output is
redirected to or piped into, alone: the progress lines go to standard
error then. Prints OUTPUT PATHS OK, or the
first failure and exits 1."""
import argparse
import json
import os
import stat
import subprocess
import sys
import threading

parser = argparse.ArgumentParser()
parser.add_argument("--tool", required=True, help="the gacc-run binary")
parser.add_argument("--model", required=True)
parser.add_argument("--dir", required=True)
args = parser.parse_args()
os.makedirs(args.dir, exist_ok=True)
os.chdir(args.dir)


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(extra, stdout=subprocess.PIPE):
    cmd = [args.tool, args.model, "--max-steps", "2", "--log-every", "1",
           "--no-eval"] + extra
    p = subprocess.run(cmd, stdout=stdout, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        fail("%s exited %d: %s" % (" ".join(cmd), p.returncode, p.stderr))
    return p


def rows(text):
    return [json.loads(l) for l in text.splitlines() if l.startswith("{")]


def is_safetensors(data):
    n = int.from_bytes(data[:8], "little")
    return len(data) > 8 + n and b"fc1_weight" in data[8:8 + n]


# A link to an existing regular file and a dangling link: written through.
os.makedirs("real", exist_ok=True)
open("real/params.safetensors", "w").write("old")
for name in ["link.safetensors", "dangling.safetensors", "metrics-link.jsonl"]:
    if os.path.lexists(name):
        os.remove(name)
os.symlink("real/params.safetensors", "link.safetensors")
os.symlink("real/new.safetensors", "dangling.safetensors")
os.symlink("real/metrics.jsonl", "metrics-link.jsonl")
run(["--save-params", "link.safetensors", "--save-gradients",
     "dangling.safetensors", "--metrics", "metrics-link.jsonl"])
for link, target in [("link.safetensors", "real/params.safetensors"),
                     ("dangling.safetensors", "real/new.safetensors"),
                     ("metrics-link.jsonl", "real/metrics.jsonl")]:
    if not os.path.islink(link):
        fail(link + " was replaced by a regular file")
    if not os.path.isfile(target):
        fail(target + " (the target of " + link + ") was not written")
if not is_safetensors(open("real/params.safetensors", "rb").read()):
    fail("real/params.safetensors does not hold the parameters")
if [r.get("step") for r in rows(open("real/metrics.jsonl").read())][:2] != [1, 2]:
    fail("real/metrics.jsonl does not hold the rows of steps 1 and 2")
print("links: written through to their targets")

# FIFOs: written in place, read by another thread.
for name in ["metrics.fifo", "params.fifo"]:
    if os.path.lexists(name):
        os.remove(name)
    os.mkfifo(name)
received = {}


def reader(name):
    with open(name, "rb") as f:
        received[name] = f.read()


threads = [threading.Thread(target=reader, args=(n,))
           for n in ["metrics.fifo", "params.fifo"]]
for t in threads:
    t.start()
run(["--metrics", "metrics.fifo", "--save-params", "params.fifo"])
for t in threads:
    t.join(timeout=60)
for name in ["metrics.fifo", "params.fifo"]:
    if not stat.S_ISFIFO(os.lstat(name).st_mode):
        fail(name + " is no longer a FIFO")
if len(rows(received.get("metrics.fifo", b"").decode())) < 3:
    fail("the metrics FIFO did not receive the step rows and the summary")
if not is_safetensors(received.get("params.fifo", b"")):
    fail("the parameters FIFO did not receive the safetensors file")
print("FIFOs: written in place")

# /dev/stdout redirected to a file, or a pipe: it holds the output alone,
# and the progress lines go to standard error.
with open("stdout.txt", "w") as out:
    p = run(["--metrics", "/dev/stdout"], stdout=out)
text = open("stdout.txt").read()
lines = text.splitlines()
if len(lines) < 3 or len(rows(text)) != len(lines):
    fail("stdout.txt holds more than the metrics rows:\n" + text)
if "step     2" not in p.stderr:
    fail("the progress lines are not on standard error:\n" + p.stderr)
p = run(["--metrics", "/dev/stdout"])
if len(rows(p.stdout)) != len(p.stdout.splitlines()) or "step     2" not in p.stderr:
    fail("piped standard output holds more than the metrics rows:\n" + p.stdout)
with open("stdout.safetensors", "wb") as out:
    run(["--save-params", "/dev/stdout"], stdout=out)
data = open("stdout.safetensors", "rb").read()
if not is_safetensors(data):
    fail("--save-params /dev/stdout is not a safetensors file: %r" % data[:80])
run(["--load-params", "stdout.safetensors", "--max-steps", "0"])
print("/dev/stdout: the output alone, the progress lines on standard error")
print("OUTPUT PATHS OK")

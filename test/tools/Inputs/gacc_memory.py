"""The memory gacc-run uses (the machine's, or its container's limit), in
bytes, read from its refusal of a step too large for it on standard input
("... more than the 23.54 GiB of memory this process may use ..."): what
the generators of steps that must not fit size themselves by."""
import re
import sys


def from_stdin():
    found = re.search(r"more than the ([0-9.]+) (MiB|GiB) of memory",
                      sys.stdin.read())
    if not found:
        sys.exit("no memory figure from gacc-run on stdin")
    return float(found.group(1)) * {"MiB": 2**20, "GiB": 2**30}[found.group(2)]

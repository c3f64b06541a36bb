"""Reads gacc-run --help on standard input and README.md (argv[1]): prints
how many options --help lists and those that no row of the README's option
table names in its first cell, --help and --version aside."""
import re
import sys

rows = [line.split(" | ")[0] for line in open(sys.argv[1])
        if line.startswith("| `-")]
listed = set(re.findall(r"^  (--?[a-z0-9][a-z0-9-]*)", sys.stdin.read(), re.M))
options = sorted(listed - {"--help", "--help-list", "--version"})
absent = [o for o in options
          if not any(re.search(r"[\s`,]" + re.escape(o) + r"([\s=`\\]|$)", row)
                     for row in rows)]
print("options:", len(options))
print("missing from the README:", " ".join(absent) or "none")

"""Runs a command with its address space limited (RLIMIT_AS) to the given
number of GiB, so that an allocation beyond it fails as it would on a
smaller machine: python3 with_memory_limit.py GIB COMMAND ARGS..."""
import os
import resource
import sys

limit = int(float(sys.argv[1]) * 2**30)
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
os.execvp(sys.argv[2], sys.argv[2:])

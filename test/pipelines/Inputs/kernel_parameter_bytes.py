"""Prints the most bytes of parameters any outlined kernel (gpu.func) of
the IR on stdin takes, as the LLVM lowering passes them: a memref as
(3 + 2 * rank) 8-byte fields, any other argument as 8 bytes (an upper
bound; the kernels here take index and memrefs)."""
import re
import sys

most = 0
for line in sys.stdin:
    head = re.match(r"\s*gpu\.func @\w+\((.*?)\) kernel", line)
    if not head:
        continue
    total = 0
    for arg in re.findall(r"%arg\d+: (memref<[^>]*>|[^,]+)", head.group(1)):
        if arg.startswith("memref<"):
            shape = arg[len("memref<"):].split(",")[0].split("x")[:-1]
            total += (3 + 2 * len(shape)) * 8
        else:
            total += 8
    most = max(most, total)
print("most kernel parameter bytes:", most, "over 4352:", most > 4352)

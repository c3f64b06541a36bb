"""Writes one safetensors file per rule of the format gacc enforces, each
breaking that rule only: overlapping data offsets, a gap, bytes after the
last tensor, a name that appears twice, metadata that is not strings, a
header longer than the file."""
import os
import struct
import sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def write(name, header_json, data):
    h = header_json.encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(os.path.join(out, name), "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + data)


def entry(name, shape, begin, end):
    return '"%s": {"dtype": "F32", "shape": %s, "data_offsets": [%d, %d]}' % (
        name, shape, begin, end)


floats = struct.pack("<4f", 1, 2, 3, 4)
# b starts inside a: both read bytes 4..8.
write("overlap.safetensors",
      "{" + entry("a", "[2]", 0, 8) + ", " + entry("b", "[2]", 4, 12) + "}",
      floats[:12])
# 4 bytes between a and b belong to no tensor.
write("gap.safetensors",
      "{" + entry("a", "[1]", 0, 4) + ", " + entry("b", "[2]", 8, 16) + "}",
      floats)
# The tensors cover 8 of 16 bytes.
write("trailing.safetensors", "{" + entry("a", "[2]", 0, 8) + "}", floats)
# 'a' twice: a JSON parser keeps one of them.
write("duplicate.safetensors",
      "{" + entry("a", "[2]", 0, 8) + ", " + entry("a", "[2]", 8, 16) + "}",
      floats)
# __metadata__ maps strings to strings: a number is not one.
write("metadata.safetensors",
      '{"__metadata__": {"format": 5}, ' + entry("a", "[2]", 0, 8) + "}",
      floats[:8])
# The header claims more bytes than the file has.
with open(os.path.join(out, "short.safetensors"), "wb") as f:
    f.write(struct.pack("<Q", 4096) + b"{}")
print("written")

"""Writes S samples of T random tokens in [0, V) as a safetensors file for
gacc-run --dataset tensors: input0 (the tokens) and input1 (the targets),
both int32 [S, T], drawn from Python's random.Random(seed). Python alone (no
numpy), so it runs wherever python3 does.

Usage: python3 bench/random_tokens.py OUT.safetensors [S] [T] [V] [seed]"""
import array
import json
import random
import struct
import sys


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    S, T, V, seed = (int(a) for a in (sys.argv[2:] + ["64", "1024", "50304", "0"][len(sys.argv) - 2:])[:4])
    rng = random.Random(seed)
    data, header, offset = [], {}, 0
    for name in ("input0", "input1"):
        values = array.array("i", (rng.randrange(V) for _ in range(S * T)))
        raw = values.tobytes()  # little-endian on every machine gacc runs on
        header[name] = {"dtype": "I32", "shape": [S, T], "data_offsets": [offset, offset + len(raw)]}
        data.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(out, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(data))


if __name__ == "__main__":
    main()

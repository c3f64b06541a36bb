"""Writes a Fashion-MNIST-shaped data set (input0 [64, 784] f32 features,
input1 [64] i32 labels) whose feature [5, 17] is NaN, and fashion_mlp
parameters whose fc2_bias[3] is +inf (the others zero)."""
import json
import os
import struct
import sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def save(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, (dtype, shape, fmt, values) in tensors.items():
        blob = struct.pack("<%d%s" % (len(values), fmt), *values)
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [offset, offset + len(blob)]}
        offset += len(blob)
        blobs.append(blob)
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


features = [0.5] * (64 * 784)
features[5 * 784 + 17] = float("nan")
save(os.path.join(out, "nan-data.safetensors"), {
    "input0": ("F32", [64, 784], "f", features),
    "input1": ("I32", [64], "i", [i % 10 for i in range(64)])})
bias = [0.0] * 10
bias[3] = float("inf")
save(os.path.join(out, "inf-params.safetensors"), {
    "fc1_weight": ("F32", [256, 784], "f", [0.0] * (256 * 784)),
    "fc1_bias": ("F32", [256], "f", [0.0] * 256),
    "fc2_weight": ("F32", [10, 256], "f", [0.0] * 2560),
    "fc2_bias": ("F32", [10], "f", bias)})
print("written")

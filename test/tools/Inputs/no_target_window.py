"""Writes a Fashion-MNIST-shaped data set of 512 samples (input0 [512, 784]
f32, input1 [512] i32) whose samples 256..511 all have the ignore_index
-100 as their label, and the order file 0..511: with fashion_mlp's 8 × 32
window, the second window holds no target."""
import json
import os
import struct
import sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
features = struct.pack("<%df" % (512 * 784),
                       *[((i * 7919) % 256) / 255.0 for i in range(512 * 784)])
labels = struct.pack("<512i", *[i % 10 if i < 256 else -100 for i in range(512)])
header = {"input0": {"dtype": "F32", "shape": [512, 784],
                     "data_offsets": [0, len(features)]},
          "input1": {"dtype": "I32", "shape": [512],
                     "data_offsets": [len(features), len(features) + len(labels)]}}
h = json.dumps(header).encode()
h += b" " * ((8 - len(h) % 8) % 8)
with open(os.path.join(out, "data.safetensors"), "wb") as f:
    f.write(struct.pack("<Q", len(h)) + h + features + labels)
with open(os.path.join(out, "order.txt"), "w") as f:
    f.write("\n".join(str(i) for i in range(512)) + "\n")
print("written")

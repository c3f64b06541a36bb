"""PyTorch's side of bench/cpu-vision.sh: the optimizer step of
examples/fashion_cnn.mlir (BatchNorm) or fashion_cnn_groupnorm.mlir (group
norm) in PyTorch 1.13 eager on the CPU, with the schedule of
../shared/anchors/torch_fashion_cnn.py (N = 8 micro-batches of 32, SGD lr
0.05 momentum 0.9, 2 threads): the median ms per optimizer step over STEPS
steps after 3 warm-up steps.

Usage: /usr/bin/python3 bench/torch_fashion_cnn.py [batch|group] [STEPS]"""
import gzip
import statistics
import sys
import time

import numpy as np
import torch

torch.set_num_threads(2)
torch.manual_seed(0)
norm = sys.argv[1] if len(sys.argv) > 1 else "batch"
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 30
D = "/usr/share/datasets/fashion-mnist/"
x = torch.tensor(np.frombuffer(gzip.open(D + "train-images-idx3-ubyte.gz").read(), np.uint8, offset=16)
                 .reshape(-1, 1, 28, 28) / 255.0, dtype=torch.float32)
y = torch.tensor(np.frombuffer(gzip.open(D + "train-labels-idx1-ubyte.gz").read(), np.uint8, offset=8)
                 .astype(np.int64))
nn = torch.nn


def norm_layer(c):
    return nn.BatchNorm2d(c) if norm == "batch" else nn.GroupNorm(8, c)


model = nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), norm_layer(32), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Conv2d(32, 64, 3, padding=1), norm_layer(64), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Flatten(), nn.Linear(3136, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
f = nn.CrossEntropyLoss()
N, m = 8, 32
perm = torch.randperm(len(x))
times = []
for s in range(steps + 3):
    t0 = time.perf_counter()
    w = perm[s * N * m:(s + 1) * N * m]
    for k in range(0, len(w), m):
        (f(model(x[w[k:k + m]]), y[w[k:k + m]]) * m / len(w)).backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    times.append(time.perf_counter() - t0)
print(f"median_step_ms {1e3 * statistics.median(times[3:]):.2f}")

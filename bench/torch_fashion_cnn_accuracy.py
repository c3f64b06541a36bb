"""PyTorch's side of bench/cpu-vision-accuracy.sh: examples/fashion_cnn.mlir's
whole recipe in PyTorch 1.13 eager on the CPU (2 threads), as
../shared/anchors/torch_fashion_cnn.py with the example's learning-rate
schedule: linear warm-up over the first 100 optimizer steps (lr · (t + 1) /
100), then a cosine from 0.05 to 0 over the remaining 605 (gacc's
#gacc.lr_schedule formula). N = 8 micro-batches of 32, SGD lr 0.05
momentum 0.9, 3 epochs; the loss of each micro-batch weighted by its share
of the window. Prints the test accuracy after each epoch.

Usage: /usr/bin/python3 bench/torch_fashion_cnn_accuracy.py [SEED] [EPOCHS]"""
import gzip
import math
import sys

import numpy as np
import torch

seed = int(sys.argv[1]) if len(sys.argv) > 1 else 0
epochs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
torch.set_num_threads(2)
torch.manual_seed(seed)
D = "/usr/share/datasets/fashion-mnist/"


def idx(name, off):
    return np.frombuffer(gzip.open(D + name).read(), np.uint8, offset=off)


def images(name):
    return torch.tensor(idx(name, 16).reshape(-1, 1, 28, 28) / 255.0, dtype=torch.float32)


xtr, xte = images("train-images-idx3-ubyte.gz"), images("t10k-images-idx3-ubyte.gz")
ytr = torch.tensor(idx("train-labels-idx1-ubyte.gz", 8).astype(np.int64))
yte = torch.tensor(idx("t10k-labels-idx1-ubyte.gz", 8).astype(np.int64))
nn = torch.nn
model = nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Flatten(), nn.Linear(3136, 10))
N, m, lr, warmup, decay = 8, 32, 0.05, 100, 605


def rate(t):
    if t < warmup:
        return lr * (t + 1) / warmup
    return lr * (1 + math.cos(math.pi * min(1.0, (t - warmup) / decay))) / 2


opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
f = nn.CrossEntropyLoss()
t = 0
for ep in range(epochs):
    model.train()
    perm = torch.randperm(len(xtr))
    for s in range(0, len(xtr), N * m):
        for g in opt.param_groups:
            g["lr"] = rate(t)
        w = perm[s:s + N * m]
        for k in range(0, len(w), m):
            (f(model(xtr[w[k:k + m]]), ytr[w[k:k + m]]) * len(w[k:k + m]) / len(w)).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        t += 1
    model.eval()
    with torch.no_grad():
        acc = (model(xte).argmax(1) == yte).float().mean().item()
    print(f"epoch {ep + 1} test_accuracy {acc:.4f}", flush=True)

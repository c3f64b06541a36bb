"""Independent float64 reference of gacc's Fashion-MNIST MLP optimizer steps.

Reads the IDX files with gzip + numpy, the initial parameters (safetensors)
and the sample order, then runs the large-batch step in PyTorch float64:
loss = cross_entropy(model(x), y, reduction='mean') over each window of the
order (256 samples per optimizer step; a shorter last window is averaged
over what it holds), torch.optim.SGD(lr, momentum). Compares the final
parameters and per-step losses with gacc's (safetensors + metrics JSON
lines) and prints the maximum relative differences; exits 1 above --tol.

Relative difference of a tensor: max|a − b| / max|b| (b the reference).
"""
import argparse
import json
import sys

import numpy as np
import torch

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import safetensors_io  # noqa: E402
from torch_parity import read_idx  # noqa: E402


def rel(a, b):
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-30))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--init", required=True)
    p.add_argument("--order", required=True)
    p.add_argument("--effective-batch", type=int, default=256)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--tol", type=float, default=1e-5)
    p.add_argument("--gacc", nargs="+", default=[],
                   help="PARAMS.safetensors[:METRICS.jsonl] of gacc runs")
    args = p.parse_args()

    images = read_idx(f"{args.data}/train-images-idx3-ubyte.gz").reshape(-1, 784)
    labels = read_idx(f"{args.data}/train-labels-idx1-ubyte.gz")
    order = [int(l) for l in open(args.order) if l.strip()]
    init = safetensors_io.load(args.init)

    torch.set_default_dtype(torch.float64)
    names = ["fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"]
    params = [torch.tensor(init[n].astype(np.float64), requires_grad=True) for n in names]
    opt = torch.optim.SGD(params, lr=args.lr, momentum=args.momentum)
    losses = []
    for start in range(0, len(order), args.effective_batch):
        idx = order[start:start + args.effective_batch]
        x = torch.tensor(images[idx].astype(np.float64) / 255.0)
        y = torch.tensor(labels[idx].astype(np.int64))
        w1, b1, w2, b2 = params
        logits = torch.relu(x @ w1.T + b1) @ w2.T + b2
        loss = torch.nn.functional.cross_entropy(logits, y, reduction="mean")
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    ref = {n: t.detach().numpy() for n, t in zip(names, params)}

    ok = True
    for spec in args.gacc:
        path, _, metrics = spec.partition(":")
        got = safetensors_io.load(path)
        worst = max(rel(got[n].astype(np.float64), ref[n]) for n in names)
        line = f"{path.rsplit('/', 1)[-1]}: max relative parameter difference vs float64 reference {worst:.2e}"
        ok &= worst <= args.tol
        if metrics:
            steps = [json.loads(l) for l in open(metrics) if '"loss"' in l]
            lw = max(abs(s["loss"] - losses[s["step"] - 1]) / abs(losses[s["step"] - 1]) for s in steps)
            line += f", loss {lw:.2e} over {len(steps)} steps"
            ok &= lw <= args.tol
        print(line)
    print(f"reference: {len(losses)} optimizer steps, losses " + " ".join(f"{l:.6f}" for l in losses))
    print("REFERENCE MATCH" if ok else "REFERENCE MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

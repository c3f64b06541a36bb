"""PyTorch parity of gacc training runs.

Replays, in float64 PyTorch, the standard gradient-accumulation loop written
correctly: for every optimizer step the window's normalization count (its
samples for `mean`, its non-ignored targets for `token_mean`, 1 for `sum`)
is known, each
micro-batch's summed loss is divided by it and back-propagated, and one
torch.optim.SGD step follows the N-th micro-batch. Starting from gacc's
initial parameters (safetensors) and the same sample order, it compares the
per-step losses (gacc-run --metrics) and the final parameters
(--save-params), printing the maximum relative differences
(max|a − b| / max|b|) and exiting 1 above --tol.

With --naive it also replays the common faulty loop (each micro-batch's
loss averaged over its own count, then divided by N) and prints how far
that is from gacc: the number a framework user would silently get.

Models: fashion_mlp (examples/fashion_mlp.mlir on Fashion-MNIST),
kjv_char (examples/kjv_char.mlir on KJV characters) and seq (the
embedding / linear / gelu / layer_norm / cross-entropy model of
seq_model.mlir on a tensors file).
"""
import argparse
import gzip
import json
import subprocess
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import safetensors_io  # noqa: E402

IGNORE = -100


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def fashion_data(args):
    images = read_idx(f"{args.data}/train-images-idx3-ubyte.gz").reshape(-1, 784)
    labels = read_idx(f"{args.data}/train-labels-idx1-ubyte.gz")

    def sample(i):
        return images[i].astype(np.float64) / 255.0, np.int64(labels[i])
    return sample


def kjv_data(args, seq_len):
    if args.data:
        lines = open(args.data).read().split("\n")
    else:
        lines = subprocess.run(["bible", "-f", "Gen1:1-Rev22:21"], capture_output=True,
                               check=True).stdout.decode("latin-1").split("\n")
    verses = []
    for l in lines:
        l = l.rstrip("\r")
        head, _, rest = l.partition(" ")
        if rest and ":" in head and head[-1].isdigit():
            l = rest
        l = l.strip()
        if l:
            verses.append(l.encode("latin-1"))
    vocab = sorted(set(b"".join(verses)))
    index = {c: i for i, c in enumerate(vocab)}
    train = [v for i, v in enumerate(verses) if i % 20 != 19 and len(v) >= 2]

    def sample(i):
        ids = [index[c] for c in train[i]]
        tok = np.zeros(seq_len, np.int64)
        tgt = np.full(seq_len, IGNORE, np.int64)
        tok[:len(ids) - 1] = ids[:-1]
        tgt[:len(ids) - 1] = ids[1:]
        return tok, tgt
    return sample


def tensors_data(args):
    t = safetensors_io.load(args.data)

    def sample(i):
        return t["input0"][i], t["input1"][i].astype(np.int64)
    return sample


def forward(model, p, x):
    if model == "fashion_mlp":
        h = F.relu(F.linear(x, p["fc1_weight"], p["fc1_bias"]))
        return F.linear(h, p["fc2_weight"], p["fc2_bias"])
    if model == "kjv_char":
        e = F.embedding(x, p["embedding"])
        a = F.gelu(F.linear(e, p["fc1_weight"], p["fc1_bias"]), approximate="tanh")
        n = F.layer_norm(a, a.shape[-1:], p["ln_weight"], p["ln_bias"], eps=1e-5)
        return F.linear(n, p["fc2_weight"], p["fc2_bias"])
    if model == "seq":
        e = F.embedding(x, p["embedding"])
        a = F.gelu(F.linear(e, p["w1"], p["b1"]), approximate="none")
        n = F.layer_norm(a, a.shape[-1:], p["ln_w"], p["ln_b"], eps=1e-5)
        return F.linear(n, p["w2"], p["b2"])
    raise ValueError(model)


def summed_loss(logits, y):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1),
                           ignore_index=IGNORE, reduction="sum")


def count(y, normalization):
    """The normalization count of targets y: non-ignored targets
    (token_mean), samples with a non-ignored target (mean), or 1 (sum)."""
    if normalization == "sum":
        return 1
    y = y.reshape(y.shape[0], -1)
    valid = y != IGNORE
    return int(valid.sum()) if normalization == "token_mean" else int(valid.any(dim=1).sum())


def replay(args, sample, init, order, naive):
    torch.set_default_dtype(torch.float64)
    p = {k: torch.tensor(v.astype(np.float64), requires_grad=True) for k, v in init.items()}
    opt = torch.optim.SGD(list(p.values()), lr=args.lr, momentum=args.momentum)
    eff = args.accum_steps * args.micro_batch
    losses = []
    for start in range(0, len(order), eff):
        if args.steps and len(losses) == args.steps:
            break
        window = order[start:start + eff]
        xs, ys = zip(*[sample(i) for i in window])
        x, y = torch.tensor(np.stack(xs)), torch.tensor(np.stack(ys))
        n_window = max(count(y, args.normalization), 1)
        opt.zero_grad()
        total = 0.0
        for k in range(0, len(window), args.micro_batch):
            xm, ym = x[k:k + args.micro_batch], y[k:k + args.micro_batch]
            loss = summed_loss(forward(args.model, p, xm), ym)
            if naive:  # the faulty loop: per-micro-batch mean, then / N
                loss = loss / max(count(ym, args.normalization), 1) / args.accum_steps
            else:
                loss = loss / n_window
            loss.backward()
            total += loss.item()
        opt.step()
        losses.append(total)
    return {k: v.detach().numpy() for k, v in p.items()}, losses


def rel(a, b):
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-30))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True, choices=["fashion_mlp", "kjv_char", "seq"])
    ap.add_argument("--data", default="")
    ap.add_argument("--init", required=True)
    ap.add_argument("--order", required=True)
    ap.add_argument("--params", required=True)
    ap.add_argument("--metrics", required=True)
    ap.add_argument("--accum-steps", type=int, required=True)
    ap.add_argument("--micro-batch", type=int, required=True)
    ap.add_argument("--seq-len", type=int, default=527)
    ap.add_argument("--lr", type=float, required=True)
    ap.add_argument("--momentum", type=float, default=0.9)
    ap.add_argument("--normalization", default="mean", choices=["mean", "sum", "token_mean"])
    ap.add_argument("--steps", type=int, default=0)
    ap.add_argument("--naive", action="store_true")
    ap.add_argument("--tol", type=float, default=1e-5)
    args = ap.parse_args()

    if args.model == "fashion_mlp":
        sample = fashion_data(args if args.data else argparse.Namespace(
            data="/usr/share/datasets/fashion-mnist"))
    elif args.model == "kjv_char":
        sample = kjv_data(args, args.seq_len)
    else:
        sample = tensors_data(args)
    init = safetensors_io.load(args.init)
    order = [int(l) for l in open(args.order) if l.strip()]
    got = safetensors_io.load(args.params)
    steps = [json.loads(l) for l in open(args.metrics) if '"loss"' in l]

    ref, losses = replay(args, sample, init, order, naive=False)
    p_err = max(rel(got[k].astype(np.float64), ref[k]) for k in ref)
    l_err = max(abs(s["loss"] - losses[s["step"] - 1]) / abs(losses[s["step"] - 1]) for s in steps)
    print(f"{args.model}: {len(losses)} optimizer steps of {args.accum_steps} x {args.micro_batch}; "
          f"gacc vs PyTorch float64: max relative difference of per-step losses {l_err:.2e} "
          f"({len(steps)} steps), of final parameters {p_err:.2e}")
    ok = p_err <= args.tol and l_err <= args.tol and len(steps) == len(losses)
    if args.naive:
        naive, _ = replay(args, sample, init, order, naive=True)
        n_err = max(rel(naive[k], ref[k]) for k in ref)
        g_err = p_err
        print(f"naive per-micro-batch mean vs the large batch: {n_err:.2e}; gacc vs the large batch: {g_err:.2e}")
        ok &= n_err > 100 * max(g_err, 1e-12)
    print("PARITY OK" if ok else "PARITY FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

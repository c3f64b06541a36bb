"""PyTorch parity of gacc training runs.

Replays, in float64 PyTorch, the standard gradient-accumulation loop written
correctly: for every optimizer step the window's normalization count (its
samples for `mean`, its non-ignored targets for `token_mean`, 1 for `sum`)
is known, each
micro-batch's summed loss is divided by it and back-propagated, and one
torch.optim.SGD step follows the N-th micro-batch. Starting from gacc's
initial parameters (safetensors) and the same sample order, it compares the
per-step losses (gacc-run --metrics) and the final parameters
(--save-params), printing the maximum relative differences (per tensor,
norm-wise ‖a − b‖/‖b‖, and element-wise max|a − b|/max|b| for information)
and exiting 1 above --tol.

With --naive it also replays the common faulty loop (each micro-batch's
loss averaged over its own count, then divided by N) and prints how far
that is from gacc: the number a framework user would silently get.

Models: fashion_mlp, fashion_residual_mlp and fashion_linalg_mlp
(examples/fashion_*.mlir on Fashion-MNIST),
kjv_char (examples/kjv_char.mlir on KJV characters), seq (the
embedding / linear / gelu / layer_norm / cross-entropy model of
seq_model.mlir on a tensors file) and the transformer models (gpt, gpt_lora,
and gpt_dropout, whose dropout masks this script draws from its own Philox
4x32-10 with gacc.dropout's key).
"""
import argparse
import gzip
import json
import math
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
        x = t["input0"][i]
        x = x.astype(np.float64) if np.issubdtype(x.dtype, np.floating) else x
        return x, t["input1"][i].astype(np.int64)
    return sample


def forward(model, p, x):
    if model == "fashion_mlp":
        h = F.relu(F.linear(x, p["fc1_weight"], p["fc1_bias"]))
        return F.linear(h, p["fc2_weight"], p["fc2_bias"])
    if model == "fashion_residual_mlp":
        h = F.relu(F.linear(x, p["fc1_weight"], p["fc1_bias"]))
        s = h + F.relu(F.linear(h, p["res_weight"], p["res_bias"]))
        return F.linear(s, p["fc2_weight"], p["fc2_bias"])
    if model == "fashion_linalg_mlp":
        h = F.relu(x @ p["fc1_weight"] + p["fc1_bias"])
        return h @ p["fc2_weight"] + p["fc2_bias"]
    if model == "kjv_char":
        e = F.embedding(x, p["embedding"])
        a = F.gelu(F.linear(e, p["fc1_weight"], p["fc1_bias"]), approximate="tanh")
        n = F.layer_norm(a, a.shape[-1:], p["ln_weight"], p["ln_bias"], eps=1e-5)
        return F.linear(n, p["fc2_weight"], p["fc2_bias"])
    if model == "cnn":
        h = F.conv2d(x, p["conv1_weight"], p["conv1_bias"], stride=2, padding=1, groups=2)
        h = F.relu(F.group_norm(h, 2, p["gn_weight"], p["gn_bias"], eps=1e-5))
        h = F.conv2d(h, p["conv2_weight"], None, padding=2, dilation=2)
        h = F.max_pool2d(h, 3, stride=2, padding=1)
        h = F.avg_pool2d(h, 2, stride=1, padding=1)
        return F.linear(h.mean(dim=(2, 3)), p["fc_weight"], p["fc_bias"])
    if model == "bn_cnn":
        h = F.conv2d(x, p["conv1_weight"], p["conv1_bias"], padding=1)
        # per_micro_batch: torch's own update, once per micro-batch.
        h = F.batch_norm(h, STATS["bn1_running_mean"], STATS["bn1_running_var"], p["bn1_weight"],
                         p["bn1_bias"], training=True, momentum=0.1, eps=1e-5)
        h = F.max_pool2d(F.relu(h), 3, stride=3).mean(dim=(2, 3))
        h = F.linear(h, p["fc1_weight"], p["fc1_bias"])
        # per_window: normalized by the micro-batch, statistics kept for the window.
        WINDOW["bn2"].append(h.detach())
        h = F.batch_norm(h, None, None, p["bn2_weight"], p["bn2_bias"], training=True, eps=1e-5)
        return F.linear(F.relu(h), p["fc_weight"], p["fc_bias"])
    if model in ("gpt", "gpt_lora", "gpt_dropout"):
        lora = model == "gpt_lora"
        drop = dropout if model == "gpt_dropout" else (lambda h, p, stream: h)

        def linear(x, name):  # with LoRA: + (alpha/r)·(x·Aᵀ)·Bᵀ, alpha/r = 2
            y = F.linear(x, p[name + "_w"], p[name + "_b"])
            if lora:
                key = {"attn": "qkv", "proj": "proj"}[name]
                y = y + 2.0 * F.linear(F.linear(x, p[f"lora_{key}_a"]), p[f"lora_{key}_b"])
            return y
        m, t = x.shape
        h = drop(F.embedding(x, p["wte"]) + p["wpe"], 0.1, 0)
        a = F.layer_norm(h, (8,), p["ln1_w"], p["ln1_b"], eps=1e-5)
        q, k, v = linear(a, "attn").split(8, dim=-1)
        q, k, v = (z.reshape(m, t, 2, 4).transpose(1, 2) for z in (q, k, v))
        s = q @ k.transpose(-1, -2) / math.sqrt(4)
        s = s.masked_fill(torch.ones(t, t, dtype=torch.bool).triu(1), float("-inf"))
        o = (torch.softmax(s, dim=-1) @ v).transpose(1, 2).reshape(m, t, 8)
        h = h + drop(linear(o, "proj"), 0.2, 1)
        a = F.layer_norm(h, (8,), p["ln2_w"], p["ln2_b"], eps=1e-5)
        a = F.gelu(F.linear(a, p["fc_w"], p["fc_b"]), approximate="tanh")
        h = h + drop(F.linear(a, p["out_w"], p["out_b"]), 0.1, 2)
        h = F.layer_norm(h, (8,), p["lnf_w"], p["lnf_b"], eps=1e-5)
        return F.linear(h, p["wte"])
    if model == "seq":
        e = F.embedding(x, p["embedding"])
        a = F.gelu(F.linear(e, p["w1"], p["b1"]), approximate="none")
        n = F.layer_norm(a, a.shape[-1:], p["ln_w"], p["ln_b"], eps=1e-5)
        return F.linear(n, p["w2"], p["b2"])
    raise ValueError(model)


# The key of gacc.dropout's masks for the micro-batch being replayed: the
# step's seed, the optimizer steps taken and the epoch-order index of the
# micro-batch's first sample.
DROPOUT = {"seed": 0, "step": 0, "first": 0}
PHILOX_M = (0xD2511F53, 0xCD9E8D57)
PHILOX_W = (0x9E3779B9, 0xBB67AE85)


def philox4x32(counter, key):
    """Philox 4x32-10 (Salmon et al. 2011; Random123's reference), written
    here from the paper for numpy arrays of 32-bit counters: the four
    output words."""
    c = [np.asarray(x, dtype=np.uint64) for x in counter]
    k = [int(key[0]), int(key[1])]
    lo32 = np.uint64(0xFFFFFFFF)
    for r in range(10):
        if r:
            k = [(k[0] + PHILOX_W[0]) & 0xFFFFFFFF, (k[1] + PHILOX_W[1]) & 0xFFFFFFFF]
        p0, p1 = np.uint64(PHILOX_M[0]) * c[0], np.uint64(PHILOX_M[1]) * c[2]
        c = [(p1 >> np.uint64(32)) ^ c[1] ^ np.uint64(k[0]), p1 & lo32,
             (p0 >> np.uint64(32)) ^ c[3] ^ np.uint64(k[1]), p0 & lo32]
    return c


assert [int(w[0]) for w in philox4x32([[0]] * 4, (0, 0))] == [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]


def dropout(h, p, stream):
    """gacc.dropout's definition: element e of the sample with epoch-order
    index s is kept when Philox word e mod 4 of counter (e div 4, s, step,
    stream) under key (seed mod 2^32, seed div 2^32) is >= round(p * 2^32);
    kept elements are scaled by 1/(1 - p)."""
    m = h.shape[0]
    per = int(np.prod(h.shape[1:]))
    e = np.tile(np.arange(per, dtype=np.uint64), (m, 1))
    s = np.repeat(np.arange(m, dtype=np.uint64) + np.uint64(DROPOUT["first"]), per).reshape(m, per)
    seed = DROPOUT["seed"]
    words = philox4x32([e >> np.uint64(2), s, np.full_like(e, DROPOUT["step"]), np.full_like(e, stream)],
                       (seed & 0xFFFFFFFF, seed >> 32))
    word = np.choose((e & np.uint64(3)).astype(np.int64), words)
    keep = torch.tensor((word >= np.uint64(round(p * 2**32))).reshape(h.shape))
    return torch.where(keep, h / (1 - p), torch.zeros_like(h))


LABEL_SMOOTHING = 0.0
# Running statistics (buffers, not trained) and, for per_window BatchNorms,
# the inputs of the window so far (bn_cnn).
STATS = {}
WINDOW = {"bn2": []}
# Frozen parameters (--trainable-prefix): no gradient, no update.
FROZEN = set()


def end_window():
    """per_window: the running statistics move once, from the pooled mean
    and unbiased variance of every sample of the window (momentum 0.2)."""
    if WINDOW["bn2"]:
        h = torch.cat(WINDOW["bn2"])
        with torch.no_grad():
            for key, stat in (("bn2_running_mean", h.mean(0)), ("bn2_running_var", h.var(0, unbiased=True))):
                STATS[key].mul_(0.8).add_(stat, alpha=0.2)
        WINDOW["bn2"].clear()


def summed_loss(logits, y):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1),
                           ignore_index=IGNORE, reduction="sum",
                           label_smoothing=LABEL_SMOOTHING)


def count(y, normalization):
    """The normalization count of targets y: non-ignored targets
    (token_mean), samples with a non-ignored target (mean), or 1 (sum)."""
    if normalization == "sum":
        return 1
    y = y.reshape(y.shape[0], -1)
    valid = y != IGNORE
    return int(valid.sum()) if normalization == "token_mean" else int(valid.any(dim=1).sum())


class Lion(torch.optim.Optimizer):
    """Lion (Chen et al. 2023, Algorithm 2, decoupled weight decay); torch
    1.13 has none. State m starts at zero."""

    def __init__(self, params, lr, betas=(0.9, 0.99), weight_decay=0.0):
        super().__init__(params, dict(lr=lr, betas=betas, weight_decay=weight_decay))

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            b1, b2 = group["betas"]
            for p in group["params"]:
                m = self.state[p].setdefault("m", torch.zeros_like(p))
                c = b1 * m + (1 - b1) * p.grad
                p.mul_(1 - group["lr"] * group["weight_decay"])
                p.add_(torch.sign(c), alpha=-group["lr"])
                m.mul_(b2).add_(p.grad, alpha=1 - b2)


def make_optimizer(args, p):
    spec = dict(json.loads(args.optimizer)) if args.optimizer else {
        "name": "sgd", "lr": args.lr, "momentum": args.momentum}
    name = spec.pop("name")
    lr = spec.pop("lr", args.lr)
    no_decay = set(filter(None, args.no_decay.split(",")))
    wd = spec.pop("weight_decay", 0.01 if name == "adamw" else 0.0)
    groups = [{"params": [v for k, v in p.items() if k not in no_decay], "weight_decay": wd},
              {"params": [v for k, v in p.items() if k in no_decay], "weight_decay": 0.0}]
    groups = [g for g in groups if g["params"]]
    if name == "sgd":
        return torch.optim.SGD(groups, lr=lr, **spec)
    betas = (spec.pop("beta1", 0.9), spec.pop("beta2", 0.99 if name == "lion" else 0.999))
    if name == "adam":
        return torch.optim.Adam(groups, lr=lr, betas=betas, **spec)
    if name == "adamw":
        return torch.optim.AdamW(groups, lr=lr, betas=betas, **spec)
    return Lion(groups, lr=lr, betas=betas)


def schedule_lambda(args):
    """#gacc.lr_schedule's factor of the base rate at step t (0-based)."""
    if not args.schedule:
        return None
    s = json.loads(args.schedule)
    w, decay = s.get("warmup_steps", 0), s.get("decay", "constant")
    steps, floor = s.get("decay_steps", 0), s.get("min_lr", 0.0)
    base = json.loads(args.optimizer)["lr"] if args.optimizer else args.lr

    def factor(t):
        if t < w:
            return (t + 1) / w
        if decay == "constant":
            return 1.0
        prog = min(max((t - w) / steps, 0.0), 1.0)
        shape = 0.5 * (1 + math.cos(math.pi * prog)) if decay == "cosine" else 1 - prog
        return (floor + (base - floor) * shape) / base
    return factor


def accum_steps_at(args, t):
    """N of optimizer step t (0-based): --accum-schedule's "STEP:N,..."
    (STEP 1-based), else --accum-steps."""
    n = args.accum_steps
    for item in filter(None, args.accum_schedule.split(",")):
        step, steps = map(int, item.split(":"))
        if t + 1 >= step:
            n = steps
    return n


def replay(args, sample, init, order, naive, clip_per_micro_batch=False):
    torch.set_default_dtype(torch.float64)
    STATS.clear()
    STATS.update({k: torch.tensor(v.astype(np.float64)) for k, v in init.items() if "running_" in k})
    p = {k: torch.tensor(v.astype(np.float64), requires_grad=k not in FROZEN) for k, v in init.items()
         if k not in STATS}
    opt = make_optimizer(args, {k: v for k, v in p.items() if k not in FROZEN})
    lam = schedule_lambda(args)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lam) if lam else None
    losses, rates, norms = [], [], []
    ema = {k: v.detach().clone() for k, v in p.items()}
    start, epoch = 0, 0
    while True:
        if start >= len(order):  # the next epoch, in the same order
            start, epoch = 0, epoch + 1
        if epoch == args.epochs or (args.steps and len(losses) == args.steps):
            break
        n_steps = accum_steps_at(args, len(losses))
        window = order[start:start + (args.effective_batch or n_steps * args.micro_batch)]
        window_start = start
        start += len(window)
        xs, ys = zip(*[sample(i) for i in window])
        x, y = torch.tensor(np.stack(xs)), torch.tensor(np.stack(ys))
        n_window = max(count(y, args.normalization), 1)
        opt.zero_grad()
        total = 0.0
        for k in range(0, len(window), args.micro_batch):
            xm, ym = x[k:k + args.micro_batch], y[k:k + args.micro_batch]
            DROPOUT.update(step=len(losses), first=window_start + k)
            loss = summed_loss(forward(args.model, p, xm), ym)
            if naive:  # the faulty loop: per-micro-batch mean, then / N
                loss = loss / max(count(ym, args.normalization), 1) / n_steps
            else:
                loss = loss / n_window
            if clip_per_micro_batch:  # the faulty loop: clip each micro-batch
                grads_before = [q.grad.clone() if q.grad is not None else torch.zeros_like(q) for q in p.values()]
                for q in p.values():
                    q.grad = None
            loss.backward()
            if clip_per_micro_batch:
                torch.nn.utils.clip_grad_norm_(list(p.values()), args.max_grad_norm)
                for q, g0 in zip(p.values(), grads_before):
                    q.grad += g0
            total += loss.item()
        end_window()
        if args.max_grad_norm and not clip_per_micro_batch:
            norms.append(float(torch.nn.utils.clip_grad_norm_(list(p.values()), args.max_grad_norm)))
        rates.append(opt.param_groups[0]["lr"])
        opt.step()
        if args.ema_decay is not None:  # once per optimizer step
            with torch.no_grad():
                for k, v in p.items():
                    ema[k].mul_(args.ema_decay).add_(v, alpha=1 - args.ema_decay)
        if sched:
            sched.step()
        losses.append(total)
    replay.ema = {k: v.numpy() for k, v in ema.items()}
    replay.stats = {k: v.numpy().copy() for k, v in STATS.items()}
    return {k: v.detach().numpy() for k, v in p.items()}, (losses, rates, norms)


def rel(a, b):
    """Norm-wise relative difference ‖a − b‖₂ / ‖b‖₂ of a tensor."""
    return float(np.linalg.norm((a - b).ravel()) / max(np.linalg.norm(b.ravel()), 1e-30))


def rel_max(a, b):
    """Element-wise: max |a − b| / max |b|."""
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-30))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True,
                    choices=["fashion_mlp", "fashion_residual_mlp", "fashion_linalg_mlp", "kjv_char", "seq", "cnn", "bn_cnn", "gpt", "gpt_lora",
                             "gpt_dropout"])
    ap.add_argument("--data", default="")
    ap.add_argument("--init", required=True)
    ap.add_argument("--order", required=True)
    ap.add_argument("--params", required=True)
    ap.add_argument("--metrics", required=True)
    ap.add_argument("--accum-steps", type=int, required=True)
    ap.add_argument("--micro-batch", type=int, required=True)
    ap.add_argument("--seq-len", type=int, default=527)
    ap.add_argument("--effective-batch", type=int, default=0,
                    help="samples per window (default N x m); the last micro-batch is ragged below N x m")
    ap.add_argument("--epochs", type=int, default=1, help="passes over the order file")
    ap.add_argument("--trainable-prefix", default="",
                    help="only parameters with this prefix train; the others are frozen and must stay bit-identical")
    ap.add_argument("--lr", type=float, required=True)
    ap.add_argument("--momentum", type=float, default=0.9)
    ap.add_argument("--normalization", default="mean", choices=["mean", "sum", "token_mean"])
    ap.add_argument("--steps", type=int, default=0)
    ap.add_argument("--accum-schedule", default="",
                    help="STEP:N,...: N accumulation steps from optimizer step STEP (1-based)")
    ap.add_argument("--naive", action="store_true")
    ap.add_argument("--optimizer", default="", help='JSON, e.g. {"name": "adamw", "lr": 1e-3}')
    ap.add_argument("--schedule", default="", help="JSON of #gacc.lr_schedule's parameters")
    ap.add_argument("--max-grad-norm", type=float, default=0.0)
    ap.add_argument("--no-decay", default="", help="comma-separated parameters without weight decay")
    ap.add_argument("--tol", type=float, default=1e-5)
    ap.add_argument("--ema-decay", type=float, default=None,
                    help="the step's ema_decay: compare --ema with the moving average")
    ap.add_argument("--ema", default="", help="gacc-run --save-ema output")
    ap.add_argument("--label-smoothing", type=float, default=0.0,
                    help="torch.nn.functional.cross_entropy's label_smoothing")
    ap.add_argument("--seed", type=int, default=0, help="the step's seed (gacc.dropout's key)")
    args = ap.parse_args()
    DROPOUT["seed"] = args.seed
    if args.trainable_prefix:
        FROZEN.update(k for k in safetensors_io.load(args.init) if not k.startswith(args.trainable_prefix))
    global LABEL_SMOOTHING
    LABEL_SMOOTHING = args.label_smoothing

    if args.model.startswith("fashion"):
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

    ref, (losses, rates, norms) = replay(args, sample, init, order, naive=False)
    p_err = max(rel(got[k].astype(np.float64), ref[k]) for k in ref)
    p_max = max(rel_max(got[k].astype(np.float64), ref[k]) for k in ref)
    l_err = max(abs(s["loss"] - losses[s["step"] - 1]) / abs(losses[s["step"] - 1]) for s in steps)
    r_err = max(abs(s["lr"] - rates[s["step"] - 1]) / rates[s["step"] - 1] for s in steps)
    print(f"{args.model}: {len(losses)} optimizer steps of {args.accum_steps} x {args.micro_batch}; "
          f"gacc vs PyTorch float64: max relative difference of per-step losses {l_err:.2e} "
          f"({len(steps)} steps), of final parameters {p_err:.2e} (norm-wise per tensor; "
          f"element-wise max|a-b|/max|b| {p_max:.2e})")
    first = ", ".join("%.4g" % s["lr"] for s in steps[:3])
    print(f"learning rate per optimizer step: max relative difference {r_err:.2e} (first rates {first})")
    ok = p_err <= args.tol and l_err <= args.tol and r_err <= 1e-6 and len(steps) == len(losses)
    if FROZEN:
        same = all(np.array_equal(got[k], init[k]) for k in FROZEN)
        trained = max(rel(got[k].astype(np.float64), init[k].astype(np.float64)) for k in ref if k not in FROZEN)
        print(f"frozen parameters: {len(FROZEN)}, " + ("bit-identical to their initial values" if same else "CHANGED") +
              f"; the trainable ones moved by up to {trained:.2e}")
        ok &= same and trained > 1e-3
    if replay.stats:
        s_err = max(rel(got[k].astype(np.float64), v) for k, v in replay.stats.items())
        moved = min(rel(v, init[k].astype(np.float64)) for k, v in replay.stats.items())
        print(f"running statistics: max relative difference {s_err:.2e} "
              f"(they moved from their initial values by at least {moved:.2e})")
        ok &= s_err <= args.tol and moved > 100 * max(s_err, 1e-12)
    if args.ema:
        got_ema = safetensors_io.load(args.ema)
        e_err = max(rel(got_ema[k].astype(np.float64), replay.ema[k]) for k in replay.ema)
        moved = max(rel(replay.ema[k], ref[k]) for k in ref)
        print(f"weights' moving average (decay {args.ema_decay:g}): max relative difference {e_err:.2e} "
              f"(it differs from the final weights by {moved:.2e})")
        ok &= e_err <= args.tol and moved > 100 * max(e_err, 1e-12)
    if args.accum_schedule:
        want = [accum_steps_at(args, s["step"] - 1) for s in steps]
        got_n = [s.get("accum_steps") for s in steps]
        sizes = sorted(set(zip(got_n, (s.get("effective_batch") for s in steps))))
        print("accumulation steps and effective batch per optimizer step: " +
              ", ".join(f"N = {n}: {e}" for n, e in sizes) +
              (" (as scheduled)" if got_n == want else f" (scheduled {want}, got {got_n})"))
        ok &= got_n == want
    if norms:
        n_err = max(abs(s["grad_norm"] - norms[s["step"] - 1]) / norms[s["step"] - 1] for s in steps)
        clipped = sum(1 for n in norms if n > args.max_grad_norm)
        print(f"pre-clip global gradient norm: max relative difference {n_err:.2e}; "
              f"{clipped} of {len(norms)} steps clipped at {args.max_grad_norm:g}")
        ok &= n_err <= args.tol
        per_mb, _ = replay(args, sample, init, order, naive=False, clip_per_micro_batch=True)
        c_err = max(rel(per_mb[k], ref[k]) for k in ref)
        print(f"clipping each micro-batch instead vs clipping the full-batch gradient: {c_err:.2e}; gacc: {p_err:.2e}")
        ok &= clipped > 0 and c_err > 100 * max(p_err, 1e-12)
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

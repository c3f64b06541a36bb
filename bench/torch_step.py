"""PyTorch eager baselines on a CUDA device, for bench/gpu.sh.

1. The optimizer step of examples/fashion_mlp.mlir (784-256-10 MLP, N = 8
   micro-batches of 32, SGD momentum 0.9) and of
   examples/fashion_mlp_adamw.mlir (AdamW, fused=True, clipping at 1.0) in
   the usual eager loop: loss / N, backward per micro-batch, clip, step,
   zero_grad; likewise examples/kjv_char.mlir (the largest example: N = 4
   micro-batches of 16 verses x 527 characters, SGD momentum 0.9). Median
   over --steps optimizer steps (CUDA events) and peak device memory
   (torch.cuda.max_memory_allocated).
2. Device copy bandwidth and torch's fused AdamW over one flat 100M-element
   parameter (the arena the gacc kernels are timed on).
Prints `torch: <name> <value> <unit>` lines.
"""
import argparse
import statistics

import torch

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=50)
p.add_argument("--elements", type=int, default=100_000_000)
args = p.parse_args()
if not torch.cuda.is_available():
    raise SystemExit("torch_step.py: torch has no CUDA device here")
dev = torch.device("cuda")


def timed(fn, runs):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def mlp_step(optimizer_name):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(),
                                torch.nn.Linear(256, 10)).to(dev)
    if optimizer_name == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=0.05, fused=True)
    n, m = 8, 32
    x = torch.randn(n, m, 784, device=dev)
    y = torch.randint(0, 10, (n, m), device=dev)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        for k in range(n):
            loss = loss_fn(model(x[k]), y[k]) / n
            loss.backward()
        if optimizer_name != "sgd":
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)

    torch.cuda.reset_peak_memory_stats()
    ms = timed(step, args.steps)
    return ms, torch.cuda.max_memory_allocated() / 1e6


def kjv_char_step():
    """examples/kjv_char.mlir: embedding 64x64, linear 64->128, tanh-GELU,
    layer_norm(128), linear 128->64, next-character cross-entropy (token
    mean), N = 4 micro-batches of 16 verses x 527 targets, SGD momentum 0.9.
    Random full-length verses (no padding), so loss / N per micro-batch is
    the token mean over the effective batch."""
    torch.manual_seed(0)

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = torch.nn.Embedding(64, 64)
            self.fc1 = torch.nn.Linear(64, 128)
            self.ln = torch.nn.LayerNorm(128)
            self.fc2 = torch.nn.Linear(128, 64)

        def forward(self, t):
            h = torch.nn.functional.gelu(self.fc1(self.embedding(t)), approximate="tanh")
            return self.fc2(self.ln(h))

    model = Model().to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    n, m, length = 4, 16, 527
    tokens = torch.randint(0, 64, (n, m, length), device=dev)
    targets = torch.randint(0, 64, (n, m, length), device=dev)
    loss_fn = torch.nn.CrossEntropyLoss(ignore_index=-1)

    def step():
        for k in range(n):
            loss = loss_fn(model(tokens[k]).reshape(-1, 64), targets[k].reshape(-1)) / n
            loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    torch.cuda.reset_peak_memory_stats()
    ms = timed(step, args.steps)
    return ms, torch.cuda.max_memory_allocated() / 1e6


ms, peak = kjv_char_step()
print(f"torch: kjv_char_sgd_step_ms {ms:.3f} ms")
print(f"torch: kjv_char_sgd_peak_mb {peak:.1f} MB")

for name in ["sgd", "adamw"]:
    ms, peak = mlp_step(name)
    print(f"torch: fashion_mlp_{name}_step_ms {ms:.3f} ms")
    print(f"torch: fashion_mlp_{name}_peak_mb {peak:.1f} MB")

a = torch.empty(args.elements, device=dev)
b = torch.empty_like(a)
copy_ms = timed(lambda: b.copy_(a), 20)
print(f"torch: copy_gbs {2 * 4 * args.elements / copy_ms / 1e6:.1f} GB/s")
param = torch.nn.Parameter(torch.randn(args.elements, device=dev))
param.grad = torch.randn_like(param)
adamw = torch.optim.AdamW([param], lr=1e-3, fused=True)
adamw_ms = timed(adamw.step, 20)
print(f"torch: fused_adamw_{args.elements}_ms {adamw_ms:.3f} ms")
print(f"torch: fused_adamw_gbs {28 * args.elements / adamw_ms / 1e6:.1f} GB/s")

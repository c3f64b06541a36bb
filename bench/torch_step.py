"""PyTorch baselines on a CUDA device, for bench/gpu.sh.

1. The optimizer step of each example, as gacc-run trains it:
   examples/fashion_mlp.mlir (784-256-10 MLP, N = 8 micro-batches of 32,
   SGD momentum 0.9), examples/fashion_mlp_adamw.mlir (AdamW, fused=True,
   clipping at 1.0), examples/kjv_char.mlir (N = 4 micro-batches of 16
   verses x 527 characters, SGD momentum 0.9) and examples/fashion_cnn.mlir
   (conv 1->32, BatchNorm, ReLU, max-pool; conv 32->64, BatchNorm, ReLU,
   max-pool; linear 3136->10; N = 8 x 32, SGD momentum 0.9), each two ways:
   - eager: the usual loop (loss / N, backward per micro-batch, clip,
     step, zero_grad);
   - cuda_graph: the whole optimizer step (all N micro-batches with the
     gradients accumulated in place, clipping, the update, zeroing the
     gradients) captured by hand as one CUDA graph and replayed, the
     launch-bound floor (../shared/anchors/torch_compile_step.py and
     torch_kjv_char_cuda.py measured it this way).
   Median over --steps optimizer steps (CUDA events) and peak device
   memory (torch.cuda.max_memory_allocated).
2. Device copy bandwidth and torch's fused AdamW over one flat 100M-element
   parameter (the arena the gacc kernels are timed on).
Prints `torch: <name> <value> <unit>` lines.
"""
import argparse
import statistics

import torch

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=50)
p.add_argument("--elements", type=int, default=100_000_000,
               help="elements of the copy and fused-AdamW timings; 0 skips them")
p.add_argument("--models", default="fashion_mlp,fashion_mlp_adamw,kjv_char,fashion_cnn",
               help="comma-separated examples to time")
args = p.parse_args()
KNOWN = ["fashion_mlp", "fashion_mlp_adamw", "kjv_char", "fashion_cnn"]
for name in args.models.split(","):
    if name not in KNOWN:
        p.error(f"--models: unknown example '{name}' (known: {', '.join(KNOWN)})")
if not torch.cuda.is_available():
    raise SystemExit("torch_step.py: torch has no CUDA device here")
dev = torch.device("cuda")
nn = torch.nn


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


class KjvChar(nn.Module):
    """examples/kjv_char.mlir: embedding 64x64, linear 64->128, tanh-GELU,
    layer_norm(128), linear 128->64."""

    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(64, 64)
        self.fc1 = nn.Linear(64, 128)
        self.ln = nn.LayerNorm(128)
        self.fc2 = nn.Linear(128, 64)

    def forward(self, t):
        h = nn.functional.gelu(self.fc1(self.embedding(t)), approximate="tanh")
        return self.fc2(self.ln(h)).reshape(-1, 64)


def example(name, graphed):
    """The model, optimizer and inputs of one example on the device, and
    its optimizer step as a function. Random inputs of the example's
    shapes; kjv_char's verses are full length (no padding), so loss / N
    per micro-batch is the token mean over the effective batch."""
    torch.manual_seed(0)
    clip = False
    if name.startswith("fashion_mlp"):
        model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
        n, x = 8, torch.randn(8, 32, 784)
        y = torch.randint(0, 10, (8, 32))
    elif name == "fashion_cnn":
        model = nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Flatten(), nn.Linear(3136, 10))
        n, x = 8, torch.randn(8, 32, 1, 28, 28)
        y = torch.randint(0, 10, (8, 32))
    else:
        model = KjvChar()
        n, x = 4, torch.randint(0, 64, (4, 16, 527))
        y = torch.randint(0, 64, (4, 16 * 527))
    model, x, y = model.to(dev), x.to(dev), y.to(dev)
    if name == "fashion_mlp_adamw":
        # capturable: the step count stays on the device, as a graph needs.
        opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=0.05, fused=True,
                                capturable=graphed)
        clip = True
    else:
        opt = torch.optim.SGD(model.parameters(), lr=0.5 if name == "kjv_char" else 0.05, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()

    def step():
        for k in range(n):
            (loss_fn(model(x[k]), y[k]) / n).backward()
        if clip:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=not graphed)

    return model, step


def eager(name):
    _, step = example(name, graphed=False)
    torch.cuda.reset_peak_memory_stats()
    ms = timed(step, args.steps)
    return ms, torch.cuda.max_memory_allocated() / 1e6


def cuda_graph(name):
    """The whole step as one CUDA graph: warm-up steps on a side stream
    (torch.cuda.graphs' recipe), then one capture, timed as replays."""
    model, step = example(name, graphed=True)
    for q in model.parameters():
        q.grad = torch.zeros_like(q)
    torch.cuda.reset_peak_memory_stats()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step()
    ms = timed(graph.replay, args.steps)
    return ms, torch.cuda.max_memory_allocated() / 1e6


for name in args.models.split(","):
    for way, fn in [("eager", eager), ("cuda_graph", cuda_graph)]:
        try:
            ms, peak = fn(name)
            print(f"torch: {name}_{way}_step_ms {ms:.3f} ms", flush=True)
            print(f"torch: {name}_{way}_peak_mb {peak:.1f} MB", flush=True)
        except Exception as e:  # a baseline that fails is a figure too
            print(f"torch: {name}_{way} failed: {type(e).__name__}: {str(e)[:200]}", flush=True)

if args.elements > 0:
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
print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}")

# The PyTorch side of bench/cpu-kjv-char.sh: ../shared/anchors/torch_kjv_char.py
# (the program behind issue 15's 91 ms baseline), unchanged below.
"""CPU anchor: examples/kjv_char.mlir's model and schedule (embedding 64x64, linear 64->128, tanh-GELU, layer norm,
linear 128->64, token-mean cross-entropy; N x m = 4 x 16 verses of 527 positions; SGD lr 0.5 momentum 0.9) in
PyTorch with 2 threads on random tokens. Prints the median ms per optimizer step over 10 steps after 2 warm-up."""
import statistics, time, torch, torch.nn as nn, torch.nn.functional as F
torch.set_num_threads(2); torch.manual_seed(0)
class M(nn.Module):
    def __init__(s):
        super().__init__(); s.e = nn.Embedding(64, 64); s.f1 = nn.Linear(64, 128); s.ln = nn.LayerNorm(128); s.f2 = nn.Linear(128, 64)
    def forward(s, t): return s.f2(s.ln(F.gelu(s.f1(s.e(t)), approximate='tanh')))
m = M(); opt = torch.optim.SGD(m.parameters(), lr=0.5, momentum=0.9)
N, mb, L = 4, 16, 527
tok = torch.randint(0, 62, (N, mb, L)); tgt = torch.randint(0, 62, (N, mb, L))
ts = []
for it in range(12):
    t0 = time.perf_counter()
    for k in range(N):
        (F.cross_entropy(m(tok[k]).reshape(-1, 64), tgt[k].reshape(-1), reduction='sum') / (N * mb * L)).backward()
    opt.step(); opt.zero_grad(set_to_none=True); ts.append(time.perf_counter() - t0)
print(f"torch kjv_char cpu median_step_ms={1e3 * statistics.median(ts[2:]):.1f}")

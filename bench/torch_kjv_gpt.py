# The PyTorch side of bench/cpu-kjv-gpt.sh: ../shared/anchors/torch_kjv_gpt.py
# (the program behind issue 12's 1.10 s baseline), unchanged below.
"""Transformer anchor on the CPU (2 threads): a character GPT on the King James Bible. Text: every verse of
`bible -f Gen1:1-Rev22:21` without its reference ("Ge1:1 "), joined with "\n"; vocabulary = sorted set of its
characters; samples = consecutive non-overlapping chunks of T + 1 characters (inputs = first T, targets = last T);
chunk i is validation when i % 20 == 19. Model: token + learned position embeddings, L pre-LN blocks (causal
multi-head self-attention, tanh-GELU MLP 4D), final LN, output head tied to the token embedding. N x m = 4 x 16,
AdamW(lr 1e-3, betas 0.9/0.95, wd 0.1 on 2-D weights only), 50 warmup steps then cosine to 1e-4 at `steps`,
clip 1.0, no dropout, seed 0, one shuffled pass order (torch.randperm). Prints median ms/step and the validation
bits per character at the end. Usage: torch_kjv_gpt.py [steps] [L] [D] [H] [T]"""
import math, statistics, subprocess, sys, time
import torch, torch.nn as nn, torch.nn.functional as F

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 300
LR = float(sys.argv[6]) if len(sys.argv) > 6 else 1e-3
L, D, H, T = (int(a) for a in (sys.argv[2:6] if len(sys.argv) > 5 else (4, 128, 4, 128)))
N, m = 4, 16
torch.set_num_threads(2); torch.manual_seed(0)
lines = subprocess.run(['bible', '-f', 'Gen1:1-Rev22:21'], capture_output=True, text=True).stdout.splitlines()
text = '\n'.join(l.split(' ', 1)[1] for l in lines)
vocab = sorted(set(text)); V = len(vocab); ix = {c: i for i, c in enumerate(vocab)}
data = torch.tensor([ix[c] for c in text], dtype=torch.long)
n_chunks = (len(data) - 1) // (T + 1)
chunks = data[:n_chunks * (T + 1)].view(n_chunks, T + 1)
is_val = (torch.arange(n_chunks) % 20) == 19
train, val = chunks[~is_val], chunks[is_val]


class Block(nn.Module):
    def __init__(s):
        super().__init__()
        s.ln1, s.ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
        s.qkv, s.proj, s.fc, s.out = nn.Linear(D, 3 * D), nn.Linear(D, D), nn.Linear(D, 4 * D), nn.Linear(4 * D, D)
        s.register_buffer('mask', torch.tril(torch.ones(T, T, dtype=torch.bool)))

    def forward(s, x):
        B = x.shape[0]
        q, k, v = (t.view(B, T, H, D // H).transpose(1, 2) for t in s.qkv(s.ln1(x)).split(D, 2))
        a = (q @ k.transpose(-1, -2)) / math.sqrt(D // H)
        y = a.masked_fill(~s.mask, float('-inf')).softmax(-1) @ v
        x = x + s.proj(y.transpose(1, 2).reshape(B, T, D))
        return x + s.out(F.gelu(s.fc(s.ln2(x)), approximate='tanh'))


class GPT(nn.Module):
    def __init__(s):
        super().__init__()
        s.wte, s.wpe = nn.Embedding(V, D), nn.Embedding(T, D)
        s.blocks = nn.ModuleList(Block() for _ in range(L)); s.lnf = nn.LayerNorm(D)

    def forward(s, idx):
        x = s.wte(idx) + s.wpe.weight
        for b in s.blocks:
            x = b(x)
        return s.lnf(x) @ s.wte.weight.T


model = GPT()
decay = [p for p in model.parameters() if p.dim() == 2]
nodecay = [p for p in model.parameters() if p.dim() < 2]
opt = torch.optim.AdamW([{'params': decay, 'weight_decay': 0.1}, {'params': nodecay, 'weight_decay': 0.0}],
                        lr=LR, betas=(0.9, 0.95))
def lr_at(t):
    if t < 50:
        return LR * (t + 1) / 50
    p = min(1.0, (t - 50) / max(1, steps - 50))
    return 1e-4 + (LR - 1e-4) * (1 + math.cos(math.pi * p)) / 2
order = torch.randperm(len(train)); times = []
for t in range(steps):
    for g in opt.param_groups:
        g['lr'] = lr_at(t)
    t0 = time.perf_counter()
    win = train[order[(t * N * m) % len(train):][:N * m]]
    for k in range(N):
        mb = win[k * m:(k + 1) * m]
        F.cross_entropy(model(mb[:, :-1]).reshape(-1, V), mb[:, 1:].reshape(-1), reduction='sum').div(N * m * T).backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0); opt.step(); opt.zero_grad(set_to_none=True)
    times.append(time.perf_counter() - t0)
    if (t + 1) % 50 == 0:
        print(f'step {t + 1} ms/step {1e3 * statistics.median(times):.1f}', flush=True)
with torch.no_grad():
    tot = sum(F.cross_entropy(model(val[i:i + 64, :-1]).reshape(-1, V), val[i:i + 64, 1:].reshape(-1), reduction='sum').item()
              for i in range(0, len(val), 64))
print(f'kjv_gpt L={L} D={D} H={H} T={T} V={V} params={sum(p.numel() for p in model.parameters())} steps={steps} '
      f'median_step_ms={1e3 * statistics.median(times):.1f} val_bpc={tot / (len(val) * T) / math.log(2):.4f}')

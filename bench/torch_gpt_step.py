# The PyTorch side of bench/gpu.sh's GPT-2-small comparison (GPU_GPT2=1):
# ../shared/anchors/torch_gpt_step.py (the program behind issue 12's eager and
# torch.compile baselines), unchanged below.
"""Transformer anchor on a CUDA device: a GPT-2-small-shaped decoder (12 layers, 12 heads, d 768, vocab 50304,
T 1024, tied embeddings, pre-LN, GELU MLP) trained with gradient accumulation N x m (default 4 x 16 = 65,536
tokens per optimizer step), bf16 autocast, SDPA causal attention, fused AdamW, clipping at 1.0. Modes: eager and
torch.compile. Prints median ms per optimizer step, tokens/s, MFU against 989 TFLOP/s dense bf16 (6 N_params
tokens + attention), and peak memory. Usage: python torch_gpt_step.py [N] [m] [steps]"""
import math, statistics, sys, time
import torch, torch.nn as nn, torch.nn.functional as F

N = int(sys.argv[1]) if len(sys.argv) > 1 else 4
m = int(sys.argv[2]) if len(sys.argv) > 2 else 16
steps = int(sys.argv[3]) if len(sys.argv) > 3 else 10
L, H, D, V, T = 12, 12, 768, 50304, 1024
dev = 'cuda'
torch.backends.cuda.matmul.allow_tf32 = True


class Block(nn.Module):
    def __init__(s):
        super().__init__()
        s.ln1, s.ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
        s.qkv, s.proj = nn.Linear(D, 3 * D), nn.Linear(D, D)
        s.fc, s.out = nn.Linear(D, 4 * D), nn.Linear(4 * D, D)

    def forward(s, x):
        B = x.shape[0]
        q, k, v = s.qkv(s.ln1(x)).split(D, 2)
        q, k, v = (t.view(B, T, H, D // H).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(B, T, D)
        x = x + s.proj(y)
        return x + s.out(F.gelu(s.fc(s.ln2(x)), approximate='tanh'))


class GPT(nn.Module):
    def __init__(s):
        super().__init__()
        s.wte, s.wpe = nn.Embedding(V, D), nn.Embedding(T, D)
        s.blocks = nn.ModuleList(Block() for _ in range(L)); s.lnf = nn.LayerNorm(D)

    def forward(s, idx, tgt):
        x = s.wte(idx) + s.wpe(torch.arange(T, device=idx.device))
        for b in s.blocks:
            x = b(x)
        logits = s.lnf(x) @ s.wte.weight.T
        return F.cross_entropy(logits.float().view(-1, V), tgt.view(-1))


def run(compile_):
    torch.manual_seed(0)
    model = GPT().to(dev)
    nparams = sum(p.numel() for p in model.parameters())
    fwd = torch.compile(model) if compile_ else model
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1, fused=True)
    x = torch.randint(0, V, (N, m, T), device=dev); y = torch.randint(0, V, (N, m, T), device=dev)

    def step():
        for k in range(N):
            with torch.autocast('cuda', dtype=torch.bfloat16):
                loss = fwd(x[k], y[k]) / N
            loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step(); opt.zero_grad(set_to_none=True)

    t0 = time.time()
    for _ in range(3):
        step()
    torch.cuda.synchronize(); warm = time.time() - t0
    torch.cuda.reset_peak_memory_stats(); ts = []
    for _ in range(steps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); step(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b))
    ms = statistics.median(ts); tok = N * m * T
    flops = 6 * nparams * tok + 12 * L * D * T * tok  # 6N per token + attention (fwd+bwd)
    print(f'torch gpt124m {"compile" if compile_ else "eager"}: N={N} m={m} T={T} params={nparams / 1e6:.1f}M '
          f'step_ms={ms:.1f} tokens_per_s={tok / ms * 1e3:.0f} mfu={flops / (ms / 1e3) / 989e12:.3f} '
          f'peak_gb={torch.cuda.max_memory_allocated() / 1e9:.2f} warmup_s={warm:.0f}', flush=True)


for c in (False, True):
    try:
        run(c)
    except Exception as e:
        print(f'torch gpt124m {"compile" if c else "eager"} failed: {type(e).__name__}: {str(e)[:300]}', flush=True)
print(torch.__version__, torch.cuda.get_device_name())

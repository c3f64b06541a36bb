"""Writes examples/kjv_gpt_lora.mlir from examples/kjv_gpt.mlir: every
weight of the GPT frozen (to be loaded from a trained kjv_gpt with
--load-params) and LoRA adapters (Hu et al. 2021) of rank R = 8, alpha = 16,
on each block's q/k/v and output projections: y = x·Wᵀ + b +
(alpha/R)·(x·Aᵀ)·Bᵀ, A [R, in] as torch.nn.Linear (kaiming uniform), B
[out, R] zero, so training starts from the loaded model.

Usage: python3 scripts/make-kjv-gpt-lora.py  (from the repository root)"""
import re

R, ALPHA = 8, 16
src = open("examples/kjv_gpt.mlir").read()
header, rest = src.split("gacc.param @wte", 1)
rest = "gacc.param @wte" + rest
params, body = rest.split("gacc.train_step", 1)
params = re.sub(r"^(gacc\.param [^\n]*?)( \{no_weight_decay\})?$",
                lambda m: m.group(1) + " {frozen}", params, flags=re.M)
adapters, names, args = [], [], []
for i in range(4):
    for proj, out in (("attn", 384), ("proj", 128)):
        a, b = f"h{i}_lora_{proj}_a", f"h{i}_lora_{proj}_b"
        adapters += [f"gacc.param @{a} : tensor<{R}x128xf32> = #gacc.kaiming_uniform<fan_in = 128>\n",
                     f"gacc.param @{b} : tensor<{out}x{R}xf32> = #gacc.zeros\n"]
        names += [f"@{a}", f"@{b}"]
        args += [f"     %{a}: tensor<{R}x128xf32>,\n", f"     %{b}: tensor<{out}x{R}xf32>,\n"]
body = body.replace("@lnf_w, @lnf_b]", "@lnf_w, @lnf_b, " + ", ".join(names) + "]", 1)
body = body.replace("     %lnf_b: tensor<128xf32>,\n", "     %lnf_b: tensor<128xf32>,\n" + "".join(args), 1)
body = body.replace("@kjv_gpt params", "@kjv_gpt_lora params", 1)
body = re.sub(r"optimizer = #gacc\.adamw<[^>]*>", "optimizer = #gacc.adamw<lr = 1.0e-3, beta2 = 0.95, weight_decay = 0.0>", body)
body = re.sub(r"lr_schedule = #gacc\.lr_schedule<[^>]*>",
              'lr_schedule = #gacc.lr_schedule<warmup_steps = 20, decay = "cosine", decay_steps = 457, min_lr = 1.0e-4>',
              body)


def lora(m):
    ind, res, i, x, w, proj, bias, xt, wt, bt, yt = m.groups()
    dims = yt[len("tensor<"):-len("xf32>")].split("x")
    out, mid = dims[-1], "tensor<" + "x".join(dims[:-1]) + f"x{R}xf32>"
    a, b = f"%h{i}_lora_{proj}_a", f"%h{i}_lora_{proj}_b"
    return (f"{ind}{res}_base = gacc.linear {x}, {w} bias {bias} : {xt}, {wt}, {bt} -> {yt}\n"
            f"{ind}{res}_la = gacc.linear {x}, {a} : {xt}, tensor<{R}x128xf32> -> {mid}\n"
            f"{ind}{res}_lb = gacc.linear {res}_la, {b} : {mid}, tensor<{out}x{R}xf32> -> {yt}\n"
            f"{ind}{res}_le = tensor.empty() : {yt}\n"
            f"{ind}{res}_ls = linalg.generic {{indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, "
            f"affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = [\"parallel\", \"parallel\", \"parallel\"]}} "
            f"ins({res}_lb : {yt}) outs({res}_le : {yt}) {{\n"
            f"{ind}^bb0(%in: f32, %out: f32):\n"
            f"{ind}  %scale = arith.constant {ALPHA / R:.1f} : f32\n"
            f"{ind}  %scaled = arith.mulf %in, %scale : f32\n"
            f"{ind}  linalg.yield %scaled : f32\n"
            f"{ind}}} -> {yt}\n"
            f"{ind}{res} = arith.addf {res}_base, {res}_ls : {yt}")


body, n = re.subn(r"^( +)(%h(\d)_(?:qkv|proj)) = gacc\.linear (%\S+), (%h\d_(attn|proj)_w) bias (%\S+) : "
                  r"(tensor<[^>]+>), (tensor<[^>]+>), (tensor<[^>]+>) -> (tensor<[^>]+>)$", lora, body, flags=re.M)
assert n == 8, n
header = f"""// LoRA fine-tuning of the character GPT of kjv_gpt.mlir (Hu et al. 2021):
// every weight of that model frozen, loaded from a trained run, and rank-{R}
// adapters (alpha = {ALPHA}) on each block's q/k/v and output projections,
// y = x·Wᵀ + b + {ALPHA // R}·(x·Aᵀ)·Bᵀ, B starting at zero. Only the adapters
// have gradients, accumulators and AdamW state (lr 1e-3, no weight decay,
// 20 warmup steps then cosine to 1e-4); clipping at 1.0; N x m = 4 x 16.
// Written by scripts/make-kjv-gpt-lora.py from kjv_gpt.mlir.
//
//   build/bin/gacc-run examples/kjv_gpt.mlir --dataset kjv-text --save-params gpt.safetensors
//   build/bin/gacc-run examples/kjv_gpt_lora.mlir --dataset kjv-text --load-params gpt.safetensors
//
"""
open("examples/kjv_gpt_lora.mlir", "w").write(header + params + "".join(adapters) + "\ngacc.train_step" + body)

"""Writes examples/kjv_gpt_lora.mlir from examples/kjv_gpt.mlir: every
weight of the GPT frozen (to be loaded from a trained kjv_gpt with
--load-params) and LoRA adapters (Hu et al. 2021) of rank R = 8, alpha = 16,
on each block's q/k/v and output projections: y = x·Wᵀ + b +
(alpha/R)·(x·Aᵀ)·Bᵀ, A [R, in] as torch.nn.Linear (kaiming uniform), B
[out, R] zero, so training starts from the loaded model.

With no arguments it reads examples/kjv_gpt.mlir and rewrites
examples/kjv_gpt_lora.mlir (both found from this script's location, whatever
the current directory; test/tools/make-kjv-gpt-lora.test checks that the
example is this script's output); -o FILE writes FILE instead, -o - the
standard output.

Usage: python3 scripts/make-kjv-gpt-lora.py [-o FILE]"""
import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = os.path.join(ROOT, "examples", "kjv_gpt.mlir")
EXAMPLE = os.path.join(ROOT, "examples", "kjv_gpt_lora.mlir")

R, ALPHA = 8, 16


class NotTheGpt(Exception):
    """The input is not the GPT of examples/kjv_gpt.mlir this script adapts."""


def replace_once(text, old, new, what):
    if old not in text:
        raise NotTheGpt(f"no {what}")
    return text.replace(old, new, 1)


def lora_step(src):
    if "gacc.param @wte" not in src:
        raise NotTheGpt("no gacc.param @wte")
    header, rest = src.split("gacc.param @wte", 1)
    rest = "gacc.param @wte" + rest
    if "gacc.train_step" not in rest:
        raise NotTheGpt("no gacc.train_step after the parameters")
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
    body = replace_once(body, "@lnf_w, @lnf_b]", "@lnf_w, @lnf_b, " + ", ".join(names) + "]",
                        "parameter list ending in @lnf_w, @lnf_b")
    body = replace_once(body, "     %lnf_b: tensor<128xf32>,\n", "     %lnf_b: tensor<128xf32>,\n" + "".join(args),
                        "block argument %lnf_b: tensor<128xf32>")
    body = replace_once(body, "@kjv_gpt params", "@kjv_gpt_lora params", "gacc.train_step @kjv_gpt")
    body, n = re.subn(r"optimizer = #gacc\.adamw<[^>]*>",
                      "optimizer = #gacc.adamw<lr = 1.0e-3, beta2 = 0.95, weight_decay = 0.0>", body)
    if n != 1:
        raise NotTheGpt(f"{n} AdamW optimizers, not 1")
    body, n = re.subn(r"lr_schedule = #gacc\.lr_schedule<[^>]*>",
                      'lr_schedule = #gacc.lr_schedule<warmup_steps = 20, decay = "cosine", decay_steps = 457, '
                      'min_lr = 1.0e-4>',
                      body)
    if n != 1:
        raise NotTheGpt(f"{n} learning rate schedules, not 1")
    body, n = re.subn(r"^( +)(%h(\d)_(?:qkv|proj)) = gacc\.linear (%\S+), (%h\d_(attn|proj)_w) bias (%\S+) : "
                      r"(tensor<[^>]+>), (tensor<[^>]+>), (tensor<[^>]+>) -> (tensor<[^>]+>)$", lora, body,
                      flags=re.M)
    if n != 8:
        raise NotTheGpt(f"{n} q/k/v and output projections, not the 8 of 4 blocks")
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
    return header + params + "".join(adapters) + "\ngacc.train_step" + body


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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\nUsage:")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-o", "--output", default=EXAMPLE,
                    help="file to write, - for standard output (default: examples/kjv_gpt_lora.mlir "
                         "of this repository)")
    a = ap.parse_args()

    def fail(message):
        ap.exit(2, f"{ap.prog}: error: {message}\n")

    try:
        with open(SOURCE, encoding="utf-8") as f:
            src = f.read()
    except (OSError, UnicodeDecodeError) as e:
        fail(f"cannot read {SOURCE}: {getattr(e, 'strerror', None) or e}")
    try:
        text = lora_step(src)
    except NotTheGpt as e:
        fail(f"{SOURCE} is not the GPT this script adapts (that of scripts/make-gpt.py with no arguments): {e}")
    if a.output == "-":
        sys.stdout.write(text)
        return
    try:
        with open(a.output, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        fail(f"cannot write {a.output}: {e.strerror or e}")


if __name__ == "__main__":
    main()

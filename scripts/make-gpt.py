"""Writes a GPT decoder as a gacc.train_step: token and learned position
embeddings, L pre-LN blocks of causal multi-head self-attention
(gacc.attention) and a tanh-GELU MLP, a final layer norm and an output head
tied to the token embedding (GPT-2's architecture, Radford et al. 2019, as
../shared/anchors/torch_gpt_step.py and torch_kjv_gpt.py build it in
PyTorch). AdamW with weight decay on the 2-D weights only, warmup then
cosine, clipping at 1.0; weights N(0, 0.02), layer norms 1 and 0, biases 0.

One definition of both GPTs gacc ships: with no arguments it prints
examples/kjv_gpt.mlir (test/tools/make-gpt.test checks that the file is
this script's output); --preset gpt2-small prints the GPT-2-small-shaped
step that bench/gpu.sh times against PyTorch (12 layers, 12 heads,
d_model 768, vocabulary 50304, T 1024, N x m = 4 x 16, bf16).

Usage: python3 scripts/make-gpt.py [--preset kjv|gpt2-small]
           [--layers L] [--heads H] [--d-model D] [--vocab V] [--seq T]
           [--micro-batch m] [--accum-steps N] [--precision fp32|bf16]
           [--name NAME] [-o FILE]"""
import argparse
import re
import sys

PRESETS = {
    # examples/kjv_gpt.mlir: the LLM issue's character GPT on --dataset
    # kjv-text (vocabulary 64: the corpus's 63 characters and one unused
    # class), one epoch of 477 optimizer steps.
    "kjv": dict(name="kjv_gpt", layers=4, heads=4, d_model=128, vocab=64,
                seq=128, micro_batch=16, accum_steps=4, precision="fp32",
                lr="3.0e-3", warmup=50, decay_steps=427, min_lr="1.0e-4"),
    # GPT-2 small (124M parameters with the vocabulary padded to 50304, as
    # nanoGPT does), the shape of ../shared/anchors/torch_gpt_step.py.
    "gpt2-small": dict(name="gpt2_small", layers=12, heads=12, d_model=768,
                       vocab=50304, seq=1024, micro_batch=16, accum_steps=4,
                       precision="bf16", lr="3.0e-4", warmup=10,
                       decay_steps=990, min_lr="3.0e-5"),
}

KJV_HEADER = """\
// A character GPT on the King James Bible (--dataset kjv-text): token and
// learned position embeddings, 4 pre-LN blocks of causal multi-head
// self-attention (4 heads of 32, d_model = 128) and a tanh-GELU MLP of
// width 512, a final layer norm and an output head tied to the token
// embedding, over chunks of T = 128 characters (vocabulary 64: the corpus's
// 63 characters and one unused class). AdamW (lr 3e-3, betas 0.9/0.95,
// weight decay 0.1 on 2-D weights only), 50 warmup steps then cosine to
// 1e-4 over one epoch (477 optimizer steps), clipping at 1.0; N x m = 4 x 16.
//
//   build/bin/gacc-run examples/kjv_gpt.mlir --dataset kjv-text
//
"""


def header(c):
    if c["name"] == "kjv_gpt" and c == PRESETS["kjv"]:
        return KJV_HEADER
    return (f"// Written by scripts/make-gpt.py: a GPT decoder of {c['layers']} pre-LN blocks,\n"
            f"// {c['heads']} heads, d_model {c['d_model']}, MLP width {4 * c['d_model']}, vocabulary {c['vocab']},\n"
            f"// T = {c['seq']}, tied head; N x m = {c['accum_steps']} x {c['micro_batch']}, "
            f"precision {c['precision']}, AdamW.\n//\n")


def gpt(c):
    L, H, D, V, T = c["layers"], c["heads"], c["d_model"], c["vocab"], c["seq"]
    m, F, hd = c["micro_batch"], 4 * c["d_model"], c["d_model"] // c["heads"]
    normal = "#gacc.normal<mean = 0.0, std = 0.02>"
    one, zero = "#gacc.constant<value = 1.0> {no_weight_decay}", "#gacc.zeros {no_weight_decay}"
    params = [("wte", f"{V}x{D}", normal), ("wpe", f"{T}x{D}", normal)]
    for i in range(L):
        p = f"h{i}_"
        params += [(p + "ln1_w", f"{D}", one), (p + "ln1_b", f"{D}", zero),
                   (p + "attn_w", f"{3 * D}x{D}", normal), (p + "attn_b", f"{3 * D}", zero),
                   (p + "proj_w", f"{D}x{D}", normal), (p + "proj_b", f"{D}", zero),
                   (p + "ln2_w", f"{D}", one), (p + "ln2_b", f"{D}", zero),
                   (p + "fc_w", f"{F}x{D}", normal), (p + "fc_b", f"{F}", zero),
                   (p + "out_w", f"{D}x{F}", normal), (p + "out_b", f"{D}", zero)]
    params += [("lnf_w", f"{D}", one), ("lnf_b", f"{D}", zero)]
    out = [header(c), "// The blocks repeat: block i reads %x<i> and writes %x<i+1>.\n"]
    out += [f"gacc.param @{n} : tensor<{s}xf32> = {init}\n" for n, s, init in params]
    precision = "" if c["precision"] == "fp32" else f"\n    precision = #gacc.precision<{c['precision']}>,"
    out.append(
        f"\ngacc.train_step @{c['name']} params [{', '.join('@' + n for n, _, _ in params)}] attributes {{\n"
        f"    accum_steps = {c['accum_steps']} : i64, micro_batch = {m} : i64, "
        f"effective_batch = {c['accum_steps'] * m} : i64,\n"
        f"    normalization = #gacc.normalization<token_mean>,\n"
        f"    optimizer = #gacc.adamw<lr = {c['lr']}, beta2 = 0.95, weight_decay = 0.1>,\n"
        f"    lr_schedule = #gacc.lr_schedule<warmup_steps = {c['warmup']}, decay = \"cosine\", "
        f"decay_steps = {c['decay_steps']}, min_lr = {c['min_lr']}>,{precision}\n"
        f"    max_grad_norm = 1.0 : f64, seed = 0 : i64}} {{\n")
    args = [f"%{n}: tensor<{s}xf32>" for n, s, _ in params]
    args += [f"%tokens: tensor<{m}x{T}xi32>", f"%targets: tensor<{m}x{T}xi32>"]
    out.append("^bb0(" + ",\n     ".join(args) + "):\n")
    act = f"tensor<{m}x{T}x{D}xf32>"
    heads = f"tensor<{m}x{H}x{T}x{hd}xf32>"
    split = f"tensor<{m}x{T}x{H}x{hd}xf32>"
    vec = f"tensor<{D}xf32>"
    out.append(
        f"  %tok = gacc.embedding %tokens, %wte : tensor<{m}x{T}xi32>, tensor<{V}x{D}xf32> -> {act}\n"
        f"  %pe = tensor.empty() : {act}\n"
        f"  %pos = linalg.broadcast ins(%wpe : tensor<{T}x{D}xf32>) outs(%pe : {act}) dimensions = [0]\n"
        f"  %x0 = arith.addf %tok, %pos : {act}\n")
    for i in range(L):
        p = f"%h{i}_"
        out.append(
            f"  // Block {i}: attention.\n"
            f"  {p}a = gacc.layer_norm %x{i}, {p}ln1_w, {p}ln1_b : {act}, {vec}, {vec}\n"
            f"  {p}qkv = gacc.linear {p}a, {p}attn_w bias {p}attn_b : {act}, tensor<{3 * D}x{D}xf32>, "
            f"tensor<{3 * D}xf32> -> tensor<{m}x{T}x{3 * D}xf32>\n")
        for k, part in enumerate("qkv"):
            out.append(
                f"  {p}{part}0 = tensor.extract_slice {p}qkv[0, 0, {k * D}] [{m}, {T}, {D}] [1, 1, 1] : "
                f"tensor<{m}x{T}x{3 * D}xf32> to {act}\n"
                f"  {p}{part}1 = tensor.expand_shape {p}{part}0 [[0], [1], [2, 3]] output_shape [{m}, {T}, {H}, {hd}] : "
                f"{act} into {split}\n"
                f"  {p}{part}e = tensor.empty() : {heads}\n"
                f"  {p}{part} = linalg.transpose ins({p}{part}1 : {split}) outs({p}{part}e : {heads}) "
                f"permutation = [0, 2, 1, 3]\n")
        out.append(
            f"  {p}att = gacc.attention {p}q, {p}k, {p}v {{causal}} : {heads}, {heads}, {heads}\n"
            f"  {p}oe = tensor.empty() : {split}\n"
            f"  {p}o1 = linalg.transpose ins({p}att : {heads}) outs({p}oe : {split}) permutation = [0, 2, 1, 3]\n"
            f"  {p}o = tensor.collapse_shape {p}o1 [[0], [1], [2, 3]] : {split} into {act}\n"
            f"  {p}proj = gacc.linear {p}o, {p}proj_w bias {p}proj_b : {act}, tensor<{D}x{D}xf32>, {vec} -> {act}\n"
            f"  {p}r = arith.addf %x{i}, {p}proj : {act}\n"
            f"  // Block {i}: MLP.\n"
            f"  {p}m = gacc.layer_norm {p}r, {p}ln2_w, {p}ln2_b : {act}, {vec}, {vec}\n"
            f"  {p}fc = gacc.linear {p}m, {p}fc_w bias {p}fc_b : {act}, tensor<{F}x{D}xf32>, "
            f"tensor<{F}xf32> -> tensor<{m}x{T}x{F}xf32>\n"
            f"  {p}g = gacc.gelu {p}fc {{approximate = \"tanh\"}} : tensor<{m}x{T}x{F}xf32>\n"
            f"  {p}mlp = gacc.linear {p}g, {p}out_w bias {p}out_b : tensor<{m}x{T}x{F}xf32>, "
            f"tensor<{D}x{F}xf32>, {vec} -> {act}\n"
            f"  %x{i + 1} = arith.addf {p}r, {p}mlp : {act}\n")
    out.append(
        f"  %hf = gacc.layer_norm %x{L}, %lnf_w, %lnf_b : {act}, {vec}, {vec}\n"
        f"  %logits = gacc.linear %hf, %wte : {act}, tensor<{V}x{D}xf32> -> tensor<{m}x{T}x{V}xf32>\n"
        f"  %loss = gacc.cross_entropy %logits, %targets : tensor<{m}x{T}x{V}xf32>, "
        f"tensor<{m}x{T}xi32> -> tensor<f32>\n"
        f"  gacc.yield %loss : tensor<f32>\n}}\n")
    return "".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", choices=sorted(PRESETS), default="kjv")
    for flag in ("layers", "heads", "d-model", "vocab", "seq", "micro-batch", "accum-steps"):
        ap.add_argument("--" + flag, type=int)
    ap.add_argument("--precision", choices=["fp32", "bf16"])
    ap.add_argument("--name")
    ap.add_argument("-o", "--output", help="file to write (default: standard output)")
    a = ap.parse_args()
    c = dict(PRESETS[a.preset])
    for key in ("layers", "heads", "d_model", "vocab", "seq", "micro_batch", "accum_steps",
                "precision", "name"):
        if getattr(a, key) is not None:
            c[key] = getattr(a, key)
    for key in ("layers", "heads", "d_model", "vocab", "seq", "micro_batch", "accum_steps"):
        if c[key] <= 0:
            ap.error(f"--{key.replace('_', '-')} must be positive, not {c[key]}")
    if c["d_model"] % c["heads"]:
        ap.error(f"--d-model {c['d_model']} is not a multiple of --heads {c['heads']}")
    # The name is the step's symbol, @NAME, as gacc.train_step's verifier
    # takes it: it names the compiled functions and GPU kernels.
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", c["name"]):
        ap.error(f"--name {c['name']!r} is not a step name: a letter or _, then letters, "
                 "digits or _ (it names the compiled functions and GPU kernels)")
    text = gpt(c)
    if a.output:
        try:
            with open(a.output, "w") as f:
                f.write(text)
        except OSError as e:
            ap.exit(2, f"{ap.prog}: error: cannot write {a.output}: {e.strerror or e}\n")
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()

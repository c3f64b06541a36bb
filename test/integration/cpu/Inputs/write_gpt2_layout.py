"""Writes the one-block GPT of gpt_model.mlir (parameters named as
make_inputs.py --model gpt writes them) in Hugging Face GPT-2's layout, as
transformers' GPT2LMHeadModel.state_dict() names it: transformer.wte,
transformer.wpe, transformer.h.0.{ln_1, attn.c_attn, attn.c_proj, ln_2,
mlp.c_fc, mlp.c_proj}, transformer.ln_f, Conv1D weights as [in, out], the
tied lm_head.weight and the attention-mask buffers attn.bias and
attn.masked_bias. --drop, --no-transpose and --extra make broken files.

Usage: write_gpt2_layout.py INIT OUT [--drop NAME] [--no-transpose NAME] [--extra NAME]"""
import argparse
import sys

import numpy as np

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import safetensors_io  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("init")
ap.add_argument("out")
ap.add_argument("--drop", default="")
ap.add_argument("--no-transpose", default="")
ap.add_argument("--extra", default="")
args = ap.parse_args()
p = safetensors_io.load(args.init)
h = "transformer.h.0."
names = {"ln1_w": h + "ln_1.weight", "ln1_b": h + "ln_1.bias", "attn_w": h + "attn.c_attn.weight",
         "attn_b": h + "attn.c_attn.bias", "proj_w": h + "attn.c_proj.weight", "proj_b": h + "attn.c_proj.bias",
         "ln2_w": h + "ln_2.weight", "ln2_b": h + "ln_2.bias", "fc_w": h + "mlp.c_fc.weight",
         "fc_b": h + "mlp.c_fc.bias", "out_w": h + "mlp.c_proj.weight", "out_b": h + "mlp.c_proj.bias",
         "wte": "transformer.wte.weight", "wpe": "transformer.wpe.weight",
         "lnf_w": "transformer.ln_f.weight", "lnf_b": "transformer.ln_f.bias"}
out = {}
for k, name in names.items():
    v = p[k]
    conv1d = k.endswith("_w") and not k.startswith("ln")
    out[name] = np.ascontiguousarray(v.T) if conv1d and name != args.no_transpose else v
out["lm_head.weight"] = p["wte"]
out[h + "attn.bias"] = np.tril(np.ones((5, 5), np.float32))[None, None]
out[h + "attn.masked_bias"] = np.array(-1e4, np.float32)
if args.extra:
    out[args.extra] = np.zeros((2, 2), np.float32)
out.pop(args.drop, None)
safetensors_io.save(args.out, out)

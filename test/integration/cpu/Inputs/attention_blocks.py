"""gacc.attention's blockwise forward and hand-written adjoint against the
same attention spelled out in upstream linalg (one batch_matmul for the
scores, a masking linalg.generic, linalg.softmax, one batch_matmul with the
values), which gacc-autodiff differentiates with its generic rules: an
independent reference, no torch needed (numpy only).

For each case (causal or not, query_block, which of the q/k/v projections
are frozen) both models train one optimizer step of 2 x 2 from the same
seed on the same samples, and their gradients (--save-gradients) must
agree within --tol relative to each tensor's largest element.

Usage: attention_blocks.py --gacc-run PATH --workdir DIR [--tol 1e-5]"""
import argparse
import os
import subprocess
import sys

import numpy as np

from safetensors_io import load, save_any

T, D = 5, 4


def model(kind, causal, query_block, frozen):
    def param(n):
        mark = " {frozen}" if n[1] in frozen else ""
        return f"gacc.param @{n} : tensor<4x4xf32> = #gacc.kaiming_uniform<fan_in = 4>{mark}\n"
    s = "".join(param(n) for n in ["wq", "wk", "wv"]) + """gacc.param @wo : tensor<4x4xf32> = #gacc.kaiming_uniform<fan_in = 4>
gacc.train_step @att params [@wq, @wk, @wv, @wo] attributes {
    accum_steps = 2 : i64, micro_batch = 2 : i64,
    normalization = #gacc.normalization<sum>, optimizer = #gacc.sgd<lr = 0.1>} {
^bb0(%wq: tensor<4x4xf32>, %wk: tensor<4x4xf32>, %wv: tensor<4x4xf32>, %wo: tensor<4x4xf32>,
     %x: tensor<2x5x4xf32>, %tgt: tensor<2x5xi32>):
  %q0 = gacc.linear %x, %wq : tensor<2x5x4xf32>, tensor<4x4xf32> -> tensor<2x5x4xf32>
  %k0 = gacc.linear %x, %wk : tensor<2x5x4xf32>, tensor<4x4xf32> -> tensor<2x5x4xf32>
  %v0 = gacc.linear %x, %wv : tensor<2x5x4xf32>, tensor<4x4xf32> -> tensor<2x5x4xf32>
"""
    if kind == "blocks":
        attrs = (["causal"] if causal else []) + [f"query_block = {query_block} : i64"]
        s += """  %q = tensor.expand_shape %q0 [[0, 1], [2], [3]] output_shape [2, 1, 5, 4] : tensor<2x5x4xf32> into tensor<2x1x5x4xf32>
  %k = tensor.expand_shape %k0 [[0, 1], [2], [3]] output_shape [2, 1, 5, 4] : tensor<2x5x4xf32> into tensor<2x1x5x4xf32>
  %v = tensor.expand_shape %v0 [[0, 1], [2], [3]] output_shape [2, 1, 5, 4] : tensor<2x5x4xf32> into tensor<2x1x5x4xf32>
  %o = gacc.attention %q, %k, %v {""" + ", ".join(attrs) + """} : tensor<2x1x5x4xf32>, tensor<2x1x5x4xf32>, tensor<2x1x5x4xf32>
  %o0 = tensor.collapse_shape %o [[0, 1], [2], [3]] : tensor<2x1x5x4xf32> into tensor<2x5x4xf32>
"""
    else:
        body = ("""    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %f = arith.cmpi ugt, %j, %i : index
    %ninf = arith.constant 0xFF800000 : f32
    %r = arith.select %f, %ninf, %s : f32
    linalg.yield %r : f32""" if causal else "    linalg.yield %s : f32")
        s += """  %ekt = tensor.empty() : tensor<2x4x5xf32>
  %kt = linalg.transpose ins(%k0 : tensor<2x5x4xf32>) outs(%ekt : tensor<2x4x5xf32>) permutation = [0, 2, 1]
  %c0 = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<2x5x5xf32>
  %zs = linalg.fill ins(%c0 : f32) outs(%es : tensor<2x5x5xf32>) -> tensor<2x5x5xf32>
  %sc = linalg.batch_matmul ins(%q0, %kt : tensor<2x5x4xf32>, tensor<2x4x5xf32>) outs(%zs : tensor<2x5x5xf32>) -> tensor<2x5x5xf32>
  %em = tensor.empty() : tensor<2x5x5xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(a, b, c) -> (a, b, c)>, affine_map<(a, b, c) -> (a, b, c)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sc : tensor<2x5x5xf32>) outs(%em : tensor<2x5x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %half = arith.constant 0.5 : f32
    %s = arith.mulf %in, %half : f32
""" + body + """
  } -> tensor<2x5x5xf32>
  %ep = tensor.empty() : tensor<2x5x5xf32>
  %p = linalg.softmax dimension(2) ins(%m : tensor<2x5x5xf32>) outs(%ep : tensor<2x5x5xf32>) -> tensor<2x5x5xf32>
  %eo = tensor.empty() : tensor<2x5x4xf32>
  %zo = linalg.fill ins(%c0 : f32) outs(%eo : tensor<2x5x4xf32>) -> tensor<2x5x4xf32>
  %o0 = linalg.batch_matmul ins(%p, %v0 : tensor<2x5x5xf32>, tensor<2x5x4xf32>) outs(%zo : tensor<2x5x4xf32>) -> tensor<2x5x4xf32>
"""
    return s + """  %y = gacc.linear %o0, %wo : tensor<2x5x4xf32>, tensor<4x4xf32> -> tensor<2x5x4xf32>
  %l = gacc.cross_entropy %y, %tgt : tensor<2x5x4xf32>, tensor<2x5xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}
"""


def gradients(args, kind, causal, query_block, frozen, data):
    tag = f"{kind}_c{int(causal)}_b{query_block}_f{frozen or 'none'}"
    path = os.path.join(args.workdir, tag + ".mlir")
    with open(path, "w") as f:
        f.write(model(kind, causal, query_block, frozen))
    grads = os.path.join(args.workdir, tag + ".safetensors")
    run = subprocess.run([args.gacc_run, path, "--dataset", "tensors", "--data", data,
                          "--seed", "3", "--max-steps", "1", "--no-eval",
                          "--save-gradients", grads], capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"attention_blocks.py: gacc-run failed on {path}:\n{run.stderr}")
    return load(grads)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gacc-run", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--tol", type=float, default=1e-5)
    args = ap.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    rng = np.random.default_rng(1)
    data = os.path.join(args.workdir, "data.safetensors")
    save_any(data, {
        "input0": rng.uniform(-2, 2, (12, T, D)).astype(np.float32),
        "input1": rng.integers(0, D, (12, T)).astype(np.int32),
    })
    cases = [(c, b, "") for c in (True, False) for b in (1, 2, 3, 5, 7)]
    cases += [(c, 2, f) for c in (True, False) for f in ("q", "k", "v", "kv", "qv")]
    worst = 0.0
    for causal, block, frozen in cases:
        a = gradients(args, "blocks", causal, block, frozen, data)
        r = gradients(args, "reference", causal, block, frozen, data)
        if sorted(a) != sorted(r):
            sys.exit(f"attention_blocks.py: gradients {sorted(a)} against {sorted(r)}")
        diff = 0.0
        for k in a:
            scale = float(np.abs(r[k]).max()) or 1.0
            diff = max(diff, float(np.abs(a[k] - r[k]).max()) / scale)
        worst = max(worst, diff)
        print(f"{'causal' if causal else 'non-causal'}, query_block {block}, "
              f"frozen {frozen or 'none'}: {len(a)} gradients, max relative difference {diff:.2e}")
    print("BLOCKS OK" if worst <= args.tol else f"BLOCKS FAILED: {worst:.2e} > {args.tol}")
    return 0 if worst <= args.tol else 1


if __name__ == "__main__":
    sys.exit(main())

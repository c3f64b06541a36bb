"""Execution test of gacc-autodiff's adjoint rules for upstream ops.

For one family of op kinds (elementwise arith/math on tensors, linalg ops,
tensor ops) it writes a model whose logits are the sum of one branch per
op kind, each branch reading its own parameter, then trains it for one
optimizer step with gacc-run (2 micro-batches of 3 samples, normalization
`sum`) and writes the applied gradient with --save-gradients. The same
branches in float64 PyTorch give the reference gradient of the summed
cross-entropy; because each parameter feeds one op kind only, the
parameter's relative difference (max |a - b| / max |b|) names the rule that
is wrong. Prints one line per op kind and "ADJOINTS OK" when all are within
--tol.
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import safetensors_io  # noqa: E402

M, N = 3, 2  # micro-batch, accumulation steps

# Shared values of every body: %u is the first three features of the
# micro-batch (inactive data), %z33 a zero-filled [3, 3] tensor.
PRELUDE = """
  %u = tensor.extract_slice %x[0, 0] [3, 3] [1, 1] : tensor<3x4xf32> to tensor<3x3xf32>
  %e33 = tensor.empty() : tensor<3x3xf32>
  %c0 = arith.constant 0.0 : f32
  %z33 = linalg.fill ins(%c0 : f32) outs(%e33 : tensor<3x3xf32>) -> tensor<3x3xf32>
  %ones = arith.constant dense<1.0> : tensor<3x3xf32>
"""

T33 = "tensor<3x3xf32>"


def u_of(x):
    return x[:, :3]


# Each case: (name, {param: (shape, (low, high))}, MLIR body producing
# %{n}_o : tensor<3x3xf32> from %{n}_<param>, torch function of (x, p)).
ELEMENTWISE = [
    ("arith.addf", {"p": ((3, 3), (-1, 1))},
     "%{n}_o = arith.addf %{n}_p, %u : " + T33, lambda x, p: p["p"] + u_of(x)),
    ("arith.subf", {"p": ((3, 3), (-1, 1))},
     "%{n}_o = arith.subf %u, %{n}_p : " + T33, lambda x, p: u_of(x) - p["p"]),
    ("arith.mulf", {"p": ((3, 3), (-1, 1))},
     "%{n}_o = arith.mulf %{n}_p, %u : " + T33, lambda x, p: p["p"] * u_of(x)),
    ("arith.divf (denominator)", {"p": ((3, 3), (1, 2))},
     "%{n}_o = arith.divf %u, %{n}_p : " + T33, lambda x, p: u_of(x) / p["p"]),
    ("arith.divf (numerator)", {"p": ((3, 3), (-1, 1))},
     "%{n}_d = arith.addf %ones, %ones : " + T33 + "\n"
     "%{n}_o = arith.divf %{n}_p, %{n}_d : " + T33, lambda x, p: p["p"] / 2.0),
    ("arith.negf", {"p": ((3, 3), (-1, 1))},
     "%{n}_n = arith.negf %{n}_p : " + T33 + "\n%{n}_o = arith.mulf %{n}_n, %u : " + T33,
     lambda x, p: -p["p"] * u_of(x)),
    ("arith.maximumf", {"p": ((3, 3), (-1, 1))},
     "%{n}_o = arith.maximumf %{n}_p, %u : " + T33,
     lambda x, p: torch.maximum(p["p"], u_of(x))),
    ("arith.minimumf", {"p": ((3, 3), (-1, 1))},
     "%{n}_o = arith.minimumf %u, %{n}_p : " + T33,
     lambda x, p: torch.minimum(u_of(x), p["p"])),
    ("arith.select (constant condition)", {"p": ((3, 3), (-1, 1))},
     "%{n}_c = arith.constant dense<[[true, false, true], [false, true, false], "
     "[true, true, false]]> : tensor<3x3xi1>\n"
     "%{n}_s = arith.mulf %{n}_p, %{n}_p : " + T33 + "\n"
     "%{n}_o = arith.select %{n}_c, %{n}_s, %u : tensor<3x3xi1>, " + T33,
     lambda x, p: torch.where(torch.tensor([[1, 0, 1], [0, 1, 0], [1, 1, 0]]).bool(),
                              p["p"] * p["p"], u_of(x))),
    ("math.exp", {"p": ((3, 3), (-1, 1))},
     "%{n}_e = math.exp %{n}_p : " + T33 + "\n%{n}_o = arith.mulf %{n}_e, %u : " + T33,
     lambda x, p: torch.exp(p["p"]) * u_of(x)),
    ("math.log", {"p": ((3, 3), (1, 2))},
     "%{n}_e = math.log %{n}_p : " + T33 + "\n%{n}_o = arith.mulf %{n}_e, %u : " + T33,
     lambda x, p: torch.log(p["p"]) * u_of(x)),
    ("math.log1p", {"p": ((3, 3), (0.1, 1))},
     "%{n}_e = math.log1p %{n}_p : " + T33 + "\n%{n}_o = arith.mulf %{n}_e, %u : " + T33,
     lambda x, p: torch.log1p(p["p"]) * u_of(x)),
    ("math.tanh", {"p": ((3, 3), (-1, 1))},
     "%{n}_a = arith.mulf %{n}_p, %u : " + T33 + "\n%{n}_o = math.tanh %{n}_a : " + T33,
     lambda x, p: torch.tanh(p["p"] * u_of(x))),
    ("math.sqrt", {"p": ((3, 3), (1, 2))},
     "%{n}_e = math.sqrt %{n}_p : " + T33 + "\n%{n}_o = arith.mulf %{n}_e, %u : " + T33,
     lambda x, p: torch.sqrt(p["p"]) * u_of(x)),
    ("math.rsqrt", {"p": ((3, 3), (1, 2))},
     "%{n}_e = math.rsqrt %{n}_p : " + T33 + "\n%{n}_o = arith.mulf %{n}_e, %u : " + T33,
     lambda x, p: torch.rsqrt(p["p"]) * u_of(x)),
    ("math.erf", {"p": ((3, 3), (-1, 1))},
     "%{n}_a = arith.mulf %{n}_p, %u : " + T33 + "\n%{n}_o = math.erf %{n}_a : " + T33,
     lambda x, p: torch.erf(p["p"] * u_of(x))),
    ("math.powf (constant exponent)", {"p": ((3, 3), (1, 2))},
     "%{n}_k = arith.constant dense<3.0> : " + T33 + "\n"
     "%{n}_e = math.powf %{n}_p, %{n}_k : " + T33 + "\n%{n}_o = arith.mulf %{n}_e, %u : " + T33,
     lambda x, p: torch.pow(p["p"], 3.0) * u_of(x)),
    ("math.powf (exponent)", {"p": ((3, 3), (-1, 1))},
     "%{n}_k = arith.constant dense<1.5> : " + T33 + "\n"
     "%{n}_o = math.powf %{n}_k, %{n}_p : " + T33,
     lambda x, p: torch.pow(torch.full((3, 3), 1.5), p["p"])),
    ("math.absf", {"p": ((3, 3), (-1, 1))},
     "%{n}_e = math.absf %{n}_p : " + T33 + "\n%{n}_o = arith.mulf %{n}_e, %u : " + T33,
     lambda x, p: torch.abs(p["p"]) * u_of(x)),
    ("math.sin", {"p": ((3, 3), (-1, 1))},
     "%{n}_e = math.sin %{n}_p : " + T33 + "\n%{n}_o = arith.mulf %{n}_e, %u : " + T33,
     lambda x, p: torch.sin(p["p"]) * u_of(x)),
    ("math.cos", {"p": ((3, 3), (-1, 1))},
     "%{n}_e = math.cos %{n}_p : " + T33 + "\n%{n}_o = arith.mulf %{n}_e, %u : " + T33,
     lambda x, p: torch.cos(p["p"]) * u_of(x)),
    ("arith.maxnumf", {"p": ((3, 3), (-1, 1))},
     "%{n}_o = arith.maxnumf %{n}_p, %u : " + T33, lambda x, p: torch.fmax(p["p"], u_of(x))),
    ("arith.minnumf", {"p": ((3, 3), (-1, 1))},
     "%{n}_o = arith.minnumf %{n}_p, %u : " + T33, lambda x, p: torch.fmin(p["p"], u_of(x))),
] + [
    (f"math.{op}", {"p": ((3, 3), rng)},
     "%{n}_e = math." + op + " %{n}_p : " + T33 + "\n%{n}_o = arith.mulf %{n}_e, %u : " + T33,
     (lambda f: lambda x, p: f(p["p"]) * u_of(x))(fn))
    for op, rng, fn in [
        ("exp2", (-1, 1), torch.exp2),
        ("expm1", (-1, 1), torch.expm1),
        ("log2", (1, 2), torch.log2),
        ("log10", (1, 2), torch.log10),
        ("tan", (-1, 1), torch.tan),
        ("atan", (-1, 1), torch.atan),
        ("sinh", (-1, 1), torch.sinh),
        ("cosh", (-1, 1), torch.cosh),
        ("cbrt", (1, 2), lambda t: t ** (1.0 / 3.0)),
        ("erfc", (-1, 1), torch.erfc),
        ("floor", (-2, 2), torch.floor),
        ("ceil", (-2, 2), torch.ceil),
        ("round", (-2, 2), torch.round),
        ("roundeven", (-2, 2), torch.round),
        ("trunc", (-2, 2), torch.trunc),
    ]
] + [
    ("math.fma", {"p": ((3, 3), (-1, 1)), "q": ((3, 3), (-1, 1))},
     "%{n}_o = math.fma %{n}_p, %u, %{n}_q : " + T33,
     lambda x, p: p["p"] * u_of(x) + p["q"]),
    ("math.fpowi", {"p": ((3, 3), (1, 2))},
     "%{n}_k = arith.constant dense<3> : tensor<3x3xi32>\n"
     "%{n}_e = math.fpowi %{n}_p, %{n}_k : " + T33 + ", tensor<3x3xi32>\n"
     "%{n}_o = arith.mulf %{n}_e, %u : " + T33,
     lambda x, p: p["p"] ** 3 * u_of(x)),
]


# Exact ties and edge values: the tie rules of PyTorch (maximum and minimum
# split evenly, fmax and fmin give all to the left operand, amax splits
# evenly among equal terms) and its zeros (abs at 0, x^0).
HALF9 = [0.5, 0.25, 0.5, 0.75, 0.5, -0.5, 0.5, 0.125, 0.5]
TIES = [
    ("arith.maximumf (ties)", {"p": ((3, 3), HALF9)},
     "%{n}_c = arith.constant dense<0.5> : " + T33 + "\n"
     "%{n}_m = arith.maximumf %{n}_p, %{n}_c : " + T33 + "\n%{n}_o = arith.mulf %{n}_m, %u : " + T33,
     lambda x, p: torch.maximum(p["p"], torch.full((3, 3), 0.5)) * u_of(x)),
    ("arith.minimumf (ties)", {"p": ((3, 3), HALF9)},
     "%{n}_c = arith.constant dense<0.5> : " + T33 + "\n"
     "%{n}_m = arith.minimumf %{n}_c, %{n}_p : " + T33 + "\n%{n}_o = arith.mulf %{n}_m, %u : " + T33,
     lambda x, p: torch.minimum(torch.full((3, 3), 0.5), p["p"]) * u_of(x)),
    ("arith.maxnumf (ties)", {"p": ((3, 3), HALF9)},
     "%{n}_c = arith.constant dense<0.5> : " + T33 + "\n"
     "%{n}_m = arith.maxnumf %{n}_p, %{n}_c : " + T33 + "\n%{n}_o = arith.mulf %{n}_m, %u : " + T33,
     lambda x, p: torch.fmax(p["p"], torch.full((3, 3), 0.5)) * u_of(x)),
    ("arith.minnumf (ties, right operand)", {"p": ((3, 3), HALF9)},
     "%{n}_c = arith.constant dense<0.5> : " + T33 + "\n"
     "%{n}_m = arith.minnumf %{n}_c, %{n}_p : " + T33 + "\n%{n}_o = arith.mulf %{n}_m, %u : " + T33,
     lambda x, p: torch.fmin(torch.full((3, 3), 0.5), p["p"]) * u_of(x)),
    ("linalg.reduce (max, ties)", {"p": ((3, 3, 4), [0.5, 0.5, 0.1, 0.5] * 4 + [0.2, 0.3, 0.3, 0.1] * 5)},
     "%{n}_i = arith.constant dense<-1.0e30> : " + T33 + "\n"
     "%{n}_t = linalg.reduce { arith.maximumf } ins(%{n}_p : tensor<3x3x4xf32>) outs(%{n}_i : " + T33 + ") dimensions = [2]\n"
     "%{n}_o = arith.mulf %{n}_t, %u : " + T33,
     lambda x, p: torch.amax(p["p"], 2) * u_of(x)),
    ("math.absf (at 0)", {"p": ((3, 3), [0.0, 0.5, -0.5, 0.0, 1.0, -1.0, 0.0, 0.25, -0.25])},
     "%{n}_e = math.absf %{n}_p : " + T33 + "\n%{n}_o = arith.mulf %{n}_e, %u : " + T33,
     lambda x, p: torch.abs(p["p"]) * u_of(x)),
    ("math.fpowi (x^0 at 0)", {"p": ((3, 3), [0.0, 0.5, -0.5, 0.0, 1.0, -1.0, 0.0, 0.25, 2.0])},
     "%{n}_k = arith.constant dense<0> : tensor<3x3xi32>\n"
     "%{n}_e = math.fpowi %{n}_p, %{n}_k : " + T33 + ", tensor<3x3xi32>\n"
     "%{n}_f = arith.addf %{n}_e, %{n}_p : " + T33 + "\n"
     "%{n}_o = arith.mulf %{n}_f, %u : " + T33,
     lambda x, p: (p["p"] ** 0 + p["p"]) * u_of(x)),
]

LINALG = [
    ("linalg.matmul", {"w": ((4, 3), (-1, 1))},
     "%{n}_o = linalg.matmul ins(%x, %{n}_w : tensor<3x4xf32>, tensor<4x3xf32>) "
     "outs(%z33 : " + T33 + ") -> " + T33,
     lambda x, p: x @ p["w"]),
    ("linalg.matmul (transposed B)", {"w": ((3, 4), (-1, 1))},
     "%{n}_o = linalg.matmul indexing_maps = [affine_map<(i, j, k) -> (i, k)>, "
     "affine_map<(i, j, k) -> (j, k)>, affine_map<(i, j, k) -> (i, j)>] "
     "ins(%x, %{n}_w : tensor<3x4xf32>, tensor<3x4xf32>) outs(%z33 : " + T33 + ") -> " + T33,
     lambda x, p: x @ p["w"].T),
    # Wᵀ·xᵀ holds the samples in its columns: transposed back, so that
    # every branch keeps each sample in its row (the verifier refuses a
    # sum that combines two samples).
    ("linalg.matmul (transposed A and B)", {"w": ((4, 3), (-1, 1))},
     "%{n}_m = linalg.matmul indexing_maps = [affine_map<(i, j, k) -> (k, i)>, "
     "affine_map<(i, j, k) -> (j, k)>, affine_map<(i, j, k) -> (i, j)>] "
     "ins(%{n}_w, %x : tensor<4x3xf32>, tensor<3x4xf32>) outs(%z33 : " + T33 + ") -> " + T33 + "\n"
     "%{n}_o = linalg.transpose ins(%{n}_m : " + T33 + ") outs(%e33 : " + T33 + ") permutation = [1, 0]",
     lambda x, p: (p["w"].T @ x.T).T),
    ("linalg.matmul (accumulating into its init)", {"w": ((4, 3), (-1, 1)), "c": ((3, 3), (-1, 1))},
     "%{n}_o = linalg.matmul ins(%x, %{n}_w : tensor<3x4xf32>, tensor<4x3xf32>) "
     "outs(%{n}_c : " + T33 + ") -> " + T33,
     lambda x, p: p["c"] + x @ p["w"]),
    ("linalg.batch_matmul", {"w": ((3, 4, 3), (-1, 1))},
     "%{n}_x = tensor.expand_shape %x [[0, 1], [2]] output_shape [3, 1, 4] : tensor<3x4xf32> into tensor<3x1x4xf32>\n"
     "%{n}_e = tensor.empty() : tensor<3x1x3xf32>\n"
     "%{n}_z = linalg.fill ins(%c0 : f32) outs(%{n}_e : tensor<3x1x3xf32>) -> tensor<3x1x3xf32>\n"
     "%{n}_b = linalg.batch_matmul ins(%{n}_x, %{n}_w : tensor<3x1x4xf32>, tensor<3x4x3xf32>) "
     "outs(%{n}_z : tensor<3x1x3xf32>) -> tensor<3x1x3xf32>\n"
     "%{n}_o = tensor.collapse_shape %{n}_b [[0, 1], [2]] : tensor<3x1x3xf32> into " + T33,
     lambda x, p: torch.bmm(x[:, None, :], p["w"])[:, 0, :]),
    ("linalg.batch_matmul (transposed B)", {"w": ((3, 3, 4), (-1, 1))},
     "%{n}_x = tensor.expand_shape %x [[0, 1], [2]] output_shape [3, 1, 4] : tensor<3x4xf32> into tensor<3x1x4xf32>\n"
     "%{n}_e = tensor.empty() : tensor<3x1x3xf32>\n"
     "%{n}_z = linalg.fill ins(%c0 : f32) outs(%{n}_e : tensor<3x1x3xf32>) -> tensor<3x1x3xf32>\n"
     "%{n}_b = linalg.batch_matmul indexing_maps = [affine_map<(b, i, j, k) -> (b, i, k)>, "
     "affine_map<(b, i, j, k) -> (b, j, k)>, affine_map<(b, i, j, k) -> (b, i, j)>] "
     "ins(%{n}_x, %{n}_w : tensor<3x1x4xf32>, tensor<3x3x4xf32>) "
     "outs(%{n}_z : tensor<3x1x3xf32>) -> tensor<3x1x3xf32>\n"
     "%{n}_o = tensor.collapse_shape %{n}_b [[0, 1], [2]] : tensor<3x1x3xf32> into " + T33,
     lambda x, p: torch.bmm(x[:, None, :], p["w"].transpose(1, 2))[:, 0, :]),
    ("linalg.batch_matmul (transposed A and B)", {"w": ((3, 4, 3), (-1, 1))},
     "%{n}_x = tensor.expand_shape %x [[0, 1], [2]] output_shape [3, 1, 4] : tensor<3x4xf32> into tensor<3x1x4xf32>\n"
     "%{n}_e = tensor.empty() : tensor<3x3x1xf32>\n"
     "%{n}_z = linalg.fill ins(%c0 : f32) outs(%{n}_e : tensor<3x3x1xf32>) -> tensor<3x3x1xf32>\n"
     "%{n}_b = linalg.batch_matmul indexing_maps = [affine_map<(b, i, j, k) -> (b, k, i)>, "
     "affine_map<(b, i, j, k) -> (b, j, k)>, affine_map<(b, i, j, k) -> (b, i, j)>] "
     "ins(%{n}_w, %{n}_x : tensor<3x4x3xf32>, tensor<3x1x4xf32>) "
     "outs(%{n}_z : tensor<3x3x1xf32>) -> tensor<3x3x1xf32>\n"
     "%{n}_o = tensor.collapse_shape %{n}_b [[0], [1, 2]] : tensor<3x3x1xf32> into " + T33,
     lambda x, p: torch.bmm(p["w"].transpose(1, 2), x[:, None, :].transpose(1, 2))[:, :, 0]),
    ("linalg.transpose", {"p": ((3, 3), (-1, 1))},
     "%{n}_t = linalg.transpose ins(%{n}_p : " + T33 + ") outs(%e33 : " + T33 + ") permutation = [1, 0]\n"
     "%{n}_o = arith.mulf %{n}_t, %u : " + T33,
     lambda x, p: p["p"].T * u_of(x)),
    ("linalg.broadcast", {"p": ((3,), (-1, 1))},
     "%{n}_t = linalg.broadcast ins(%{n}_p : tensor<3xf32>) outs(%e33 : " + T33 + ") dimensions = [0]\n"
     "%{n}_o = arith.mulf %{n}_t, %u : " + T33,
     lambda x, p: p["p"][None, :] * u_of(x)),
    ("linalg.reduce (sum)", {"p": ((3, 3, 2), (-1, 1))},
     "%{n}_t = linalg.reduce { arith.addf } ins(%{n}_p : tensor<3x3x2xf32>) outs(%z33 : " + T33 + ") dimensions = [2]\n"
     "%{n}_o = arith.mulf %{n}_t, %u : " + T33,
     lambda x, p: p["p"].sum(2) * u_of(x)),
    ("linalg.reduce (max)", {"p": ((3, 3, 4), (-1, 1))},
     "%{n}_i = arith.constant dense<-1.0e30> : " + T33 + "\n"
     "%{n}_t = linalg.reduce { arith.maximumf } ins(%{n}_p : tensor<3x3x4xf32>) outs(%{n}_i : " + T33 + ") dimensions = [2]\n"
     "%{n}_o = arith.mulf %{n}_t, %u : " + T33,
     lambda x, p: torch.amax(p["p"], 2) * u_of(x)),
    ("linalg.softmax", {"p": ((3, 3), (-1, 1))},
     "%{n}_a = arith.mulf %{n}_p, %u : " + T33 + "\n"
     "%{n}_s = linalg.softmax dimension(1) ins(%{n}_a : " + T33 + ") outs(%e33 : " + T33 + ") -> " + T33 + "\n"
     "%{n}_o = arith.mulf %{n}_s, %u : " + T33,
     lambda x, p: torch.softmax(p["p"] * u_of(x), 1) * u_of(x)),
    ("linalg.generic (broadcast input: a reduction in the adjoint)", {"b": ((3,), (-1, 1))},
     "%{n}_o = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, "
     "affine_map<(i, j) -> (i, j)>], iterator_types = [\"parallel\", \"parallel\"]} "
     "ins(%u, %{n}_b : " + T33 + ", tensor<3xf32>) outs(%e33 : " + T33 + ") {\n"
     "^bb0(%a: f32, %b: f32, %out: f32):\n  %s = arith.mulf %a, %b : f32\n  %t = math.tanh %s : f32\n"
     "  linalg.yield %t : f32\n} -> " + T33,
     lambda x, p: torch.tanh(u_of(x) * p["b"][None, :])),
    ("linalg.generic (contraction)", {"w": ((3, 4), (-1, 1))},
     "%{n}_o = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (j, k)>, "
     "affine_map<(i, j, k) -> (i, j)>], iterator_types = [\"parallel\", \"parallel\", \"reduction\"]} "
     "ins(%x, %{n}_w : tensor<3x4xf32>, tensor<3x4xf32>) outs(%z33 : " + T33 + ") {\n"
     "^bb0(%a: f32, %b: f32, %out: f32):\n  %s = arith.mulf %a, %b : f32\n  %t = arith.addf %out, %s : f32\n"
     "  linalg.yield %t : f32\n} -> " + T33,
     lambda x, p: x @ p["w"].T),
    ("linalg.generic (contraction of a sum)", {"a": ((3, 4), (-1, 1)), "b": ((3, 4), (-1, 1))},
     "%{n}_w = arith.addf %{n}_a, %{n}_b : tensor<3x4xf32>\n"
     "%{n}_o = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (j, k)>, "
     "affine_map<(i, j, k) -> (i, j)>], iterator_types = [\"parallel\", \"parallel\", \"reduction\"]} "
     "ins(%x, %{n}_w : tensor<3x4xf32>, tensor<3x4xf32>) outs(%z33 : " + T33 + ") {\n"
     "^bb0(%a: f32, %b: f32, %out: f32):\n  %s = arith.mulf %a, %b : f32\n  %t = arith.addf %out, %s : f32\n"
     "  linalg.yield %t : f32\n} -> " + T33,
     lambda x, p: x @ (p["a"] + p["b"]).T),
    ("linalg.generic (a sum over a loop only one input sizes)", {"b": ((3,), (-1, 1))},
     "%{n}_e3 = tensor.empty() : tensor<3xf32>\n"
     "%{n}_z3 = linalg.fill ins(%c0 : f32) outs(%{n}_e3 : tensor<3xf32>) -> tensor<3xf32>\n"
     "%{n}_s = linalg.generic {indexing_maps = [affine_map<(i, k) -> (i, k)>, affine_map<(i, k) -> (i)>, "
     "affine_map<(i, k) -> (i)>], iterator_types = [\"parallel\", \"reduction\"]} "
     "ins(%x, %{n}_b : tensor<3x4xf32>, tensor<3xf32>) outs(%{n}_z3 : tensor<3xf32>) {\n"
     "^bb0(%a: f32, %b: f32, %out: f32):\n  %s = arith.addf %a, %b : f32\n  %t = arith.addf %out, %s : f32\n"
     "  linalg.yield %t : f32\n} -> tensor<3xf32>\n"
     "%{n}_t = linalg.broadcast ins(%{n}_s : tensor<3xf32>) outs(%e33 : " + T33 + ") dimensions = [1]\n"
     "%{n}_o = arith.mulf %{n}_t, %u : " + T33,
     lambda x, p: (x + p["b"][:, None]).sum(1)[:, None] * u_of(x)),
    ("linalg.generic (reads its init)", {"p": ((3, 3), (-1, 1))},
     "%{n}_o = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], "
     "iterator_types = [\"parallel\", \"parallel\"]} ins(%u : " + T33 + ") outs(%{n}_p : " + T33 + ") {\n"
     "^bb0(%a: f32, %out: f32):\n  %s = arith.mulf %out, %out : f32\n  %t = arith.addf %s, %a : f32\n"
     "  linalg.yield %t : f32\n} -> " + T33,
     lambda x, p: p["p"] * p["p"] + u_of(x)),
    ("linalg.map", {"p": ((3, 3), (-1, 1))},
     "%{n}_o = linalg.map { arith.mulf } ins(%{n}_p, %u : " + T33 + ", " + T33 + ") outs(%e33 : " + T33 + ")",
     lambda x, p: p["p"] * u_of(x)),
    ("linalg.add", {"p": ((3, 3), (-1, 1))},
     "%{n}_a = linalg.add ins(%{n}_p, %{n}_p : " + T33 + ", " + T33 + ") outs(%e33 : " + T33 + ") -> " + T33 + "\n"
     "%{n}_o = arith.mulf %{n}_a, %u : " + T33,
     lambda x, p: 2 * p["p"] * u_of(x)),
    ("linalg.mul", {"p": ((3, 3), (-1, 1))},
     "%{n}_o = linalg.mul ins(%{n}_p, %u : " + T33 + ", " + T33 + ") outs(%e33 : " + T33 + ") -> " + T33,
     lambda x, p: p["p"] * u_of(x)),
    ("linalg.exp", {"p": ((3, 3), (-1, 1))},
     "%{n}_a = linalg.exp ins(%{n}_p : " + T33 + ") outs(%e33 : " + T33 + ") -> " + T33 + "\n"
     "%{n}_o = arith.mulf %{n}_a, %u : " + T33,
     lambda x, p: torch.exp(p["p"]) * u_of(x)),
] + [
    (f"linalg.{op}", {"p": ((3, 3), rng)},
     "%{n}_a = linalg." + op + " ins(%{n}_p : " + T33 + ") outs(%e33 : " + T33 + ") -> " + T33 + "\n"
     "%{n}_o = arith.mulf %{n}_a, %u : " + T33,
     (lambda f: lambda x, p: f(p["p"]) * u_of(x))(fn))
    for op, rng, fn in [
        ("negf", (-1, 1), torch.neg),
        ("square", (-1, 1), torch.square),
        ("reciprocal", (1, 2), torch.reciprocal),
        ("tanh", (-1, 1), torch.tanh),
        ("log", (1, 2), torch.log),
        ("sqrt", (1, 2), torch.sqrt),
        ("abs", (-1, 1), torch.abs),
    ]
] + [
    (f"linalg.{op}", {"p": ((3, 3), rng)},
     "%{n}_o = linalg." + op + " ins(%{n}_p, %u : " + T33 + ", " + T33 + ") outs(%e33 : " + T33 + ") -> " + T33,
     (lambda f: lambda x, p: f(p["p"], u_of(x)))(fn))
    for op, rng, fn in [
        ("sub", (-1, 1), torch.sub),
        ("div", (-1, 1), torch.div),
        ("max", (-1, 1), torch.maximum),
        ("min", (-1, 1), torch.minimum),
    ]
] + [
    ("linalg.elementwise (kind exp)", {"p": ((3, 3), (-1, 1))},
     "%{n}_a = linalg.elementwise kind=#linalg.elementwise_kind<exp> ins(%{n}_p : " + T33 + ") outs(%e33 : " + T33 + ") -> " + T33 + "\n"
     "%{n}_o = arith.mulf %{n}_a, %u : " + T33,
     lambda x, p: torch.exp(p["p"]) * u_of(x)),
    ("linalg.contract", {"w": ((4, 3), (-1, 1))},
     "%{n}_o = linalg.contract indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, "
     "affine_map<(i, j, k) -> (i, j)>] ins(%x, %{n}_w : tensor<3x4xf32>, tensor<4x3xf32>) outs(%z33 : " + T33 + ") -> " + T33,
     lambda x, p: x @ p["w"]),
    ("linalg.fill (over a parameter: no gradient through it)", {"p": ((3, 3), (-1, 1))},
     "%{n}_f = linalg.fill ins(%c0 : f32) outs(%{n}_p : " + T33 + ") -> " + T33 + "\n"
     "%{n}_m = arith.mulf %{n}_p, %u : " + T33 + "\n"
     "%{n}_o = arith.addf %{n}_f, %{n}_m : " + T33,
     lambda x, p: p["p"] * u_of(x)),
    ("linalg.copy", {"p": ((3, 3), (-1, 1))},
     "%{n}_a = linalg.copy ins(%{n}_p : " + T33 + ") outs(%e33 : " + T33 + ") -> " + T33 + "\n"
     "%{n}_o = arith.mulf %{n}_a, %u : " + T33,
     lambda x, p: p["p"] * u_of(x)),
]

TENSOR = [
    ("tensor.cast", {"p": ((3, 3), (-1, 1))},
     "%{n}_r = tensor.cast %{n}_p : " + T33 + " to tensor<?x3xf32>\n"
     "%{n}_s = tensor.cast %{n}_r : tensor<?x3xf32> to " + T33 + "\n"
     "%{n}_o = arith.mulf %{n}_s, %u : " + T33,
     lambda x, p: p["p"] * u_of(x)),
    ("tensor.cast (a chain through two dynamic shapes)", {"p": ((3, 3), (-1, 1))},
     "%{n}_r = tensor.cast %{n}_p : " + T33 + " to tensor<?x3xf32>\n"
     "%{n}_q = tensor.cast %{n}_r : tensor<?x3xf32> to tensor<?x?xf32>\n"
     "%{n}_s = tensor.cast %{n}_q : tensor<?x?xf32> to " + T33 + "\n"
     "%{n}_o = arith.mulf %{n}_s, %u : " + T33,
     lambda x, p: p["p"] * u_of(x)),
    ("tensor.expand_shape", {"p": ((9,), (-1, 1))},
     "%{n}_r = tensor.expand_shape %{n}_p [[0, 1]] output_shape [3, 3] : tensor<9xf32> into " + T33 + "\n"
     "%{n}_o = arith.mulf %{n}_r, %u : " + T33,
     lambda x, p: p["p"].reshape(3, 3) * u_of(x)),
    ("tensor.collapse_shape", {"p": ((3, 1, 3), (-1, 1))},
     "%{n}_r = tensor.collapse_shape %{n}_p [[0, 1], [2]] : tensor<3x1x3xf32> into " + T33 + "\n"
     "%{n}_o = arith.mulf %{n}_r, %u : " + T33,
     lambda x, p: p["p"].reshape(3, 3) * u_of(x)),
    ("tensor.extract_slice", {"p": ((4, 5), (-1, 1))},
     "%{n}_r = tensor.extract_slice %{n}_p[1, 2] [3, 3] [1, 1] : tensor<4x5xf32> to " + T33 + "\n"
     "%{n}_o = arith.mulf %{n}_r, %u : " + T33,
     lambda x, p: p["p"][1:4, 2:5] * u_of(x)),
    ("tensor.extract_slice (strided)", {"p": ((5, 6), (-1, 1))},
     "%{n}_r = tensor.extract_slice %{n}_p[0, 1] [3, 3] [2, 2] : tensor<5x6xf32> to " + T33 + "\n"
     "%{n}_o = arith.mulf %{n}_r, %u : " + T33,
     lambda x, p: p["p"][0:5:2, 1:6:2] * u_of(x)),
    # Along the features: every sample's row gets the same columns (a slice
    # into some samples' rows would make the step depend on the split).
    ("tensor.insert_slice (source)", {"p": ((3, 2), (-1, 1))},
     "%{n}_r = tensor.insert_slice %{n}_p into %u[0, 1] [3, 2] [1, 1] : tensor<3x2xf32> into " + T33 + "\n"
     "%{n}_o = arith.mulf %{n}_r, %{n}_r : " + T33,
     lambda x, p: torch.cat([u_of(x)[:, :1], p["p"]], 1) ** 2),
    ("tensor.insert_slice (destination)", {"p": ((3, 3), (-1, 1))},
     "%{n}_s = tensor.extract_slice %u[0, 0] [3, 2] [1, 1] : " + T33 + " to tensor<3x2xf32>\n"
     "%{n}_r = tensor.insert_slice %{n}_s into %{n}_p[0, 1] [3, 2] [1, 1] : tensor<3x2xf32> into " + T33 + "\n"
     "%{n}_o = arith.mulf %{n}_r, %u : " + T33,
     lambda x, p: torch.cat([p["p"][:, :1], u_of(x)[:, :2]], 1) * u_of(x)),
    ("tensor.concat", {"a": ((1, 3), (-1, 1)), "b": ((2, 3), (-1, 1))},
     "%{n}_r = tensor.concat dim(0) %{n}_a, %{n}_b : (tensor<1x3xf32>, tensor<2x3xf32>) -> " + T33 + "\n"
     "%{n}_o = arith.mulf %{n}_r, %u : " + T33,
     lambda x, p: torch.cat([p["a"], p["b"]], 0) * u_of(x)),
    ("tensor.pad (constant)", {"p": ((2, 2), (-1, 1))},
     "%{n}_r = tensor.pad %{n}_p low[1, 0] high[0, 1] {\n^bb0(%i: index, %j: index):\n"
     "  tensor.yield %c0 : f32\n} : tensor<2x2xf32> to " + T33 + "\n"
     "%{n}_o = arith.mulf %{n}_r, %u : " + T33,
     lambda x, p: F.pad(p["p"], (0, 1, 1, 0)) * u_of(x)),
]

FAMILIES = {"elementwise": ELEMENTWISE, "ties": TIES, "linalg": LINALG, "tensor": TENSOR}


def mlir_type(shape):
    return "tensor<" + "x".join(map(str, shape)) + "xf32>"


def model(cases):
    """The model: one parameter per (case, name), one branch per case."""
    params, args, body, outs = [], [], [], []
    for k, (_, ps, text, _) in enumerate(cases):
        n = f"c{k}"
        for pname, (shape, _) in ps.items():
            params.append((f"{n}_{pname}", shape))
        body.append("  " + text.replace("{n}", n).replace("\n", "\n  "))
        outs.append(f"%{n}_o")
    decls = "\n".join(f"gacc.param @{p} : {mlir_type(s)} = #gacc.zeros" for p, s in params)
    args = ", ".join(f"%{p}: {mlir_type(s)}" for p, s in params)
    sums = []
    acc = outs[0]
    for k, o in enumerate(outs[1:]):
        sums.append(f"  %sum{k} = arith.addf {acc}, {o} : {T33}")
        acc = f"%sum{k}"
    return f"""{decls}
gacc.train_step @adjoints params [{", ".join("@" + p for p, _ in params)}] attributes {{
    accum_steps = {N} : i64, micro_batch = {M} : i64,
    normalization = #gacc.normalization<sum>, optimizer = #gacc.sgd<lr = 0.01>}} {{
^bb0({args}, %x: tensor<3x4xf32>, %y: tensor<3xi32>):{PRELUDE}
{chr(10).join(body)}
{chr(10).join(sums)}
  %l = gacc.cross_entropy {acc}, %y : {T33}, tensor<3xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}}
""", params


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--family", required=True, choices=sorted(FAMILIES))
    ap.add_argument("--gacc-run", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--tol", type=float, default=1e-5)
    args = ap.parse_args()
    cases = FAMILIES[args.family]
    text, params = model(cases)
    os.makedirs(args.workdir, exist_ok=True)
    path = lambda f: os.path.join(args.workdir, f)  # noqa: E731
    with open(path("model.mlir"), "w") as f:
        f.write(text)
    rng = np.random.default_rng(7)
    init = {}
    for k, (_, ps, _, _) in enumerate(cases):
        for pname, (shape, values) in ps.items():
            # A (low, high) range to draw from, or the exact values (ties).
            init[f"c{k}_{pname}"] = (
                np.asarray(values, np.float32).reshape(shape) if len(values) != 2
                else rng.uniform(values[0], values[1], size=shape).astype(np.float32))
    x = rng.normal(size=(M * N, 4)).astype(np.float32)
    y = rng.integers(0, 3, size=M * N).astype(np.int32)
    safetensors_io.save(path("init.safetensors"), init)
    safetensors_io.save_any(path("data.safetensors"), {"input0": x, "input1": y})
    with open(path("order.txt"), "w") as f:
        f.write("\n".join(map(str, range(M * N))) + "\n")
    run = subprocess.run(
        [args.gacc_run, path("model.mlir"), "--dataset", "tensors", "--data", path("data.safetensors"),
         "--load-params", path("init.safetensors"), "--order-file", path("order.txt"),
         "--max-steps", "1", "--save-gradients", path("grads.safetensors")],
        capture_output=True, text=True)
    if run.returncode != 0:
        print(run.stdout + run.stderr)
        print("ADJOINTS FAILED: gacc-run exited with", run.returncode)
        return 1
    got = safetensors_io.load(path("grads.safetensors"))

    torch.set_default_dtype(torch.float64)
    p = {k: torch.tensor(v.astype(np.float64), requires_grad=True) for k, v in init.items()}
    xt, yt = torch.tensor(x.astype(np.float64)), torch.tensor(y.astype(np.int64))
    loss = 0
    for start in range(0, M * N, M):  # the same micro-batches
        xm = xt[start:start + M]
        logits = sum(f(xm, {pn: p[f"c{k}_{pn}"] for pn in ps})
                     for k, (_, ps, _, f) in enumerate(cases))
        loss = loss + F.cross_entropy(logits, yt[start:start + M], reduction="sum")
    loss.backward()
    ok = True
    for k, (name, ps, _, _) in enumerate(cases):
        worst = 0.0
        for pn in ps:
            ref = p[f"c{k}_{pn}"].grad.numpy()
            diff = np.abs(got[f"c{k}_{pn}"].astype(np.float64) - ref).max()
            worst = max(worst, diff / max(np.abs(ref).max(), 1e-12))
        good = worst <= args.tol
        ok &= good
        print(f"{name}: max relative difference {worst:.2e}{'' if good else '  FAILED'}")
    print("ADJOINTS OK" if ok else "ADJOINTS FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""Executes the arena kernels of gacc-build-arena-kernels on the CPU and
checks them against float64 references on random inputs.

For each optimizer variant a tiny model is compiled with
`gacc-opt -gacc-build-arena-kernels -gacc-lower-to-cpu-pipeline`, translated
to LLVM IR, assembled with llc and linked into a shared library that ctypes
calls (each memref argument expanded into allocated pointer, aligned
pointer, offset, size, stride). Checks:
  accumulate (f32, bf16, f16 gradients): first micro-batch writes without
    reading (the accumulator starts as NaN), later ones add, in fp32,
    against float64 sums of the exact low-precision gradient values; the
    non-finite flag for inf, NaN and an fp32 overflow, and not otherwise;
  sum of squares: against a float64 sum, and the same bits on every run;
  update: 3 optimizer steps of each optimizer against float64 torch.optim
    (Lion from its paper) with the count, loss scale, clipping, schedule and
    weight-decay group folded in; a window flagged non-finite changes
    nothing.
Usage: arena_kernels_check.py GACC_OPT MLIR_TRANSLATE LLC LIB_DIR WORK_DIR
"""
import ctypes
import json
import math
import os
import subprocess
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(__file__))
from torch_parity import Lion  # noqa: E402

gacc_opt, mlir_translate, llc, lib_dir, work = sys.argv[1:6]
os.makedirs(work, exist_ok=True)
rng = np.random.default_rng(7)
failures = []

MODEL = """
gacc.param @w : tensor<6x4xf32> = #gacc.zeros
gacc.param @b : tensor<6xf32> = #gacc.zeros {no_weight_decay}
gacc.train_step @s params [@w, @b] attributes {
    accum_steps = 2 : i64, micro_batch = 4 : i64,
    normalization = #gacc.normalization<mean>, optimizer = OPTIMIZER EXTRA} {
^bb0(%w: tensor<6x4xf32>, %b: tensor<6xf32>, %x: tensor<4x4xf32>, %y: tensor<4xi32>):
  %z = gacc.linear %x, %w bias %b : tensor<4x4xf32>, tensor<6x4xf32>, tensor<6xf32> -> tensor<4x6xf32>
  %l = gacc.cross_entropy %z, %y : tensor<4x6xf32>, tensor<4xi32> -> tensor<f32>
  gacc.yield %l : tensor<f32>
}
"""


def build(name, optimizer, extra=""):
    base = os.path.join(work, name)
    with open(base + ".mlir", "w") as f:
        f.write(MODEL.replace("OPTIMIZER", optimizer).replace("EXTRA", extra))
    subprocess.run([gacc_opt, base + ".mlir", "-gacc-build-arena-kernels",
                    "-gacc-lower-to-cpu-pipeline", "-o", base + ".llvm.mlir"], check=True)
    subprocess.run([mlir_translate, "--mlir-to-llvmir", base + ".llvm.mlir",
                    "-o", base + ".ll"], check=True)
    subprocess.run([llc, "-O2", "-filetype=obj", "-relocation-model=pic",
                    base + ".ll", "-o", base + ".o"], check=True)
    subprocess.run(["cc", "-shared", base + ".o", "-o", base + ".so",
                    "-L" + lib_dir, "-lgacc_runtime_c", "-Wl,-rpath," + lib_dir,
                    "-lm"], check=True)
    return ctypes.CDLL(base + ".so")


def memref(a):
    """The 5 descriptor fields of a contiguous 1-D array."""
    return [ctypes.c_void_p(a.ctypes.data), ctypes.c_void_p(a.ctypes.data),
            ctypes.c_int64(0), ctypes.c_int64(a.size), ctypes.c_int64(1)]


def check(what, ok, detail=""):
    print(f"{what}: {'ok' if ok else 'FAILED'} {detail}".rstrip())
    if not ok:
        failures.append(what)


def rel(a, b):
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


def bf16_bits(x):
    """float32 -> bf16 bit patterns, round to nearest even."""
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_value(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


# --- Accumulate -----------------------------------------------------------
def accumulate(lib, fn, acc, grad, weight, first, flag):
    getattr(lib, fn)(*memref(acc), *memref(grad), ctypes.c_float(weight),
                     ctypes.c_int32(first), *memref(flag))


n = 4096
for precision, gtype in [("fp32", "f32"), ("bf16", "bf16"), ("fp16", "f16")]:
    extra = ""
    if precision != "fp32":
        extra = f", precision = #gacc.precision<{precision}>"
        if precision == "fp16":
            extra += ", loss_scaling = #gacc.loss_scaling<>"
    lib = build(f"acc_{gtype}", "#gacc.sgd<lr = 0.1>", extra)
    fn = f"s_accumulate_arena_{gtype}"
    grads, exact = [], []
    for _ in range(3):
        g = rng.standard_normal(n).astype(np.float32) * 3
        if gtype == "bf16":
            bits = bf16_bits(g)
            grads.append(bits)
            exact.append(bf16_value(bits).astype(np.float64))
        elif gtype == "f16":
            h = g.astype(np.float16)
            grads.append(h)
            exact.append(h.astype(np.float64))
        else:
            grads.append(g)
            exact.append(g.astype(np.float64))
    weights = [1.0, 0.5, 2.0]
    acc = np.full(n, np.nan, dtype=np.float32)  # never read with first = 1
    flag = np.zeros(1, dtype=np.int32)
    ref = np.zeros(n)
    for k, (g, w) in enumerate(zip(grads, weights)):
        accumulate(lib, fn, acc, g, w, 1 if k == 0 else 0, flag)
        ref = ref + w * exact[k]
    check(f"accumulate {gtype}: first micro-batch writes, later ones add (fp32 vs float64)",
          rel(acc.astype(np.float64), ref) < 1e-6 and flag[0] == 0,
          f"rel {rel(acc.astype(np.float64), ref):.2e}, flag {flag[0]}")
    # Non-finite inputs raise the flag; it stays raised for the window.
    for label, value in [("inf", np.inf), ("nan", np.nan)]:
        g = grads[0].copy()
        if gtype == "bf16":
            g[1234] = bf16_bits(np.array([value], dtype=np.float32))[0]
        else:
            g[1234] = value
        flag[0] = 0
        accumulate(lib, fn, acc, g, 1.0, 1, flag)
        check(f"accumulate {gtype}: non-finite flag for {label}", flag[0] == 1)
        accumulate(lib, fn, acc, grads[1], 1.0, 1, flag)
        check(f"accumulate {gtype}: flag stays set for the window", flag[0] == 1)
    # A finite gradient whose weighted value overflows fp32.
    flag[0] = 0
    accumulate(lib, fn, acc, grads[0], 3.0e38, 1, flag)
    check(f"accumulate {gtype}: non-finite flag for an fp32 overflow", flag[0] == 1)

# --- Sum of squares -------------------------------------------------------
lib = build("sumsq", "#gacc.sgd<lr = 0.1>")
x = (rng.standard_normal(400000) * np.exp(rng.standard_normal(400000))).astype(np.float32)
partials = np.zeros(65792, dtype=np.float64)
out = [np.zeros(1), np.zeros(1)]
for o in out:
    lib.s_sum_squares_arena(*memref(x), *memref(partials), *memref(o))
ref = float(np.sum(x.astype(np.float64) ** 2))
check("sum of squares: float64 against numpy", abs(out[0][0] - ref) / ref < 1e-12,
      f"rel {abs(out[0][0] - ref) / ref:.2e}")
check("sum of squares: the same bits on every run", out[0].tobytes() == out[1].tobytes())

# --- Update -----------------------------------------------------------------
VARIANTS = [
    ("sgd", "#gacc.sgd<lr = 0.1, momentum = 0.9, dampening = 0.1, weight_decay = 1.0e-2>", "",
     {"name": "sgd", "lr": 0.1, "momentum": 0.9, "dampening": 0.1, "weight_decay": 1e-2}, None, None),
    ("nesterov", "#gacc.sgd<lr = 0.1, momentum = 0.9, nesterov = true>",
     ", lr_schedule = #gacc.lr_schedule<decay = \"linear\", decay_steps = 4, min_lr = 0.01>",
     {"name": "sgd", "lr": 0.1, "momentum": 0.9, "nesterov": True},
     {"decay": "linear", "decay_steps": 4, "min_lr": 0.01}, None),
    ("adam", "#gacc.adam<lr = 1.0e-3, beta1 = 0.8, weight_decay = 1.0e-2>",
     ", lr_schedule = #gacc.lr_schedule<warmup_steps = 2>, max_grad_norm = 0.5 : f64",
     {"name": "adam", "lr": 1e-3, "betas": (0.8, 0.999), "weight_decay": 1e-2},
     {"warmup_steps": 2}, 0.5),
    ("adamw", "#gacc.adamw<lr = 2.0e-3, weight_decay = 0.1>",
     ", lr_schedule = #gacc.lr_schedule<warmup_steps = 1, decay = \"cosine\", decay_steps = 3, min_lr = 1.0e-4>, max_grad_norm = 1.0 : f64",
     {"name": "adamw", "lr": 2e-3, "weight_decay": 0.1},
     {"warmup_steps": 1, "decay": "cosine", "decay_steps": 3, "min_lr": 1e-4}, 1.0),
    ("lion", "#gacc.lion<lr = 1.0e-4, weight_decay = 0.5>", "",
     {"name": "lion", "lr": 1e-4, "betas": (0.9, 0.99), "weight_decay": 0.5}, None, None),
]


def scheduled(spec, schedule, t):
    base = spec["lr"]
    if not schedule:
        return base
    w, decay = schedule.get("warmup_steps", 0), schedule.get("decay", "constant")
    if t < w:
        return base * (t + 1) / w
    if decay == "constant":
        return base
    prog = min(max((t - w) / schedule["decay_steps"], 0.0), 1.0)
    shape = 0.5 * (1 + math.cos(math.pi * prog)) if decay == "cosine" else 1 - prog
    return schedule["min_lr"] + (base - schedule["min_lr"]) * shape


def reference_optimizer(spec, params):
    spec = dict(spec)
    name, lr, wd = spec.pop("name"), spec.pop("lr"), spec.pop("weight_decay", 0.0)
    groups = [{"params": [params[0]], "weight_decay": wd},
              {"params": [params[1]], "weight_decay": 0.0}]
    if name == "sgd":
        return torch.optim.SGD(groups, lr=lr, **spec)
    if name == "adam":
        return torch.optim.Adam(groups, lr=lr, **spec)
    if name == "adamw":
        return torch.optim.AdamW(groups, lr=lr, **spec)
    return Lion(groups, lr=lr, **spec)


n, decay_end = 1000, 600
for name, attr, extra, spec, schedule, max_norm in VARIANTS:
    lib = build(f"update_{name}", attr, extra)
    states = {"sgd": 1, "nesterov": 1, "adam": 2, "adamw": 2, "lion": 1}[name]
    param = (rng.standard_normal(n) * 0.5).astype(np.float32)
    state = [np.zeros(n, dtype=np.float32) for _ in range(states)]
    p64 = [torch.tensor(param[:decay_end], dtype=torch.float64),
           torch.tensor(param[decay_end:], dtype=torch.float64)]
    opt = reference_optimizer(spec, p64)
    clipped = 0
    for t in range(3):
        acc = (rng.standard_normal(n) * 8).astype(np.float32)
        count, scale = float(rng.integers(20, 60)), float(2.0 ** rng.integers(0, 4))
        partials, ss = np.zeros(65792), np.zeros(1)
        lib.s_sum_squares_arena(*memref(acc), *memref(partials), *memref(ss))
        flag = np.zeros(1, dtype=np.int32)
        args = [*memref(param), *memref(acc)]
        for s_ in state:
            args += memref(s_)
        args += [ctypes.c_int64(decay_end), *memref(np.array([count], dtype=np.float32)),
                 *memref(ss), *memref(flag), ctypes.c_float(spec["lr"]),
                 ctypes.c_int64(t), ctypes.c_float(scale)]
        getattr(lib, "s_update_arena")(*args)
        # float64 reference: normalize once, clip, schedule, step.
        g = acc.astype(np.float64) / (count * scale)
        if max_norm is not None:
            coef = min(1.0, max_norm / (np.linalg.norm(g) + 1e-6))
            clipped += coef < 1.0
            g = g * coef
        for grp in opt.param_groups:
            grp["lr"] = scheduled(spec, schedule, t)
        p64[0].grad = torch.tensor(g[:decay_end])
        p64[1].grad = torch.tensor(g[decay_end:])
        opt.step()
    ref = np.concatenate([p.detach().numpy() for p in p64])
    err = rel(param.astype(np.float64), ref)
    detail = f"rel {err:.2e}" + (f", clipped {clipped} of 3" if max_norm else "")
    check(f"update {name}: 3 optimizer steps against float64 torch", err < 1e-5, detail)
    if max_norm is not None:
        check(f"update {name}: clipping active", clipped > 0)
    # A flagged window writes nothing.
    before = [param.copy()] + [s_.copy() for s_ in state]
    flag = np.ones(1, dtype=np.int32)
    acc = (rng.standard_normal(n) * 8).astype(np.float32)
    args = [*memref(param), *memref(acc)]
    for s_ in state:
        args += memref(s_)
    args += [ctypes.c_int64(decay_end), *memref(np.array([32.0], dtype=np.float32)),
             *memref(np.ones(1)), *memref(flag), ctypes.c_float(spec["lr"]),
             ctypes.c_int64(3), ctypes.c_float(1.0)]
    lib.s_update_arena(*args)
    after = [param] + state
    check(f"update {name}: a non-finite window changes nothing",
          all(a.tobytes() == b.tobytes() for a, b in zip(before, after)))

print(f"arena kernels: {len(failures)} failed")
sys.exit(1 if failures else 0)

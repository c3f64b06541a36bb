"""Rewrites a safetensors file of F32 tensors as F16, as BF16 (each value's
upper 16 bits), or with one tensor as U8, and checks that a file gacc-run
saved after loading the F16 or BF16 one holds exactly the widened values."""
import sys

import numpy as np

sys.path.insert(0, sys.argv[1])
import safetensors_io as st  # noqa: E402

mode, src, dst = sys.argv[2], sys.argv[3], sys.argv[4]
tensors = st.load(src)


def bf16_bits(a):
    return (a.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)


if mode == "f16":
    st.save_any(dst, {k: v.astype(np.float16) for k, v in tensors.items()})
elif mode == "bf16":
    st.save_any(dst, {k: bf16_bits(v) for k, v in tensors.items()},
                dtypes={k: "BF16" for k in tensors})
elif mode == "u8":
    first = sorted(tensors)[0]
    arrays = dict(tensors)
    arrays[first] = (tensors[first] > 0).astype(np.uint8)
    st.save_any(dst, arrays)
elif mode in ("check-f16", "check-bf16"):
    saved = st.load(dst)
    worst = 0
    for k, v in tensors.items():
        if mode == "check-f16":
            want = v.astype(np.float16).astype(np.float32)
        else:
            want = (bf16_bits(v).astype(np.uint32) << 16).view(np.float32)
        assert saved[k].dtype == np.float32, k
        worst = max(worst, int(np.sum(saved[k] != want)))
    print("%s: %d tensors, %d elements differ from the widened values"
          % (mode, len(tensors), worst))

"""Minimal safetensors reader for the tests (numpy only): an 8-byte
little-endian header length, a JSON header, then the raw data."""
import json
import struct

import numpy as np

DTYPES = {"F32": np.float32, "I32": np.int32, "I64": np.int64, "F64": np.float64}


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    body = data[8 + n:]
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        b, e = t["data_offsets"]
        out[name] = np.frombuffer(body[b:e], dtype=DTYPES[t["dtype"]]).reshape(t["shape"]).copy()
    return out


NAMES = {np.dtype(np.float32): "F32", np.dtype(np.int32): "I32", np.dtype(np.int64): "I64",
         np.dtype(np.float16): "F16", np.dtype(np.uint8): "U8"}


def save_any(path, tensors, dtypes=None):
    """Writes F32, I32, I64, F16 or U8 arrays as they are; `dtypes` names
    the dtype of some tensors instead (BF16 bits held in uint16)."""
    header, offset, blobs = {}, 0, []
    for name, arr in tensors.items():
        arr = np.ascontiguousarray(arr)
        dtype = (dtypes or {}).get(name) or NAMES[arr.dtype]
        header[name] = {"dtype": dtype, "shape": list(arr.shape),
                        "data_offsets": [offset, offset + arr.nbytes]}
        offset += arr.nbytes
        blobs.append(arr.tobytes())
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def save(path, tensors):
    """Writes the arrays as F32."""
    save_any(path, {k: np.asarray(v, dtype=np.float32) for k, v in tensors.items()})

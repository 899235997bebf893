"""A small safetensors writer for the known-answer scripts (numpy arrays and string metadata)."""
import json
import os
import struct

import numpy as np

DT = {np.dtype("int64"): "I64", np.dtype("float32"): "F32", np.dtype("uint32"): "U32",
      np.dtype("uint64"): "U64", np.dtype("uint16"): "BF16", np.dtype("int32"): "I32"}


def write(path, tensors, meta):
    header, blobs, off = {}, [], 0
    for name, a in tensors.items():
        a = np.ascontiguousarray(a)
        header[name] = {"dtype": DT[a.dtype], "shape": list(a.shape), "data_offsets": [off, off + a.nbytes]}
        blobs.append(a.tobytes())
        off += a.nbytes
    header["__metadata__"] = {k: str(v) for k, v in meta.items()}
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path + ".tmp", "wb") as f:  # whole or not at all: written aside, then renamed
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))
    os.replace(path + ".tmp", path)
    print(f"wrote {path}: {os.path.getsize(path)} bytes", flush=True)

#!/usr/bin/env python3
"""Writes the seed inputs of the fuzz targets into fuzz/corpus/<target>/ (no
dependencies beyond the standard library). The fuzzers add what they find to
the same folders; `ci/fuzz.sh` runs them on it."""
import json
import pathlib
import shutil
import struct

root = pathlib.Path(__file__).resolve().parent
corpus = root / "corpus"


def safetensors(tensors, metadata=None):
    """tensors: name -> (dtype, shape, bytes), laid out back to back."""
    header, data = {}, b""
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    if metadata:
        header["__metadata__"] = metadata
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


def f32(*v):
    return struct.pack(f"<{len(v)}f", *v)


def seed(target, name, data):
    d = corpus / target
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(data)


rows, V = 2, 5
logits = f32(0.5, 2.0, -1.0, float("-inf"), 2.0, 1.0, 1.0, 0.0, -3.0, 4.0)
noise = f32(1.0, 0.5, 2.0, 1.0, 0.25, 0.1, 3.0, 1.0, 0.0, 2.0)
seed("safetensors_reader", "two_rows_f32", safetensors({
    "logits": ("F32", [rows, V], logits), "noise": ("F32", [rows, V], noise),
    "temperatures": ("F32", [rows], f32(0.0, 0.7)), "tokens": ("I32", [rows], struct.pack("<2i", 1, 4))},
    {"eps": "1e-10", "scaling_order": "post"}))
bf16 = b"".join(struct.pack("<f", x)[2:] for x in struct.unpack("<10f", logits))
seed("safetensors_reader", "shared_noise_bf16", safetensors({
    "logits": ("BF16", [rows, V], bf16), "noise": ("F32", [1, V], noise[:4 * V]),
    "temperatures": ("F32", [rows], f32(1.0, 1e-5)), "tokens": ("I64", [rows], struct.pack("<2q", 1, 3))},
    {"stages": "1", "exp_ulp": "1", "div_ulp": "0.5"}))

seed("sampler_reply", "hello", safetensors({}, {"type": "hello", "protocol": "1", "name": "seed",
                                                 "scaling_order": "post", "exp_ulp": "2", "div_ulp": "0.5", "stages": "2"}))
seed("sampler_reply", "tokens", safetensors({"tokens": ("I32", [3], struct.pack("<3i", 0, 4, 2))},
                                            {"type": "tokens", "id": "7"}))
seed("sampler_reply", "error", safetensors({}, {"type": "error", "id": "7", "message": "out of memory"}))

(corpus / "case_reader").mkdir(parents=True, exist_ok=True)
for f in sorted((root.parent / "properties" / "corpus").glob("*.json"))[:8]:  # saved counterexamples
    shutil.copy(f, corpus / "case_reader")

for i, args in enumerate([
        ["check", "--cases", "100", "--seed", "20261130", "--no-mutants"],
        ["check", "--sampler", "python3 s.py", "--exp-ulp", "2", "--stages", "1", "--scaling-order", "pre"],
        ["verify", "dump.safetensors", "--show", "3", "--json", "r.json"],
        ["mutants", "--mutants", "fused-post~no_m_safe", "--cases", "50", "--timeout", "30"],
        ["divergence", "--temperatures", "0.5", "1", "--rows", "8", "--vocab", "4096", "--dtype", "f32"],
        ["bench", "--block-v", "4096", "--rows", "1", "8", "--dtypes", "bf16"],
        ["replay", "--property", "AgreesWithOracle", "--kernel", "fused-post", "--reproduce", "abc"],
        ["list"], ["--version"], ["check", "--help"]]):
    seed("cli_args", f"args{i}", b"\0".join(a.encode() for a in args))

rows_bytes = [bytes([5, 0]) + b"\x10\x00" + b"\x04\x04" + f32(0.7) + f32(0.0, 1.0, 1.0, -1.0, 3.0) + f32(1.0, 2.0, 0.5, 1.0, 0.0),
              bytes([3, 1]) + b"\x00\x01" + b"\x04\x04" + f32(0.0) + f32(2.0, 2.0, 1.0) + f32(1.0, 1.0, 1.0),
              bytes([1, 2]) + b"\x00\x00" + b"\x00\x00" + f32(1.0) + f32(float("-inf")) + f32(1.0)]
for i, b in enumerate(rows_bytes):
    seed("oracle_decide", f"row{i}", b)

"""Known answers for the stream versions that follow the libraries as they are
now (docs/NOISE_STREAMS.md, "Known answers"), drawn on a GPU:

    python3 tests/oracle/known_answers/draw_stream_versions.py OUTDIR FLASHINFER_DIR

- flashinfer_tokens.safetensors: the tokens of FlashInfer's own
  SamplingFromLogits (its header, compiled from FLASHINFER_DIR/include) on zero
  fp32 logits, for V in every residue class mod 4 and past the 32-bit wrap of
  its row x V subsequence. FLASHINFER_DIR/version.txt names the release.
- triton_gumbel_v2.safetensors: vLLM Model Runner V2's current draw in Triton,
  u = max(tl.rand(tl.randint(seed, position), id), 4.6566127342e-10),
  E = -log1p(-u) in fp32 (libdevice), and the largest relative error of that
  log1p over every uniform tl.rand can return.

tests/oracle/noise_streams_tests.cpp replays both on the CPU. Needs torch with
CUDA, Triton and nvcc.
"""
import os
import subprocess
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_out import write  # noqa: E402

OUT, FI = sys.argv[1], sys.argv[2]
HERE = os.path.dirname(os.path.abspath(__file__))
props = torch.cuda.get_device_properties(0)
meta = {"torch": torch.__version__, "device": props.name, "cuda": torch.version.cuda}
print(meta, flush=True)

# ---- FlashInfer ------------------------------------------------------------------------------
version = open(os.path.join(FI, "version.txt")).read().split()
exe = os.path.join(OUT, "..", "flashinfer_tokens")
subprocess.run(["nvcc", "-O2", "-std=c++17", "-arch=sm_90", "-I", os.path.join(FI, "include"), "-o", exe,
                os.path.join(HERE, "flashinfer_tokens.cu")], check=True)
# (name, vocab, rows, seed, offset, first row kept, rows kept); "wrap": row x V passes 2^32 in row 26214
cases = [(f"v{V}", V, 512, 1000 + V, 8 * (V % 3), 0, 512) for V in (2, 3, 5, 6, 7, 8, 4097, 4098)]
cases += [("v163840", 163840, 16, 0x9E3779B97F4A7C15, 4 * 12345, 0, 16),
          ("wrap", 163840, 26240, 77, 0, 26208, 32)]
tensors, m = {}, dict(meta, flashinfer=version[0], flashinfer_commit=version[1] if len(version) > 1 else "")
for name, V, rows, seed, offset, first, count in cases:
    binf = os.path.join(OUT, "..", f"{name}.bin")
    subprocess.run([exe, str(seed), str(offset), str(rows), str(V), str(first), str(count), binf], check=True)
    tensors[f"{name}.token"] = np.fromfile(binf, dtype=np.int32)
    m.update({f"{name}.vocab": V, f"{name}.rows": rows, f"{name}.seed": seed, f"{name}.offset": offset,
              f"{name}.first": first})
    print(name, tensors[f"{name}.token"][:8], flush=True)
m["cases"] = ",".join(c[0] for c in cases)
write(os.path.join(OUT, "flashinfer_tokens.safetensors"), tensors, m)

# ---- vLLM Model Runner V2's current draw (Triton) --------------------------------------------
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton.language.extra import libdevice  # noqa: E402

U_MIN = 4.6566127342e-10  # the smallest positive tl.rand, vLLM's clamp


@triton.jit
def mrv2_current(seed_ptr, pos_ptr, u_ptr, e_ptr, g_ptr, V, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    b = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    gs = tl.randint(tl.load(seed_ptr + r), tl.load(pos_ptr + r))
    u = tl.maximum(tl.rand(gs, b), 4.6566127342e-10)
    e = -libdevice.log1p(-u)
    tl.store(u_ptr + r * V + b, u, mask=b < V)
    tl.store(e_ptr + r * V + b, e, mask=b < V)
    tl.store(g_ptr + r * V + b, -tl.log(e), mask=b < V)


@triton.jit
def log1p_error(out_ptr, BLOCK: tl.constexpr):
    """Largest |E32 - E64| / E64 over y in this block of [0, 2^31): u as tl.rand forms it from y."""
    y = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    u = tl.maximum(y.to(tl.int32).to(tl.float32) * 4.6566127342e-10, 4.6566127342e-10)
    e32 = -libdevice.log1p(-u)
    e64 = -libdevice.log1p(-(u.to(tl.float64)))
    ok = u < 1.0
    rel = tl.where(ok, tl.abs(e32.to(tl.float64) - e64) / e64, 0.0)
    tl.store(out_ptr + tl.program_id(0), tl.max(rel, axis=0))


rows, V = 6, 5000
seeds_t = torch.tensor([0, 1, 12345, 2**31 + 7, 2**40 + 1, 2**62 + 99], dtype=torch.int64, device="cuda")
pos_t = torch.tensor([0, 1, 17, 2**31 + 5, 2**33 + 1, 1000], dtype=torch.int64, device="cuda")
u, e, g = (torch.empty(rows, V, device="cuda") for _ in range(3))
mrv2_current[(rows, triton.cdiv(V, 1024))](seeds_t, pos_t, u, e, g, V, BLOCK=1024)
BLOCK = 1 << 12
worst = torch.empty(2**31 // BLOCK, dtype=torch.float64, device="cuda")
log1p_error[(2**31 // BLOCK,)](worst, BLOCK=BLOCK)
rel = float(worst.max())
print(f"libdevice log1pf: largest relative error of E over every tl.rand uniform: {rel:.4g} = {rel / 2**-23:.4f} x 2^-23",
      flush=True)
write(os.path.join(OUT, "triton_gumbel_v2.safetensors"),
      {"seed": seeds_t.cpu().numpy(), "position": pos_t.cpu().numpy(), "uniform": u.cpu().numpy(),
       "noise": e.cpu().numpy(), "gumbel": g.cpu().numpy()},
      dict(meta, triton=triton.__version__, log1p_max_rel=repr(rel)))

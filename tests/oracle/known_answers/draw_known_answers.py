"""Known answers from the real libraries, drawn on a GPU (docs/NOISE_STREAMS.md, "Known answers").

    python3 tests/oracle/known_answers/draw_known_answers.py OUTDIR

Writes small safetensors fixtures that tests/oracle/noise_streams_tests.cpp
replays word for word on the CPU: torch's CUDA uniform_/exponential_ (whole
tensor and per-row generators, fp32 and bf16, two offsets), Triton's
randint/rand as vLLM's Model Runner V2 keys them, and cuRAND's Philox words
and uniforms. Needs torch with CUDA, Triton, nvcc.
"""
import os
import subprocess
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_out import write  # noqa: E402

OUT = sys.argv[1]
HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20261204)
props = torch.cuda.get_device_properties(0)
meta = {"torch": torch.__version__, "device": props.name, "sm_count": props.multi_processor_count,
        "max_threads_per_sm": props.max_threads_per_multi_processor}
print(meta, flush=True)


def gen(seed, offset):
    g = torch.Generator(device="cuda")
    g.manual_seed(seed)
    g.set_offset(offset)
    return g


def pick(n, special):
    idx = set(range(min(n, 1024))) | set(range(max(0, n - 1024), n)) | set(rng.integers(0, n, 6000).tolist())
    T4 = 4 * 256 * min((n + 255) // 256, props.multi_processor_count * props.max_threads_per_multi_processor // 256)
    for c in range(1, n // T4 + 1):
        idx |= set(range(max(0, c * T4 - 8), min(n, c * T4 + 8)))
    idx |= set(special.tolist())
    return np.array(sorted(idx), dtype=np.int64)


tensors, m = {}, dict(meta)
cases = [("whole", 8, 151936, 0x9e3779b97f4a7c15, 0), ("whole_small", 4, 1000, 12345, 0),
         ("whole_offset", 8, 151936, 7, 4 * 1000003)]
for name, rows, V, seed, offset in cases:
    g = gen(seed, offset)
    u = torch.empty(rows, V, device="cuda").uniform_(generator=g)
    after = g.get_offset()
    e = torch.empty(rows, V, device="cuda").exponential_(generator=gen(seed, offset))
    eb = torch.empty(rows, V, device="cuda", dtype=torch.bfloat16).exponential_(generator=gen(seed, offset))
    uf = u.flatten().cpu().numpy()
    special = np.nonzero((uf >= 1 - 2.0**-24) | (uf == 0))[0]
    idx = pick(rows * V, special)
    tensors[f"{name}.index"] = idx
    tensors[f"{name}.uniform"] = uf[idx]
    tensors[f"{name}.exponential"] = e.flatten().cpu().numpy()[idx]
    tensors[f"{name}.exponential_bf16"] = eb.flatten().view(torch.int16).cpu().numpy().view(np.uint16)[idx]
    m.update({f"{name}.seed": seed, f"{name}.offset": offset, f"{name}.rows": rows, f"{name}.vocab": V,
              f"{name}.offset_after": after, f"{name}.special": len(special)})
    print(name, "offset after", after, "special", len(special), flush=True)
# per-row generators: q[i].exponential_(generator=g_i)
rows, V = 3, 151936
seeds, offsets = [11, 2**40 + 3, 2**63 + 5], [0, 8, 4 * 777]
for i in range(rows):
    q = torch.empty(rows, V, device="cuda")
    qu = torch.empty(rows, V, device="cuda")
    qu[i].uniform_(generator=gen(seeds[i], offsets[i]))
    q[i].exponential_(generator=gen(seeds[i], offsets[i]))
    uf = qu[i].cpu().numpy()
    idx = pick(V, np.nonzero(uf >= 1 - 2.0**-24)[0])
    tensors[f"row{i}.index"] = idx
    tensors[f"row{i}.uniform"] = uf[idx]
    tensors[f"row{i}.exponential"] = q[i].cpu().numpy()[idx]
    m.update({f"row{i}.seed": seeds[i], f"row{i}.offset": offsets[i], f"row{i}.vocab": V})
write(os.path.join(OUT, "torch_cuda_exponential.safetensors"), tensors, m)

# Triton, as vLLM's Model Runner V2 keys it
import triton
import triton.language as tl


@triton.jit
def mrv2(seed_ptr, pos_ptr, word_ptr, g_ptr, u_ptr, V, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    b = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    seed = tl.load(seed_ptr + r)
    pos = tl.load(pos_ptr + r)
    gs = tl.randint(seed, pos)
    tl.store(word_ptr + r, gs)
    x = tl.rand(gs, b)
    tl.store(u_ptr + r * V + b, x, mask=b < V)
    gn = -tl.log(-tl.log(x.to(tl.float64) + 1e-20) + 1e-20)
    tl.store(g_ptr + r * V + b, gn.to(tl.float32), mask=b < V)


rows, V = 6, 5000
seeds_t = torch.tensor([0, 1, 12345, 2**31 + 7, 2**40 + 1, 2**62 + 99], dtype=torch.int64, device="cuda")
pos_t = torch.tensor([0, 1, 17, 2**31 + 5, 2**33 + 1, 1000], dtype=torch.int64, device="cuda")
word = torch.zeros(rows, dtype=torch.int64, device="cuda")
g = torch.empty(rows, V, device="cuda")
u = torch.empty(rows, V, device="cuda")
mrv2[(rows, triton.cdiv(V, 1024))](seeds_t, pos_t, word, g, u, V, BLOCK=1024)
import inspect
try:
    src = inspect.getsource(tl.random.philox.fn) + inspect.getsource(tl.random.randint.fn) + inspect.getsource(tl.random.philox_impl.fn)
    print(src[:6000])
except Exception as ex:  # noqa
    print("no source", ex)
write(os.path.join(OUT, "triton_philox.safetensors"),
      {"seed": seeds_t.cpu().numpy(), "position": pos_t.cpu().numpy(), "word": word.cpu().numpy(),
       "uniform": u.cpu().numpy(), "gumbel": g.cpu().numpy()}, {"triton": triton.__version__, **meta})

# cuRAND Philox words (the layouts of aiter and FlashInfer draw from curand_init(seed, subsequence, offset))
exe = os.path.join(OUT, "..", "curand_words")
subprocess.run(["nvcc", "-O2", "-arch=sm_90", "-o", exe, os.path.join(HERE, "curand_words.cu")], check=True)
print(subprocess.run([exe, "logf"], check=True, capture_output=True, text=True).stdout, flush=True)
subs = [0, 1, 2, 1023, 1024 * 5 + 17, 2**32 - 1, 2**32 + 3, 151936 * 7 + 12, 2**63 + 11]
ct, cm = {}, {"cuda": torch.version.cuda, **meta}
for k, (seed, offset) in enumerate([(0, 0), (0x123456789abcdef0, 8), (42, 4 * 2**33), (42, 6)]):
    binf = os.path.join(OUT, "..", f"w{k}.bin")
    subprocess.run([exe, str(seed), str(offset), "3", binf] + [str(s) for s in subs], check=True)
    raw = np.fromfile(binf, dtype=np.uint32)
    n = len(subs) * 3 * 4
    ct[f"draw{k}.subsequence"] = np.array(subs, dtype=np.uint64)
    ct[f"draw{k}.word"] = raw[:n].reshape(len(subs), 3, 4)
    ct[f"draw{k}.uniform"] = raw[n:].view(np.float32).reshape(len(subs), 3, 4)
    cm[f"draw{k}.seed"] = seed
    cm[f"draw{k}.offset"] = offset
write(os.path.join(OUT, "curand_philox.safetensors"), ct, cm)

# The sources the streams are pinned to, for the record
inc = os.path.join(os.path.dirname(torch.__file__), "include", "ATen")
for f, pats in [("core/TransformationHelper.h", ["exponential", "epsilon", "__logf", "log("]),
                ("native/cuda/DistributionTemplates.h", ["block_size", "grid", "counter_offset", "curand_init",
                                                         "blocks_per_sm", "unroll", "exponential"])]:
    p = os.path.join(inc, f)
    print("====", f)
    for i, line in enumerate(open(p)):
        if any(s in line for s in pats):
            print(i + 1, line.rstrip())

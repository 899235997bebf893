"""The fused two-launch exponential race in Triton (docs/SPEC.md §2,
post-scale), served to raceoracle over the sampler protocol:

    raceoracle check --sampler "python3 examples/triton_race_sampler.py [BLOCK_V]"
    raceoracle mutants --sampler "python3 examples/triton_race_sampler.py 1024 high_id_tie"

A third argument builds it with one deliberate defect (DEFECTS): the suite
must then fail it.

Stage 1, one program per (row, tile of BLOCK_V ids): the tile max m, and
either (greedy row) the lowest id of m, or (sampling row) the best key
exp((x - m_safe) / t) / (E + eps) and its lowest id; m_safe = 0 for an all
-inf tile. Stage 2, one program per row: greedy, the tile of the largest max;
sampling, the best key rescaled by exp((m_tile - m_row) / t); lowest tile on
ties. No clamp of the result. NaN logits act as masked ids; NaN keys (from
out-of-contract noise or temperature) never beat a real one.
"""
import os
import sys

import torch
import triton
import triton.language as tl

try:
    from triton.language.extra import libdevice  # Triton 3
except ImportError:  # pragma: no cover
    from triton.language.extra.cuda import libdevice

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import raceoracle  # noqa: E402

# libdevice expf (2 ulp, as CUDA documents expf), fp32 '/' and 1/t within 2
# ulps, and the stage-2 rescale: the fused kernels' contract.
CONTRACT = dict(scaling_order="post", exp_ulp=2, div_ulp=2, stages=2)
NEG_INF = tl.constexpr(float("-inf"))


@triton.jit
def _stage1(logits, noise, temps, part_m, part_key, part_idx, V, logit_stride, noise_stride, tiles, eps, greedy_eps,
            BLOCK_V: tl.constexpr, TIE_LEFT: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    tile = tl.program_id(1)
    ids = tile * BLOCK_V + tl.arange(0, BLOCK_V)
    inside = ids < V
    x = tl.load(logits + row * logit_stride + ids, mask=inside, other=NEG_INF).to(tl.float32)
    x = tl.where(x != x, NEG_INF, x)
    T = tl.load(temps + row)
    m = tl.max(x, axis=0)
    if T <= greedy_eps:
        best = tl.argmax(x, axis=0, tie_break_left=TIE_LEFT)
        key = tl.full([], 0.0, tl.float32)
    else:
        e = tl.load(noise + row * noise_stride + ids, mask=inside, other=1.0)
        m_safe = tl.where(m == NEG_INF, 0.0, m)
        inv_t = 1.0 / tl.maximum(T, 1e-5)
        k = libdevice.exp((x - m_safe) * inv_t) / (e + eps)
        k = tl.where(inside & (k == k), k, -1.0)
        best = tl.argmax(k, axis=0, tie_break_left=TIE_LEFT)
        key = tl.max(k, axis=0)
    out = row * tiles + tile
    tl.store(part_m + out, m)
    tl.store(part_key + out, key)
    tl.store(part_idx + out, tile * BLOCK_V + best)


@triton.jit
def _stage2(part_m, part_key, part_idx, temps, tokens, tiles, greedy_eps, BLOCK_T: tl.constexpr,
            TIE_LEFT: tl.constexpr, RESCALE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    t = tl.arange(0, BLOCK_T)
    inside = t < tiles
    pm = tl.load(part_m + row * tiles + t, mask=inside, other=NEG_INF)
    T = tl.load(temps + row)
    if T <= greedy_eps:
        best = tl.argmax(pm, axis=0, tie_break_left=TIE_LEFT)
    else:
        pk = tl.load(part_key + row * tiles + t, mask=inside, other=-1.0)
        mm = tl.max(pm, axis=0)
        mm_safe = tl.where(mm == NEG_INF, 0.0, mm)
        inv_t = 1.0 / tl.maximum(T, 1e-5)
        k = pk
        if RESCALE:
            k = pk * libdevice.exp((pm - mm_safe) * inv_t)
        k = tl.where(inside & (k == k), k, -2.0)
        best = tl.argmax(k, axis=0, tie_break_left=TIE_LEFT)
    tl.store(tokens + row, tl.load(part_idx + row * tiles + best))


DEFECTS = ("high_id_tie", "no_rescale")  # ties to the highest id; stage 2 skips the cross-tile rescale


def make_race(block_v=1024, defect=None):
    if defect not in (None,) + DEFECTS:
        raise ValueError("unknown defect %r; known: %s" % (defect, ", ".join(DEFECTS)))
    tie_left, rescale = defect != "high_id_tie", defect != "no_rescale"

    def race(logits, noise, temperatures, eps, greedy_eps):
        rows, V = logits.shape
        tiles = triton.cdiv(V, block_v)
        dev = logits.device
        part_m = torch.empty(rows, tiles, dtype=torch.float32, device=dev)
        part_key = torch.empty_like(part_m)
        part_idx = torch.empty(rows, tiles, dtype=torch.int32, device=dev)
        tokens = torch.empty(rows, dtype=torch.int32, device=dev)
        noise_stride = 0 if noise.shape[0] == 1 else noise.stride(0)
        _stage1[(rows, tiles)](logits, noise, temperatures, part_m, part_key, part_idx, V, logits.stride(0),
                               noise_stride, tiles, eps, greedy_eps, BLOCK_V=block_v, TIE_LEFT=tie_left,
                               num_warps=8 if block_v >= 2048 else 4)
        _stage2[(rows,)](part_m, part_key, part_idx, temperatures, tokens, tiles, greedy_eps,
                         BLOCK_T=max(16, triton.next_power_of_2(tiles)), TIE_LEFT=tie_left, RESCALE=rescale)
        return tokens

    race.__name__ = "triton_race_%d" % block_v + ("_" + defect if defect else "")
    return race


if __name__ == "__main__":
    block_v = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
    defect = sys.argv[2] if len(sys.argv) > 2 else None
    race = make_race(block_v, defect)
    raceoracle.serve(race, tensors="torch", device="cuda", name=race.__name__.replace("_", "-"), **CONTRACT)

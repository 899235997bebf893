"""Samplers of the field as they are written, each served with the
conventions it follows declared (docs/CONVENTIONS.md), so that raceoracle
judges it by what it does and reports where that departs from SPEC §1:

    raceoracle check --sampler "python3 examples/field_samplers.py greedy-at-zero"
    raceoracle check --sampler "python3 examples/field_samplers.py vllm-v1" --definition   # fails, deviations named
    raceoracle check --sampler "python3 examples/field_samplers.py vllm-v1 cuda"          # on a GPU

- greedy-at-zero: the race of torch_race_sampler.py, greedy only when T == 0
  (aiter's rule): a negative T or one in (0, greedy_eps] samples at t = 1e-5.
- vllm-v1: vLLM V1's Sampler as written (vllm/v1/sample/sampler.py): greedy
  rows by T < 1e-5 take the argmax of the raw logits; the others divide the
  logits by T (true division), take torch's fp32 softmax and race
  probs.div_(q).argmax(): no eps, so a zero draw divides by zero (its noise,
  torch's exponential_, never draws 0); a NaN logit poisons its row.
  Declared: x / T, normalised by the softmax sum, greedy T < 1e-5, no eps.
- highest-id-reductions: SPEC §1's race whose reductions keep their left
  operand only on `>` (FlashInfer's): equal maxima and equal keys go to the
  highest id, and a fully masked row gives the id the reduction kept (here
  V - 1). Declared: tie_rule highest_id, fully_masked any.
- ties-to-highest-id: the same with id 0 for a fully masked row. Declared:
  tie_rule highest_id.
- batch-invariant: torch_race_sampler's race declaring batch_invariance
  exact: its token bit for bit the same alone and among batchmates.
- gumbel-log-domain: the log-domain race of vLLM's Model Runner V2
  (gumbel_sample): argmax of x / T + (-log(E + 1e-20)), E the given noise
  (its own draw, -log(u + 1e-20), is a noise stream); greedy only when
  T == 0; a NaN logit poisons its row. Declared: key_domain log, x / T,
  eps 1e-20 of its own.
- bf16-log-domain: a log-domain race in the logits' dtype: x / T and
  -log(E + eps) rounded to bf16 and added in bf16; SPEC §1's conventions.
  Declared: key_domain log, key_dtype bf16. (FlashInfer's sampling_from_logits
  is not such a race: its Python binding casts the logits to fp32 first and
  races in fp32; its own noise is the flashinfer-curand stream.)
- bf16-log-domain-declared-f32: the same race declaring fp32 arithmetic: a
  contract that does not describe it, which raceoracle fails.
- vllm-v1-drawn (CUDA only): vllm-v1 drawing its own noise as vLLM V1 does,
  `q.exponential_(generator=g)` inside the sampler, g at the seed and offset
  raceoracle hands it; declares noise_stream torch-cuda-exponential and echoes q.
  vllm-v1-drawn-other-seed and vllm-v1-drawn-stale-offset (CUDA only): the
  same with the field's generator defects (another seed than declared; the
  offset never advanced), which raceoracle must kill.
- mrv2-triton-gumbel (CUDA only): Model Runner V2's gumbel_sample as it was
  until 2026 (stream_version 1; vLLM now draws -log1p(-u) in fp32, version 2,
  mrv2-triton-gumbel-current), as a Triton kernel: g = -log(-log(tl.rand(tl.randint(seed, pos), id) + 1e-20) + 1e-20)
  in float64, argmax of x / T + g per block, then across blocks; declares
  noise_stream vllm-triton-gumbel (the offset is the position). T is clamped
  at 1e-5 before the kernel, as SPEC §1 does; vLLM divides by T unclamped, a
  convention raceoracle does not model.
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from broken_samplers import greedy_only_at_zero  # noqa: E402
from torch_race_sampler import CONTRACT, race  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import raceoracle  # noqa: E402

_SAMPLING_EPS = 1e-5  # vLLM's threshold: T below it is greedy


def vllm_v1(logits, noise, temperatures, eps, greedy_eps):
    x = logits.float()
    greedy = temperatures < _SAMPLING_EPS
    t = torch.where(greedy, torch.ones_like(temperatures), temperatures)  # greedy rows are divided by 1
    probs = torch.softmax(x / t.unsqueeze(1), dim=-1)
    sampled = probs.div_(noise).argmax(dim=-1)
    return torch.where(greedy, x.argmax(dim=-1), sampled)


def _argmax_highest(a):
    """The highest index of each row's maximum (torch's argmax gives the lowest)."""
    return a.shape[-1] - 1 - torch.flip(a, dims=[-1]).argmax(dim=-1)


def highest_id_reductions(logits, noise, temperatures, eps, greedy_eps):
    """A race whose reductions keep their left operand only on `>` (FlashInfer's): ties go to the highest id,
    and a fully masked row (every key -inf, NaN softmax) gives whichever id the reduction kept."""
    x = logits.float().masked_fill(logits.isnan(), float("-inf"))
    greedy = temperatures <= greedy_eps
    probs = torch.softmax(x / temperatures.clamp_min(1e-5).unsqueeze(1), dim=-1)
    return torch.where(greedy, _argmax_highest(x), _argmax_highest(probs / (noise + eps)))


def ties_to_highest_id(logits, noise, temperatures, eps, greedy_eps):
    """highest_id_reductions with SPEC §1's id 0 for a fully masked row."""
    tokens = highest_id_reductions(logits, noise, temperatures, eps, greedy_eps)
    return torch.where((logits.float() == float("-inf")).all(dim=-1), 0, tokens)


def gumbel_log_domain(logits, noise, temperatures, eps, greedy_eps):
    x = logits.float()
    greedy = temperatures == 0
    t = temperatures.clamp_min(1e-5).unsqueeze(1)  # negative T samples at 1e-5, as greedy_rule "zero" states
    scores = x / t + (-torch.log(noise + 1e-20))
    return torch.where(greedy, x.argmax(dim=-1), scores.argmax(dim=-1))


def bf16_log_domain(logits, noise, temperatures, eps, greedy_eps):
    x = logits.float()
    x = x.masked_fill(x.isnan(), float("-inf"))  # a NaN logit is treated as a masked id
    greedy = temperatures <= greedy_eps  # fp32 compare: the Python float is taken as fp32
    t = temperatures.clamp_min(1e-5).unsqueeze(1)
    scores = (x / t).bfloat16() + (-torch.log(noise + eps)).bfloat16()  # a bf16 sum, rounded to bf16
    return torch.where(greedy, x.argmax(dim=-1), scores.argmax(dim=-1))


def _vllm_v1_drawn_with(generator, echo=False):
    """vllm-v1 drawing q itself with the generator `generator(draws, device)` gives (CUDA only)."""
    def sample(logits, draws, temperatures, eps, greedy_eps):
        if logits.device.type != "cuda":
            raise RuntimeError("this sampler draws torch's CUDA stream: run it with DEVICE cuda")
        x = logits.float()
        greedy = temperatures < _SAMPLING_EPS
        t = torch.where(greedy, torch.ones_like(temperatures), temperatures)
        probs = torch.softmax(x / t.unsqueeze(1), dim=-1)
        q = torch.empty_like(probs)
        q.exponential_(generator=generator(draws, x.device))  # one draw over the batch, as vLLM V1
        tokens = torch.where(greedy, x.argmax(dim=-1), probs.div(q).argmax(dim=-1))
        return (tokens, q) if echo else tokens
    return sample


def _seeded(seed, offset, device):
    g = torch.Generator(device=device)
    g.manual_seed(seed)
    g.set_offset(offset)
    return g


vllm_v1_drawn = _vllm_v1_drawn_with(lambda d, dev: d.generator(0, device=dev), echo=True)
# The field's generator defects, drawing torch's real CUDA stream: another seed than declared; an offset never advanced.
vllm_v1_drawn_other_seed = _vllm_v1_drawn_with(lambda d, dev: _seeded(int(d.seeds[0]) + 1, int(d.offsets[0]), dev))
vllm_v1_drawn_stale_offset = _vllm_v1_drawn_with(lambda d, dev: _seeded(int(d.seeds[0]), 0, dev))


def _mrv2_triton_gumbel(current):
    """Model Runner V2's gumbel_sample as a Triton kernel: as vLLM draws now (current: u clamped to the smallest
    positive tl.rand, g = -log(-log1p(-u)) in fp32) or as it drew until 2026 (g = -log(-log(u + 1e-20) + 1e-20)
    in float64)."""
    def sample(logits, draws, temperatures, eps, greedy_eps):
        import triton
        import triton.language as tl
        from triton.language.extra import libdevice

        @triton.jit
        def gumbel_block(logits_ptr, V, seeds_ptr, pos_ptr, temp_ptr, idx_ptr, val_ptr, NB, BLOCK: tl.constexpr,
                         CURRENT: tl.constexpr):
            r = tl.program_id(0)
            b = tl.program_id(1)
            offs = b * BLOCK + tl.arange(0, BLOCK)
            mask = offs < V
            x = tl.load(logits_ptr + r * V + offs, mask=mask, other=float("-inf")).to(tl.float32)
            t = tl.load(temp_ptr + r)
            if t != 0.0:
                gs = tl.randint(tl.load(seeds_ptr + r), tl.load(pos_ptr + r))
                if CURRENT:
                    u = tl.maximum(tl.rand(gs, offs), 4.6566127342e-10)
                    g = -tl.log(-libdevice.log1p(-u))
                else:
                    u = tl.rand(gs, offs).to(tl.float64)
                    g = (-tl.log(-tl.log(u + 1e-20) + 1e-20)).to(tl.float32)
                x = tl.where(mask, x / t + g, float("-inf"))
            tl.store(idx_ptr + r * NB + b, b * BLOCK + tl.argmax(x, axis=0))
            tl.store(val_ptr + r * NB + b, tl.max(x, axis=0))

        if logits.device.type != "cuda":
            raise RuntimeError("mrv2-triton-gumbel is a Triton kernel: run it with DEVICE cuda")
        rows, V = logits.shape
        BLOCK = 1024
        nb = triton.cdiv(V, BLOCK)
        seeds = torch.from_numpy(draws.seeds.view("int64")).to(logits.device)
        pos = torch.from_numpy(draws.offsets.view("int64")).to(logits.device)
        t = torch.where(temperatures == 0, temperatures, temperatures.clamp_min(1e-5)).contiguous()
        idx = torch.empty(rows, nb, dtype=torch.int64, device=logits.device)
        val = torch.empty(rows, nb, dtype=torch.float32, device=logits.device)
        gumbel_block[(rows, nb)](logits.contiguous(), V, seeds, pos, t, idx, val, nb, BLOCK=BLOCK, CURRENT=current)
        return idx.gather(1, val.argmax(dim=1, keepdim=True)).squeeze(1)
    return sample


_LOG_DOMAIN = dict(scaling_order="pre", scale_op="divide", div_ulp=2, key_domain="log", log_ulp=1)

_VLLM_V1 = dict(CONTRACT, stages=1, normalise="sum", scale_op="divide", greedy_rule="below", greedy_below=_SAMPLING_EPS,
                eps_rule="none", nan_logits="out_of_contract")
_VLLM_V1_DRAWN = dict(_VLLM_V1, noise_stream="torch-cuda-exponential")

# x / T before the max is taken (pre-scale); torch's softmax divides by the sum
# after one max: normalised, no rescale. Log-domain races exponentiate nothing
# (glibc's and CUDA's logf: 1 ulp).
SAMPLERS = {
    "greedy-at-zero": (greedy_only_at_zero, dict(CONTRACT, greedy_rule="zero")),
    "ties-to-highest-id": (ties_to_highest_id, dict(CONTRACT, tie_rule="highest_id")),
    "highest-id-reductions": (highest_id_reductions, dict(CONTRACT, tie_rule="highest_id", fully_masked="any")),
    # SPEC §1's race in torch, promising what an engine's batch-invariant mode does: the same token bit for bit
    # whatever its batchmates.
    "batch-invariant": (race, dict(CONTRACT, batch_invariance="exact")),
    "vllm-v1": (vllm_v1, _VLLM_V1),
    "gumbel-log-domain": (gumbel_log_domain, dict(_LOG_DOMAIN, eps_rule="fixed", eps_fixed=1e-20, greedy_rule="zero",
                                                  nan_logits="out_of_contract")),
    "bf16-log-domain": (bf16_log_domain, dict(_LOG_DOMAIN, key_dtype="bf16")),
    "bf16-log-domain-declared-f32": (bf16_log_domain, _LOG_DOMAIN),
    "vllm-v1-drawn": (vllm_v1_drawn, _VLLM_V1_DRAWN),
    "vllm-v1-drawn-other-seed": (vllm_v1_drawn_other_seed, _VLLM_V1_DRAWN),
    "vllm-v1-drawn-stale-offset": (vllm_v1_drawn_stale_offset, _VLLM_V1_DRAWN),
    "mrv2-triton-gumbel": (_mrv2_triton_gumbel(False), dict(_LOG_DOMAIN, eps_rule="fixed", eps_fixed=1e-20,
                                                            greedy_rule="zero", nan_logits="out_of_contract",
                                                            noise_stream="vllm-triton-gumbel", stream_version=1)),
    # Each declaring the other release's stream: killed by AgreesWithOracle (docs/NOISE_STREAMS.md, "Versions").
    "mrv2-triton-gumbel-as-current": (_mrv2_triton_gumbel(False), dict(_LOG_DOMAIN, eps_rule="fixed", eps_fixed=1e-20,
                                                                       greedy_rule="zero", nan_logits="out_of_contract",
                                                                       noise_stream="vllm-triton-gumbel")),
    "mrv2-triton-gumbel-current-as-v1": (_mrv2_triton_gumbel(True), dict(_LOG_DOMAIN, eps_rule="none", greedy_rule="zero",
                                                                         nan_logits="out_of_contract",
                                                                         noise_stream="vllm-triton-gumbel",
                                                                         stream_version=1)),
    # vLLM's current draw: -log(E) with E = -log1p(-u) >= 2^-31, no eps.
    "mrv2-triton-gumbel-current": (_mrv2_triton_gumbel(True), dict(_LOG_DOMAIN, eps_rule="none", greedy_rule="zero",
                                                                   nan_logits="out_of_contract",
                                                                   noise_stream="vllm-triton-gumbel")),
}

if __name__ == "__main__":
    if len(sys.argv) not in (2, 3) or sys.argv[1] not in SAMPLERS:
        print("usage: field_samplers.py {%s} [DEVICE]" % "|".join(SAMPLERS), file=sys.stderr)
        sys.exit(2)
    fn, declared = SAMPLERS[sys.argv[1]]
    raceoracle.serve(fn, tensors="torch", device=sys.argv[2] if len(sys.argv) == 3 else "cpu", name=sys.argv[1],
                     **declared)

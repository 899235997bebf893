"""Samplers that draw their own noise from a declared stream (docs/NOISE_STREAMS.md),
in numpy: CPU stand-ins for vLLM V1's `q.exponential_()` inside the sampler,
drawn with raceoracle.streams' replay of torch's CUDA layout. One draws
correctly; the others carry a defect the field has shipped (../shared FIELD_BUGS),
and tests/examples/CMakeLists.txt names the laws that must kill each. The
FlashInfer and vLLM pairs draw as one release does: each passes under the
stream_version it declares and is killed under the other (docs/NOISE_STREAMS.md).

    raceoracle check   --sampler "python3 examples/stream_samplers.py torch-exponential"
    raceoracle mutants --sampler "python3 examples/stream_samplers.py other_seed" --expect-killed-by AgreesWithOracle
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import raceoracle  # noqa: E402
from numpy_race_sampler import CONTRACT, race  # noqa: E402
from raceoracle import streams  # noqa: E402

TENSOR = dict(noise_stream="torch-cuda-exponential")
ROWS = dict(noise_stream="torch-cuda-exponential", stream_layout="rows")


def _redrawn(draws, seeds=None, offsets=None, cap=None):
    """The draws with other seeds or offsets (a defect), or torch's cap replaced."""
    d = streams.Draws({"noise_stream": draws.stream, "stream_layout": "rows" if draws.per_row else "tensor"},
                      draws.seeds if seeds is None else seeds, draws.offsets if offsets is None else offsets, draws.vocab)
    return d.noise()


def torch_exponential(logits, draws, temperatures, eps, greedy_eps):
    """One draw over the batch, as `q.exponential_(generator=g)`; echoes what it drew."""
    noise = draws.noise()
    return race(logits, noise, temperatures, eps, greedy_eps), noise


def torch_exponential_rows(logits, draws, temperatures, eps, greedy_eps):
    """One generator per row, as `q[i].exponential_(generator=g_i)`."""
    return race(logits, draws.noise(), temperatures, eps, greedy_eps)


def other_seed(logits, draws, temperatures, eps, greedy_eps):
    """Draws with another seed than the one it declares (a generator not threaded through)."""
    return race(logits, _redrawn(draws, seeds=draws.seeds + np.uint64(1)), temperatures, eps, greedy_eps)


def offset_not_advanced(logits, draws, temperatures, eps, greedy_eps):
    """The generator's offset never advanced: every call draws at offset 0 (the same noise every step)."""
    return race(logits, _redrawn(draws, offsets=np.zeros_like(draws.offsets)), temperatures, eps, greedy_eps)


def rows_share_noise(logits, draws, temperatures, eps, greedy_eps):
    """Per-row generators, but every row drawn with row 0's (rows sharing one noise row)."""
    return race(logits, _redrawn(draws, seeds=np.full_like(draws.seeds, draws.seeds[0]),
                                 offsets=np.full_like(draws.offsets, draws.offsets[0])), temperatures, eps, greedy_eps)


def sign_flipped_cap(logits, draws, temperatures, eps, greedy_eps):
    """aiter's transform: -2^-24 instead of +2^-24 where u >= 1 - 2^-24 (FIELD_BUGS #16)."""
    noise = draws.noise()
    noise = np.where(noise == np.float32(2.0**-24), np.float32(-2.0**-24), noise)
    return race(logits, noise, temperatures, eps, greedy_eps)


def other_seed_echoed(logits, draws, temperatures, eps, greedy_eps):
    """other_seed, echoing the noise it drew: the report names the stream it did not draw."""
    noise = _redrawn(draws, seeds=draws.seeds + np.uint64(1))
    return race(logits, noise, temperatures, eps, greedy_eps), noise


AITER = dict(noise_stream="aiter-hiprand")


def aiter_random_sample(logits, draws, temperatures, eps, greedy_eps):
    """aiter's random_sample drawing in its own layout, its cap made +2^-24 as torch's."""
    return race(logits, draws.noise(), temperatures, eps, greedy_eps)


def aiter_sign_flipped_cap(logits, draws, temperatures, eps, greedy_eps):
    """aiter's random_sample as its exponential_func_impl writes it: -2^-24 at the cap (FIELD_BUGS #16)."""
    noise = draws.noise()
    return race(logits, np.where(noise == np.float32(2.0**-24), np.float32(-2.0**-24), noise), temperatures, eps,
                greedy_eps)


FLASHINFER = dict(noise_stream="flashinfer-curand")  # the newest version: FlashInfer 0.6.18
FLASHINFER_V1 = dict(noise_stream="flashinfer-curand", stream_version=1)


def _flashinfer(draws, version):
    return streams.flashinfer_noise(int(draws.seeds[0]), int(draws.offsets[0]), len(draws), draws.vocab, version)


def flashinfer_layout(logits, draws, temperatures, eps, greedy_eps):
    """FlashInfer's sampling_from_logits layout: gcd(4, V) ids a curand_init, the subsequence in 32 bits."""
    return race(logits, _flashinfer(draws, 2), temperatures, eps, greedy_eps)


def flashinfer_width4(logits, draws, temperatures, eps, greedy_eps):
    """4 ids a curand_init for every V (the layout raceoracle replayed before FlashInfer 0.6.18 was read again):
    FlashInfer's draw only where V is a multiple of 4."""
    return race(logits, _flashinfer(draws, 1), temperatures, eps, greedy_eps)


VLLM = dict(noise_stream="vllm-triton-gumbel")  # the newest version: vLLM at 03f97cc
VLLM_V1 = dict(noise_stream="vllm-triton-gumbel", stream_version=1)


def _vllm(draws, version):
    return streams.triton_gumbel_noise(draws.seeds, draws.offsets, draws.vocab, version)


def vllm_mrv2_current(logits, draws, temperatures, eps, greedy_eps):
    """vLLM Model Runner V2's current draw: E = -log1p(-max(tl.rand, 4.6566127342e-10)) in fp32."""
    return race(logits, _vllm(draws, 2), temperatures, eps, greedy_eps)


def vllm_mrv2_earlier(logits, draws, temperatures, eps, greedy_eps):
    """vLLM Model Runner V2's earlier draw: E = -log(tl.rand + 1e-20) in float64."""
    return race(logits, _vllm(draws, 1), temperatures, eps, greedy_eps)


SAMPLERS = {
    "flashinfer-layout": (flashinfer_layout, FLASHINFER), "flashinfer-width4-as-v1": (flashinfer_width4, FLASHINFER_V1),
    "flashinfer_width4": (flashinfer_width4, FLASHINFER), "flashinfer_layout_as_v1": (flashinfer_layout, FLASHINFER_V1),
    "vllm-mrv2-current": (vllm_mrv2_current, VLLM), "vllm-mrv2-earlier-as-v1": (vllm_mrv2_earlier, VLLM_V1),
    "vllm_mrv2_earlier": (vllm_mrv2_earlier, VLLM), "vllm_mrv2_current_as_v1": (vllm_mrv2_current, VLLM_V1),
    "aiter-random-sample": (aiter_random_sample, AITER), "aiter_sign_flipped_cap": (aiter_sign_flipped_cap, AITER),
    "torch-exponential": (torch_exponential, TENSOR), "torch-exponential-rows": (torch_exponential_rows, ROWS),
    "other_seed": (other_seed, TENSOR), "offset_not_advanced": (offset_not_advanced, TENSOR),
    "rows_share_noise": (rows_share_noise, ROWS), "sign_flipped_cap": (sign_flipped_cap, ROWS),
    "other_seed_echoed": (other_seed_echoed, TENSOR),
}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in SAMPLERS:
        sys.exit("usage: stream_samplers.py NAME  (one of: %s)" % ", ".join(SAMPLERS))
    fn, stream = SAMPLERS[sys.argv[1]]
    raceoracle.serve(fn, name=sys.argv[1], **dict(CONTRACT, **stream))

"""Samplers that draw from an RNG of their own (randomness = own,
docs/SAMPLER_PROTOCOL.md): raceoracle cannot replay their draws, so
`raceoracle frequency` judges the frequencies of their tokens against each
row's exact distribution (analysis/FREQUENCY.md). Two are correct; the
others carry one defect each, seen in the field, which the law must find.

    raceoracle frequency --sampler "python3 examples/own_rng_samplers.py numpy_choice"
    python3 examples/own_rng_samplers.py --list

Each is fn(logits, draws, temperatures, eps, greedy_eps) -> tokens [rows, n],
with draws a raceoracle.OwnDraws (n, and a seeded generator per row).
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import raceoracle  # noqa: E402


def _probs(logits, temperatures, scale=1.0):
    """Each row's softmax(x / max(T, 1e-5)) in float64 (NaN logits masked), and its greedy id."""
    x = np.asarray(logits, dtype=np.float64)
    x = np.where(np.isnan(x), -np.inf, x)
    t = np.maximum(np.asarray(temperatures, dtype=np.float64), 1e-5)[:, None] * scale
    m = x.max(axis=1, keepdims=True)
    w = np.exp(np.where(np.isfinite(m), (x - m) / t, -np.inf))
    s = w.sum(axis=1, keepdims=True)
    return np.where(s > 0, w / np.where(s > 0, s, 1), 0), np.argmax(x, axis=1), np.isfinite(m[:, 0])


def _point(rows, p, greedy, finite, temperatures, greedy_eps, draws):
    """Rows that draw nothing: greedy (T <= greedy_eps, compared in fp32) and fully masked ones."""
    out = np.zeros((rows, draws.n), dtype=np.int64)
    sampled = []
    for r in range(rows):
        if not finite[r]:
            out[r] = 0
        elif np.float32(temperatures[r]) <= np.float32(greedy_eps):
            out[r] = greedy[r]
        else:
            sampled.append(r)
    return out, sampled


def _choice(logits, draws, temperatures, greedy_eps, probs_at=None, scale=1.0, rng_row=lambda r: r):
    """numpy's Generator.choice on the float64 softmax at `probs_at` (default:
    the rows' temperatures) times `scale`, row r drawn with rng(rng_row(r))."""
    p, greedy, finite = _probs(logits, temperatures if probs_at is None else probs_at, scale)
    out, sampled = _point(len(p), p, greedy, finite, temperatures, greedy_eps, draws)
    for r in sampled:
        out[r] = draws.rng(rng_row(r)).choice(p.shape[1], size=draws.n, p=p[r])
    return out


def numpy_choice(logits, draws, temperatures, eps, greedy_eps):
    """numpy's Generator.choice on the float64 softmax, one generator a row."""
    return _choice(logits, draws, temperatures, greedy_eps)


def torch_multinomial(logits, draws, temperatures, eps, greedy_eps):
    """torch.multinomial with replacement on the float64 softmax (sglang's and ATOM's path), one generator."""
    import torch
    p, greedy, finite = _probs(logits, temperatures)
    out, sampled = _point(len(p), p, greedy, finite, temperatures, greedy_eps, draws)
    if sampled:
        probs = torch.from_numpy(p[sampled])
        out[sampled] = torch.multinomial(probs, draws.n, replacement=True, generator=draws.generator(0)).numpy()
    return out


def temperature_off(logits, draws, temperatures, eps, greedy_eps):
    """Temperature 1% too high: the distribution a little flatter."""
    return _choice(logits, draws, temperatures, greedy_eps, scale=1.01)


def inverse_cdf_fp32(logits, draws, temperatures, eps, greedy_eps):
    """Inverse-CDF sampling with a float32 cumulative sum and a 24-bit uniform
    (FIELD_BUGS #26): the cumulative sum's rounding moves mass between ids,
    and an id whose probability is below 2^-24 of the sum is drawn with
    probability 0 or 2^-24, whatever its own."""
    p, greedy, finite = _probs(logits, temperatures)
    out, sampled = _point(len(p), p, greedy, finite, temperatures, greedy_eps, draws)
    for r in sampled:
        cdf = np.cumsum(p[r].astype(np.float32), dtype=np.float32)
        u = np.floor(draws.rng(r).random(draws.n) * 2**24).astype(np.float32) * np.float32(2.0**-24) * cdf[-1]
        out[r] = np.minimum(np.searchsorted(cdf, u, side="right"), p.shape[1] - 1)
    return out


def masked_leak(logits, draws, temperatures, eps, greedy_eps):
    """Once in 10^5 draws an id drawn uniformly (a masked one included), as a sampler whose mask is applied late."""
    out = _choice(logits, draws, temperatures, greedy_eps)
    for r in range(out.shape[0]):
        g = draws.rng(r)
        leak = g.random(draws.n) < 1e-5
        out[r, leak] = g.integers(0, np.asarray(logits).shape[1], leak.sum())
    return out


def row0_temperature(logits, draws, temperatures, eps, greedy_eps):
    """Every sampling row at row 0's temperature (a per-row parameter that does not travel with its row)."""
    t = np.asarray(temperatures, dtype=np.float32).copy()
    t[t > np.float32(greedy_eps)] = t[0]
    return _choice(logits, draws, temperatures, greedy_eps, probs_at=t)


def shared_generator(logits, draws, temperatures, eps, greedy_eps):
    """Every row seeded with row 0's seed (FIELD_BUGS: rows sharing noise): rows with equal inputs draw equal tokens."""
    return _choice(logits, draws, temperatures, greedy_eps, rng_row=lambda r: 0)


def race_noise_floor(logits, draws, temperatures, eps, greedy_eps):
    """The exponential race with each draw's E floored at 2^-24 (FIELD_BUGS #5):
    an id more than ln(2^24) = 16.6 units below the winner's key never wins.
    Costs V draws per token: for small vocabularies."""
    x = np.asarray(logits, dtype=np.float64)
    p, greedy, finite = _probs(logits, temperatures)
    out, sampled = _point(len(p), p, greedy, finite, temperatures, greedy_eps, draws)
    for r in sampled:
        g = draws.rng(r)
        for j in range(0, draws.n, 256):
            k = min(256, draws.n - j)
            e = np.maximum(g.exponential(size=(k, p.shape[1])), 2.0**-24)
            out[r, j:j + k] = np.argmax(p[r][None, :] / (e + eps), axis=1)
    return out


def rejection_top_k_top_p(logits, draws, temperatures, eps, greedy_eps, filters=None):
    """Top-k / top-p / min-p by rejection, as FlashInfer's kernels sample
    (FIELD_SAMPLERS section 3): draw from the ids above a pivot, accept the
    token when fewer than k ids are more probable, the mass of the more
    probable ones (on the row's own distribution: joint) is below p, and it
    passes min-p; else raise the pivot to it and draw again. The number of
    draws depends on the data; the law is the filtered softmax. Ties at a
    boundary are kept whole (declared: filter_ties any)."""
    p, greedy, finite = _probs(logits, temperatures)
    out, sampled = _point(len(p), p, greedy, finite, temperatures, greedy_eps, draws)
    V = p.shape[1]
    for r in sampled:
        q = p[r]
        order = np.argsort(-q, kind="stable")
        qs = q[order]
        cums = np.cumsum(qs)
        first = np.searchsorted(-qs, -qs, side="left")  # per sorted position: ids strictly more probable
        mass_above = np.where(first > 0, cums[np.maximum(first - 1, 0)], 0.0)
        ok = qs > 0
        if filters is not None:
            k, top_p, min_p = int(filters.top_k[r]), float(filters.top_p[r]), float(filters.min_p[r])
            if 0 < k < V:
                ok &= first < k
            if top_p < 1:
                ok &= mass_above < top_p
            if min_p > 0:
                ok &= qs >= min_p * qs[0]
        g = draws.rng(r)
        pending = np.arange(draws.n)
        pivot = np.full(draws.n, -1.0)
        while pending.size:
            above = np.searchsorted(-qs, -pivot[pending], side="left")  # ids strictly above each pivot
            j = np.minimum(np.searchsorted(cums, g.random(pending.size) * cums[above - 1], side="right"), above - 1)
            good = ok[j]
            out[r, pending[good]] = order[j[good]]
            pivot[pending[~good]] = qs[j[~good]]
            pending = pending[~good]
    return out


def _cuda_probs(logits, temperatures):
    """fp32 softmax(x / max(T, 1e-5)) on the GPU, as engines compute it."""
    import torch
    if not torch.cuda.is_available():
        raise RuntimeError("this sampler runs on a CUDA GPU and none is visible")
    x = torch.from_numpy(np.ascontiguousarray(logits, dtype=np.float32)).cuda()
    x = torch.nan_to_num(x, nan=float("-inf"))
    t = torch.from_numpy(np.maximum(np.asarray(temperatures, dtype=np.float32), 1e-5)).cuda()
    return torch.softmax(x / t[:, None], dim=-1)


def torch_multinomial_cuda(logits, draws, temperatures, eps, greedy_eps):
    """torch.multinomial with replacement on fp32 probabilities on the GPU (sglang's, TensorRT-LLM's PyTorch backend's)."""
    p, greedy, finite = _probs(logits, temperatures)
    out, sampled = _point(len(p), p, greedy, finite, temperatures, greedy_eps, draws)
    if sampled:
        import torch
        probs = _cuda_probs(np.asarray(logits)[sampled], np.asarray(temperatures)[sampled])
        out[sampled] = torch.multinomial(probs, draws.n, replacement=True, generator=draws.generator(0, "cuda")).cpu().numpy()
    return out


def torch_race_cuda(logits, draws, temperatures, eps, greedy_eps):
    """The exponential race as vLLM's sampler draws it: q = exponential_() on the GPU, argmax(probs / q)."""
    p, greedy, finite = _probs(logits, temperatures)
    out, sampled = _point(len(p), p, greedy, finite, temperatures, greedy_eps, draws)
    if sampled:
        import torch
        probs = _cuda_probs(np.asarray(logits)[sampled], np.asarray(temperatures)[sampled])
        g = draws.generator(0, "cuda")
        chunk = max(1, (1 << 28) // probs.numel())
        parts = []
        for j in range(0, draws.n, chunk):
            q = torch.empty((min(chunk, draws.n - j),) + tuple(probs.shape), device="cuda").exponential_(generator=g)
            parts.append((probs.unsqueeze(0) / q).argmax(dim=-1))
        out[sampled] = torch.cat(parts).T.cpu().numpy()
    return out


SAMPLERS = {f.__name__: f for f in (numpy_choice, torch_multinomial, rejection_top_k_top_p, temperature_off,
                                    inverse_cdf_fp32, masked_leak, row0_temperature, shared_generator, race_noise_floor,
                                    torch_multinomial_cuda, torch_race_cuda)}
# What each declares beyond randomness = own (the filters' semantics of the one that filters).
DECLARED = {"rejection_top_k_top_p": dict(filters="top_k,top_p,min_p", top_p_mass="joint", filter_ties="any")}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in SAMPLERS:
        print("usage: own_rng_samplers.py NAME   (one of: %s)" % ", ".join(SAMPLERS), file=sys.stderr)
        sys.exit(0 if sys.argv[1:] == ["--list"] else 2)
    name = sys.argv[1]
    raceoracle.serve(SAMPLERS[name], name=name, randomness="own", **DECLARED.get(name, {}))

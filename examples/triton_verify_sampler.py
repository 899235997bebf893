"""The speculative-decoding verify step (SPEC 11, ../docs/SPEC.md) in Triton:
one program a request walks its drafts as vLLM's rejection sampler does
(examples/verify_samplers.py is the same algorithm in PyTorch), over the
vocabulary in tiles of BLOCK ids, the probabilities never written:

    per target row j: m = max x / t, S = sum exp(x / t - m) (libdevice expf), P_i = exp(x_i / t - m) / S
    accept draft d_j  iff  q_d > 0  and  P_d / q_d >= u_j   (the ratio in fp32, the compare in float64)
    at the first rejection: argmax max(P - q, 0) / r         (the recovery noise row, no eps; lowest id on ties)
    all accepted: the bonus, argmax P_k / b                  (the bonus noise row, no eps)
    greedy requests (T == 0): accept while the draft is the row's argmax (lowest id)

`verify_step(...)` takes vs.rejection_sample's arguments (CUDA tensors) and
returns its [R, k + 1] ids. Judged by raceoracle.verify_step on given noise
and by raceoracle.verify_lossless on its own randomness (examples/
test_verify_samplers.py, on a GPU).
"""
import torch
import triton
import triton.language as tl

try:
    from triton.language.extra import libdevice  # Triton 3
except ImportError:  # pragma: no cover
    from triton.language.extra.cuda import libdevice

# What it declares: x / t in fp32 (Triton's '/' within 2 ulps), libdevice expf
# (2 ulps), P = w / S, no eps in either race, greedy at T == 0 only (any
# other T sampled at max(T, 1e-5)).
CONTRACT = dict(scaling_order="pre", scale_op="divide", normalise="sum", stages=1, eps_rule="none", exp_ulp=2,
                div_ulp=2, greedy_rule="zero")
NEG_INF = tl.constexpr(float("-inf"))


@triton.jit
def _take_best(key, ids, V, best, token):
    """The running race over tiles: this tile's best key and its lowest id
    replace (best, token) when strictly larger (the lowest tile keeps a tie)."""
    b_key = tl.max(key, axis=0)
    b_id = tl.min(tl.where(key == b_key, ids, V), axis=0).to(tl.int64)
    return tl.maximum(best, b_key), tl.where(b_key > best, b_id, token)


@triton.jit
def _verify(logits, draft_ids, draft_probs, uniforms, recovery, bonus, temps, counts, out, V,
            K: tl.constexpr, HAS_Q: tl.constexpr, HAS_COUNTS: tl.constexpr, BLOCK: tl.constexpr):
    r = tl.program_id(0).to(tl.int64)
    if HAS_COUNTS:  # the request's own number of drafts: it accepts among its first n, its bonus row is row n
        n = tl.minimum(tl.maximum(tl.load(counts + r), 0), K)
    else:
        n = K
    T = tl.load(temps + r)
    greedy = T == 0
    t = tl.where(greedy, 1.0, tl.maximum(T, 1e-5))
    done = False
    for j in tl.static_range(K + 1):
        if not done:
            row = logits + (r * (K + 1) + j) * V
            # The row's max of x / t, and its raw argmax (lowest id).
            m = tl.full([], float("-inf"), tl.float32)
            g_val = tl.full([], float("-inf"), tl.float32)
            g_id = tl.full([], 0, tl.int64)
            for off in range(0, V, BLOCK):
                ids = off + tl.arange(0, BLOCK)
                x = tl.load(row + ids, mask=ids < V, other=NEG_INF).to(tl.float32)
                m = tl.maximum(m, tl.max(x / t, axis=0))
                g_val, g_id = _take_best(x, ids, V, g_val, g_id)
            s = tl.full([], 0.0, tl.float32)
            for off in range(0, V, BLOCK):
                ids = off + tl.arange(0, BLOCK)
                x = tl.load(row + ids, mask=ids < V, other=NEG_INF).to(tl.float32)
                s += tl.sum(tl.where(ids < V, libdevice.exp(x / t - m), 0.0), axis=0)
            if j < n:
                d = tl.load(draft_ids + r * K + j).to(tl.int64)
                if greedy:
                    accept = d == g_id
                else:
                    p_d = libdevice.exp(tl.load(row + d).to(tl.float32) / t - m) / s
                    if HAS_Q:
                        q_d = tl.load(draft_probs + (r * K + j) * V + d)
                    else:
                        q_d = 1.0
                    u = tl.load(uniforms + r * K + j)
                    accept = (q_d > 0) & ((p_d / q_d).to(tl.float64) >= u)
                if accept:
                    tl.store(out + r * (K + 1) + j, d.to(tl.int64))
                else:
                    token = g_id
                    if not greedy:  # the residual race
                        best = tl.full([], -1.0, tl.float32)
                        for off in range(0, V, BLOCK):
                            ids = off + tl.arange(0, BLOCK)
                            inside = ids < V
                            x = tl.load(row + ids, mask=inside, other=NEG_INF).to(tl.float32)
                            p = libdevice.exp(x / t - m) / s
                            if HAS_Q:
                                q = tl.load(draft_probs + (r * K + j) * V + ids, mask=inside, other=0.0)
                            else:
                                q = tl.where(ids == d, 1.0, 0.0)
                            e = tl.load(recovery + r * V + ids, mask=inside, other=1.0)
                            key = tl.where(inside, tl.maximum(p - q, 0.0) / e, -1.0)
                            best, token = _take_best(key, ids, V, best, token)
                    tl.store(out + r * (K + 1) + j, token)
                    done = True
            else:
                token = g_id
                if not greedy:  # the bonus race
                    best = tl.full([], -1.0, tl.float32)
                    for off in range(0, V, BLOCK):
                        ids = off + tl.arange(0, BLOCK)
                        inside = ids < V
                        x = tl.load(row + ids, mask=inside, other=NEG_INF).to(tl.float32)
                        e = tl.load(bonus + r * V + ids, mask=inside, other=1.0)
                        key = tl.where(inside, (libdevice.exp(x / t - m) / s) / e, -1.0)
                        best, token = _take_best(key, ids, V, best, token)
                tl.store(out + r * (K + 1) + j, token)
                done = True


def verify_step(target_logits, draft_ids, draft_probs, uniforms, recovery_noise, bonus_noise, temperatures,
                draft_counts=None, block=1024):
    """[R, k + 1] ids (-1 after the emitted token): vs.rejection_sample's
    arguments, on the GPU; draft_counts [R]: each request's own k_r <= k."""
    R, rows, V = target_logits.shape
    k = rows - 1
    out = torch.full((R, rows), -1, dtype=torch.int64, device=target_logits.device)
    ids = draft_ids.long().contiguous() if k > 0 else torch.zeros(R, 1, dtype=torch.int64, device=out.device)
    q = draft_probs.float().contiguous() if draft_probs is not None else ids  # unread without draft probabilities
    u = uniforms.double().contiguous() if k > 0 else torch.zeros(R, 1, dtype=torch.float64, device=out.device)
    counts = draft_counts.to(device=out.device, dtype=torch.int32).contiguous() if draft_counts is not None else out
    _verify[(R,)](target_logits.contiguous(), ids, q, u, recovery_noise.float().contiguous(),
                  bonus_noise.float().contiguous(), temperatures.float().contiguous(), counts, out, V,
                  K=k, HAS_Q=draft_probs is not None, HAS_COUNTS=draft_counts is not None, BLOCK=block)
    return out

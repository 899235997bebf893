"""The speculative-decoding verify step as vLLM's rejection sampler computes it
(SPEC 11, ../docs/SPEC.md), in PyTorch, requests with draft counts of their
own included, and six broken copies of it, each with one defect the field
has shipped or could. Judged on given noise by
`raceoracle.verify_step`; and `speculate`, the step run many times with its
own randomness (drafts drawn, uniforms, noise), judged for losslessness by
`raceoracle.verify_lossless`, once with its verify uniform tied to the draft's
noise (examples/test_verify_samplers.py).

    target_probs = softmax(logits / T) in fp32           (rows of each request: k drafts + the bonus)
    accept draft j  iff  q_d > 0  and  p_d / q_d >= u_j   (the ratio in fp32, the compare in float64)
    at the first rejection: argmax max(p - q, 0) / r     (one recovery noise row r a request, no eps)
    all accepted: the bonus, argmax p_k / b               (the ordinary race on the bonus row, no eps)
    greedy requests (T == 0): accept while the draft is the argmax
"""
import torch

# What it declares: logits divided by T, then the softmax (pre-scale, a division,
# IEEE-exact on the CPU); p = w / S before each race; no eps in either race;
# greedy at T == 0 only (any other T sampled at max(T, 1e-5)).
CONTRACT = dict(scaling_order="pre", scale_op="divide", normalise="sum", stages=1, eps_rule="none", div_ulp=0.5,
                greedy_rule="zero")
# Served behind the protocol it also declares that it applies each request's
# top-k, top-p and min-p, as vLLM's apply_top_k_top_p does (filtered_logits:
# ties at the k-th value kept, top-p on the top-k set, a stable sort: ties by
# id; the semantics' defaults). A file names its filters with the tensors.
SERVED = dict(CONTRACT, filters="top_k,top_p,min_p")


def filtered_logits(logits, t, filters):
    """logits / t [R, rows, V] with each request's filters applied as vLLM's
    apply_top_k_top_p does (SPEC 9): top-k masks the ids below the k-th
    value (ties at it kept), top-p keeps, on the distribution renormalised
    over the top-k set, each id whose mass before it is below p, min-p keeps
    the ids of p >= min_p * max p; the others become -inf."""
    x = logits.float() / t[:, None, None]
    if filters is None:
        return x
    top_k, top_p, min_p = (f.to(x.device) for f in filters)
    V = x.shape[-1]
    k = top_k.long()
    on = (k > 0) & (k < V)
    kth = x.sort(dim=-1, descending=True).values.gather(-1, (k.clamp(1, V) - 1)[:, None, None].expand(-1, x.shape[1], 1))
    x = torch.where(on[:, None, None] & (x < kth), torch.full_like(x, float("-inf")), x)
    p, order = torch.softmax(x, dim=-1).sort(dim=-1, descending=True, stable=True)
    keep = torch.zeros_like(p, dtype=torch.bool).scatter(-1, order, (p.cumsum(-1) - p) < top_p[:, None, None])
    x = torch.where(keep | (top_p[:, None, None] >= 1), x, torch.full_like(x, float("-inf")))
    probs = torch.softmax(x, dim=-1)
    x = torch.where(probs >= min_p[:, None, None] * probs.amax(-1, keepdim=True), x, torch.full_like(x, float("-inf")))
    return x


def rejection_sample(target_logits, draft_ids, draft_probs, uniforms, recovery_noise, bonus_noise, temperatures,
                     draft_counts=None, filters=None, defect=None):
    """[R, k + 1] ids: the accepted drafts, the emitted token, then -1.
    draft_counts [R]: each request's own number of drafts k_r <= k (vLLM's
    num_draft_tokens, here padded to k): it accepts among its first k_r and
    takes its bonus from row k_r. filters: raceoracle.Filters of [R] tensors,
    applied to the target's rows of each sampling request (vLLM filters the
    target logits before the softmax)."""
    R, rows, V = target_logits.shape
    k = rows - 1
    if draft_counts is None or defect == "counts_ignored":
        draft_counts = torch.full((R,), k, dtype=torch.int64, device=target_logits.device)
    counts = draft_counts.long()
    greedy = temperatures == 0
    t = torch.where(greedy, torch.ones_like(temperatures), temperatures.clamp(min=1e-5))
    probs = torch.softmax(filtered_logits(target_logits, t, None if defect == "filters_ignored" else filters), dim=-1)
    argmax = target_logits.float().argmax(dim=-1)  # the lowest id of the max
    q = draft_probs if draft_probs is not None else \
        torch.nn.functional.one_hot(draft_ids.long(), V).float()
    if defect == "draft_position_0" and k > 0:
        q = q[:, :1].expand(-1, k, -1)
    p_d = probs[:, :k].gather(-1, draft_ids.long()[..., None])[..., 0]
    q_d = q.gather(-1, draft_ids.long()[..., None])[..., 0]
    ratio = (p_d / q_d).double()
    accept = (q_d > 0) & ((ratio > uniforms) if defect == "strict" else (ratio >= uniforms))
    accept = torch.where(greedy[:, None], draft_ids.long() == argmax[:, :k], accept)
    # The number accepted: the first rejection, or the request's count.
    rejected = ~accept
    if k == 0:  # no drafts: every request emits its bonus token
        first = torch.zeros(R, dtype=torch.int64, device=target_logits.device)
    else:
        first = torch.where(rejected.any(dim=-1), rejected.float().argmax(dim=-1), torch.full_like(temperatures, k).long())
    first = torch.minimum(first, counts)
    residual = probs[:, :k] - q
    if defect != "no_clamp":
        residual = residual.clamp(min=0)
    if defect == "from_target":
        residual = probs[:, :k]
    recovered = (residual / recovery_noise[:, None, :]).argmax(dim=-1)  # [R, k]
    recovered = torch.where(greedy[:, None], argmax[:, :k], recovered)
    bonus_row = probs.gather(1, counts[:, None, None].expand(-1, 1, V))[:, 0]  # row k_r: the request's bonus row
    bonus = (bonus_row / bonus_noise).argmax(dim=-1)
    bonus = torch.where(greedy, argmax.gather(1, counts[:, None])[:, 0], bonus)
    # The ids: the accepted drafts, then the recovered token (or the bonus), then -1.
    position = torch.arange(rows, device=target_logits.device)[None, :]
    at_rejection = torch.cat([recovered, bonus[:, None]], dim=1).gather(1, first[:, None])  # [R, 1]
    emitted = torch.where(first[:, None] == counts[:, None], bonus[:, None], at_rejection)
    drafts = torch.cat([draft_ids.long(), torch.zeros_like(first)[:, None]], dim=1)
    out = torch.where(position < first[:, None], drafts, torch.full_like(drafts, -1))
    out = torch.where(position == first[:, None], emitted, out)
    if defect == "bonus_after_reject":
        out = torch.where((position == first[:, None] + 1) & (first[:, None] < counts[:, None]), bonus[:, None], out)
    return out


DEFECTS = ["strict", "no_clamp", "from_target", "bonus_after_reject", "draft_position_0"]
# Requests with counts of their own, walked as if every one had k.
COUNT_DEFECTS = ["counts_ignored"]
# Filtered requests sampled as if unfiltered.
FILTER_DEFECTS = ["filters_ignored"]


def requests(R=64, k=4, V=2000, seed=0, stochastic=True, counts=False):
    """Verify inputs as a drafter and vLLM make them: target logits, drafts
    drawn from a draft model's distribution near the target's, uniforms and
    noise drawn by torch; a quarter of the requests greedy. Two in eight are
    planted: rows of two ids tied at the max, drafted with certainty, whose
    uniform is the ratio itself, 0.5 (where > and >= differ); and a draft
    distribution above the target's everywhere, rejected (no residual at
    all: the race of zeros gives id 0). counts: each request a draft count
    of its own in [0, k] (draft_counts), the uniforms past it 0, which a
    reader that walks past its count accepts."""
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(R, k + 1, V, generator=g) * 3
    temperatures = torch.tensor([0.0 if r % 4 == 0 else (0.3, 0.7, 1.0)[r % 3] for r in range(R)])
    tied, dominating = torch.arange(R) % 8 == 5, torch.arange(R) % 8 == 3
    logits[tied] = float("-inf")
    logits[tied, :, 1] = 1.0
    logits[tied, :, 3] = 1.0
    t = torch.where(temperatures == 0, torch.ones(R), temperatures)
    drafted = logits + torch.randn(R, k + 1, V, generator=g) * 0.5
    q = torch.softmax(drafted[:, :k] / t[:, None, None], dim=-1)
    q[dominating] = torch.softmax(logits[dominating, :k] / t[dominating, None, None], dim=-1) * 1.001
    draft_ids = torch.multinomial(q.reshape(-1, V), 1, generator=g).reshape(R, k)
    draft_ids[tied] = 1
    q[tied] = 0.0
    q[tied, :, 1] = 1.0  # drafted with certainty: the ratio is 0.5 exactly
    uniforms = torch.rand(R, k, generator=g, dtype=torch.float64)
    uniforms[tied] = 0.5
    uniforms[dominating] = 0.9995  # above 1 / 1.001: rejected
    recovery = torch.empty(R, V).exponential_(generator=g)
    bonus = torch.empty(R, V).exponential_(generator=g)
    out = dict(target_logits=logits, draft_ids=draft_ids, draft_probs=q if stochastic else None, uniforms=uniforms,
               recovery_noise=recovery, bonus_noise=bonus, temperatures=temperatures)
    if counts:
        out["draft_counts"] = torch.randint(0, k + 1, (R,), generator=g)
        uniforms[torch.arange(k)[None, :] >= out["draft_counts"][:, None]] = 0.0
    return out


def lossless_requests(R=8, k=2, V=64, seed=0):
    """Requests for the losslessness law: target logits, a draft model's
    probabilities near the target's (one request's far from it), T = 1, 0.7,
    0.3 and 1.5, and one greedy request."""
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(R, k + 1, V, generator=g) * 2
    temperatures = torch.tensor([(1.0, 0.7, 0.3, 1.5, 0.0, 1.0, 0.7, 1.0)[r % 8] for r in range(R)])
    t = torch.where(temperatures == 0, torch.ones(R), temperatures)
    drafted = logits[:, :k] + torch.randn(R, k, V, generator=g)
    drafted[5::8] = torch.randn(drafted[5::8].shape, generator=g) * 2  # a draft model far from the target
    q = torch.softmax(drafted / t[:, None, None], dim=-1)
    return dict(target_logits=logits, draft_probs=q, temperatures=temperatures)


def speculate(target_logits, draft_probs, temperatures, runs, seed=0, shared=None, step=None):
    """The verify step run `runs` times on every request, each run drawing its
    own randomness with torch: the drafts by an exponential race on the draft
    probabilities (as sampling drafters draw), the uniforms, the recovery and
    bonus noise; [R, runs, k + 1] ids. shared="uniform": the verify uniform is
    the one the draft's winning noise was made from, 1 - exp(-E_d) (the
    field's bug: verify noise tied to the draft's). step: the verify step
    (rejection_sample's arguments; default rejection_sample)."""
    g = torch.Generator(device=target_logits.device).manual_seed(seed)
    R, rows, V = target_logits.shape
    k = rows - 1
    n = R * runs
    logits = target_logits.repeat_interleave(runs, dim=0)
    q = draft_probs.repeat_interleave(runs, dim=0)
    temps = temperatures.repeat_interleave(runs)
    # float64 draws: a float32 exponential can round to 0, which no race tolerates without eps.
    exp64 = lambda *shape: torch.empty(*shape, dtype=torch.float64, device=logits.device).exponential_(generator=g)
    race_noise = exp64(n, k, V)
    draft_ids = (q.double() / race_noise).argmax(dim=-1)
    uniforms = torch.rand(n, k, generator=g, dtype=torch.float64, device=logits.device)
    if shared == "uniform":
        uniforms = 1 - torch.exp(-race_noise.gather(-1, draft_ids[..., None])[..., 0])
    tokens = (step or rejection_sample)(logits, draft_ids, q, uniforms, exp64(n, V).float(), exp64(n, V).float(), temps)
    return tokens.reshape(R, runs, rows)


if __name__ == "__main__":
    # A verify step behind the sampler protocol (docs/SAMPLER_PROTOCOL.md):
    #   raceoracle check --sampler "python3 verify_samplers.py"            vLLM's, as written: passes the verify laws
    #   raceoracle mutants --sampler "python3 verify_samplers.py strict"   one broken copy: the laws must kill it
    import functools
    import os
    import sys

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
    import raceoracle
    known = DEFECTS + COUNT_DEFECTS + FILTER_DEFECTS
    if len(sys.argv) > 2 or sys.argv[1:] and sys.argv[1] not in known:
        print("usage: verify_samplers.py [DEFECT]\n  DEFECT: one of " + ", ".join(known), file=sys.stderr)
        sys.exit(2)
    defect = sys.argv[1] if sys.argv[1:] else None
    raceoracle.serve(functools.partial(rejection_sample, defect=defect), tensors="torch", step="verify",
                     name="vllm-rejection-sampler" + ("~" + defect if defect else ""), **SERVED)

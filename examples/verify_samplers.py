"""The speculative-decoding verify step as vLLM's rejection sampler computes it
(SPEC 11, ../docs/SPEC.md), in PyTorch, and four broken copies of it, each
with one defect the field has shipped or could. Judged on given noise by
`raceoracle.verify_step` (examples/test_verify_samplers.py).

    target_probs = softmax(logits / T) in fp32           (rows of each request: k drafts + the bonus)
    accept draft j  iff  q_d > 0  and  p_d / q_d >= u_j   (the ratio in fp32, the compare in float64)
    at the first rejection: argmax max(p - q, 0) / r     (one recovery noise row r a request, no eps)
    all accepted: the bonus, argmax p_k / b               (the ordinary race on the bonus row, no eps)
    greedy requests (T == 0): accept while the draft is the argmax
"""
import torch

# What it declares: logits divided by T, then the softmax (pre-scale, a division,
# IEEE-exact on the CPU); p = w / S before each race; no eps in either race.
CONTRACT = dict(scaling_order="pre", scale_op="divide", normalise="sum", stages=1, eps_rule="none", div_ulp=0.5)


def rejection_sample(target_logits, draft_ids, draft_probs, uniforms, recovery_noise, bonus_noise, temperatures,
                     defect=None):
    """[R, k + 1] ids: the accepted drafts, the emitted token, then -1."""
    R, rows, V = target_logits.shape
    k = rows - 1
    greedy = temperatures == 0
    t = torch.where(greedy, torch.ones_like(temperatures), temperatures.clamp(min=1e-5))
    probs = torch.softmax(target_logits.float() / t[:, None, None], dim=-1)
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
    # The number accepted: the first rejection, or k.
    rejected = ~accept
    if k == 0:  # no drafts: every request emits its bonus token
        first = torch.zeros(R, dtype=torch.int64, device=target_logits.device)
    else:
        first = torch.where(rejected.any(dim=-1), rejected.float().argmax(dim=-1), torch.full_like(temperatures, k).long())
    residual = probs[:, :k] - q
    if defect != "no_clamp":
        residual = residual.clamp(min=0)
    if defect == "from_target":
        residual = probs[:, :k]
    recovered = (residual / recovery_noise[:, None, :]).argmax(dim=-1)  # [R, k]
    recovered = torch.where(greedy[:, None], argmax[:, :k], recovered)
    bonus = (probs[:, k] / bonus_noise).argmax(dim=-1)
    bonus = torch.where(greedy, argmax[:, k], bonus)
    out = torch.full((R, rows), -1, dtype=torch.int64, device=target_logits.device)
    for r in range(R):
        a = int(first[r])
        out[r, :a] = draft_ids[r, :a]
        out[r, a] = recovered[r, a] if a < k else bonus[r]
        if defect == "bonus_after_reject" and a < k:
            out[r, a + 1] = bonus[r]
    return out


DEFECTS = ["strict", "no_clamp", "from_target", "bonus_after_reject", "draft_position_0"]


def requests(R=64, k=4, V=2000, seed=0, stochastic=True):
    """Verify inputs as a drafter and vLLM make them: target logits, drafts
    drawn from a draft model's distribution near the target's, uniforms and
    noise drawn by torch; a quarter of the requests greedy. Two in eight are
    planted: rows of two ids tied at the max, drafted with certainty, whose
    uniform is the ratio itself, 0.5 (where > and >= differ); and a draft
    distribution above the target's everywhere, rejected (no residual at
    all: the race of zeros gives id 0)."""
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
    return dict(target_logits=logits, draft_ids=draft_ids, draft_probs=q if stochastic else None, uniforms=uniforms,
                recovery_noise=recovery, bonus_noise=bonus, temperatures=temperatures)

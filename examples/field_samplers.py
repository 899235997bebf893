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
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from broken_samplers import greedy_only_at_zero  # noqa: E402
from torch_race_sampler import CONTRACT  # noqa: E402

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


# x / T before the max is taken (pre-scale); softmax's division by the sum is
# a second rounding of every key, within the two-stage budget, as for
# torch_race_sampler.py.
SAMPLERS = {
    "greedy-at-zero": (greedy_only_at_zero, dict(CONTRACT, greedy_rule="zero")),
    "vllm-v1": (vllm_v1, dict(CONTRACT, scale_op="divide", greedy_rule="below", greedy_below=_SAMPLING_EPS,
                              eps_rule="none", nan_logits="out_of_contract")),
}

if __name__ == "__main__":
    if len(sys.argv) not in (2, 3) or sys.argv[1] not in SAMPLERS:
        print("usage: field_samplers.py {%s} [DEVICE]" % "|".join(SAMPLERS), file=sys.stderr)
        sys.exit(2)
    fn, declared = SAMPLERS[sys.argv[1]]
    raceoracle.serve(fn, tensors="torch", device=sys.argv[2] if len(sys.argv) == 3 else "cpu", name=sys.argv[1],
                     **declared)

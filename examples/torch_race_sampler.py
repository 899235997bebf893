"""A PyTorch exponential-race sampler, written as inference engines write it,
served to raceoracle over the sampler protocol:

    raceoracle check --sampler "python3 examples/torch_race_sampler.py"
    raceoracle check --sampler "python3 examples/torch_race_sampler.py cuda"

token = argmax softmax(x / t) / (E + eps), t = max(T, 1e-5); greedy rows
(T <= greedy_eps) take the argmax of the raw logits. torch.argmax returns
the first maximal index, which is the definition's lowest-id tie rule.
"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import raceoracle  # noqa: E402,F401

# x / t before the max is taken: PyTorch's order is pre-scale. softmax's
# division by the sum is a second rounding of every key, which the two-stage
# budget covers; torch's exp and '/' stay within 2 ulps.
CONTRACT = dict(scaling_order="pre", exp_ulp=2, div_ulp=2, stages=2)


def race(logits, noise, temperatures, eps, greedy_eps):
    x = logits.float()
    x = x.masked_fill(x.isnan(), float("-inf"))  # a NaN logit is treated as a masked id
    greedy = temperatures <= greedy_eps
    t = temperatures.clamp_min(1e-5).unsqueeze(1)
    probs = torch.softmax(x / t, dim=-1)
    sampled = torch.argmax(probs / (noise + eps), dim=-1)
    return torch.where(greedy, torch.argmax(x, dim=-1), sampled)


if __name__ == "__main__":
    raceoracle.serve(race, tensors="torch", device=sys.argv[1] if len(sys.argv) > 1 else "cpu", name="torch-race",
                     **CONTRACT)

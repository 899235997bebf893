"""Write a file for `raceoracle verify` from PyTorch.

Samples tokens with the exponential race, argmax(softmax(x / T) / (E + eps)),
E ~ Exp(1) from `exponential_`, greedy rows (T <= greedy_eps) by argmax, and
saves inputs and tokens as safetensors:

    python3 examples/write_race_safetensors.py race.safetensors [cuda]
    raceoracle verify race.safetensors
"""
import sys

import torch
from safetensors.torch import save_file


def race(logits: torch.Tensor, noise: torch.Tensor, temperatures: torch.Tensor,
         eps: float = 1e-10, greedy_eps: float = 1e-10) -> torch.Tensor:
    t = temperatures.clamp_min(1e-5).unsqueeze(1)
    probs = torch.softmax(logits.float() / t, dim=-1)
    sampled = torch.argmax(probs / (noise + eps), dim=-1)
    greedy = torch.argmax(logits, dim=-1)
    return torch.where(temperatures <= greedy_eps, greedy, sampled).to(torch.int32)


def main(path: str, rows: int = 64, vocab: int = 163840, device: str = "cpu") -> None:
    gen = torch.Generator().manual_seed(0)
    logits = (torch.randn(rows, vocab, generator=gen) * 3).to(torch.bfloat16)
    noise = torch.empty(rows, vocab).exponential_(generator=gen)
    temperatures = torch.tensor([0.0 if r % 4 == 0 else 0.7 for r in range(rows)])
    tokens = race(logits.to(device), noise.to(device), temperatures.to(device)).cpu()
    # x / T before the max is taken: PyTorch's order is pre-scale. Softmax's
    # division by the sum is a second rounding on every key; the default
    # two-stage budget (stages=2) covers it, a one-stage one would not.
    save_file({"logits": logits, "noise": noise, "temperatures": temperatures, "tokens": tokens},
              path, metadata={"eps": "1e-10", "greedy_eps": "1e-10", "scaling_order": "pre"})


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "race.safetensors",
         device=sys.argv[2] if len(sys.argv) > 2 else "cpu")

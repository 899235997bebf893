"""Write files for `raceoracle verify`, `raceoracle divergence --logits` and
`raceoracle divergence A B` from PyTorch, without raceoracle's own generators:

    # logits only: Zipf-like rows (a few dominant tokens, a long tail), bf16
    python3 examples/write_race_safetensors.py logits zipf.safetensors
    raceoracle divergence --logits zipf.safetensors --rows 256 --batches 16

    # one sampler's tokens on those rows, with torch's exponential_ noise
    python3 examples/write_race_safetensors.py dump torch.safetensors --sampler torch
    python3 examples/write_race_safetensors.py dump numpy.safetensors --sampler numpy
    raceoracle verify torch.safetensors
    raceoracle divergence torch.safetensors numpy.safetensors   # same inputs, two samplers

    # a broken sampler of broken_samplers.py beside the reference: UNEXPLAINED rows
    python3 examples/write_race_safetensors.py dump broken.safetensors --sampler noise_wrong_row
    raceoracle divergence torch.safetensors broken.safetensors

    # a noise generator that truncates the tail: verify's noise report flags it
    python3 examples/write_race_safetensors.py dump truncated.safetensors --noise truncated

Every file of one --seed holds the same logits, noise and temperatures, so two
samplers' dumps compare row by row.
"""
import argparse
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import raceoracle  # noqa: E402
import broken_samplers  # noqa: E402
import numpy_race_sampler  # noqa: E402
import torch_race_sampler  # noqa: E402

# name -> (race function, its contract, whether it takes numpy arrays)
SAMPLERS = {"torch": (torch_race_sampler.race, torch_race_sampler.CONTRACT, False),
            "numpy": (numpy_race_sampler.race, numpy_race_sampler.CONTRACT, True)}
SAMPLERS.update({name: (fn, broken_samplers.CONTRACT, False) for name, fn in broken_samplers.BROKEN.items()})


def zipf_logits(rows, vocab, gen, exponent=1.1):
    """Logits whose softmax at T = 1 is Zipf-like: the id of rank k has weight
    k^-exponent, ranks shuffled per row, jittered by N(0, 0.5^2), shifted by a
    per-row offset as real logits are (their level carries no information)."""
    ranks = torch.arange(1, vocab + 1, dtype=torch.float64)
    base = (-exponent * torch.log(ranks)).float()
    x = torch.empty(rows, vocab)
    for r in range(rows):
        x[r] = base[torch.randperm(vocab, generator=gen)]
    x += 0.5 * torch.randn(rows, vocab, generator=gen) + 10 * torch.rand(rows, 1, generator=gen) + 5
    return x.to(torch.bfloat16)


def noise(rows, vocab, gen, kind):
    if kind == "torch":
        return torch.empty(rows, vocab).exponential_(generator=gen)
    # A uniform kept below 1 - 1e-4 before -log(1 - u): no draw above ln(1e4) = 9.21,
    # where Exp(1) puts one draw in 10,000.
    u = torch.rand(rows, vocab, generator=gen, dtype=torch.float64) * (1 - 1e-4)
    return (-torch.log1p(-u)).float()


def temperatures(rows, values):
    return torch.tensor([values[r % len(values)] for r in range(rows)], dtype=torch.float32)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", choices=["logits", "dump"])
    p.add_argument("path")
    p.add_argument("--rows", type=int, default=64)
    p.add_argument("--vocab", type=int, default=32768)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--sampler", choices=sorted(SAMPLERS), default="torch")
    p.add_argument("--noise", choices=["torch", "truncated"], default="torch")
    p.add_argument("--temperatures", type=float, nargs="+", default=[0.0, 0.3, 0.7, 1.0])
    a = p.parse_args()
    gen = torch.Generator().manual_seed(a.seed)
    x = zipf_logits(a.rows, a.vocab, gen)
    if a.what == "logits":
        raceoracle.save_safetensors(a.path, {"logits": x})
        return
    e = noise(a.rows, a.vocab, gen, a.noise)
    t = temperatures(a.rows, a.temperatures)
    race, contract, takes_numpy = SAMPLERS[a.sampler]
    if takes_numpy:
        tokens = race(x.float().numpy(), e.numpy(), t.numpy(), 1e-10, 1e-10)
    else:
        tokens = race(x, e, t, 1e-10, 1e-10)
    raceoracle.write_dump(a.path, x, e, t, np.asarray(tokens), eps=1e-10, greedy_eps=1e-10, **contract)


if __name__ == "__main__":
    main()

"""PyTorch race samplers with one defect each, every one seen in the field
(../docs/SAMPLER_PROTOCOL.md, the external mutant gate): raceoracle must
fail each of them, and tests/examples/CMakeLists.txt names the laws that must.

    raceoracle mutants --sampler "python3 examples/broken_samplers.py no_eps"
    python3 examples/broken_samplers.py --list
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_race_sampler import CONTRACT, race  # noqa: E402

INF = float("-inf")


def _keys(x, noise, temperatures, eps, clamp=True):
    t = temperatures.clamp_min(1e-5) if clamp else temperatures
    return torch.softmax(x / t.unsqueeze(1), dim=-1) / (noise + eps)


def _clean(logits):
    x = logits.float()
    return x.masked_fill(x.isnan(), INF)


def greedy_only_at_zero(logits, noise, temperatures, eps, greedy_eps):
    """Greedy only when T == 0 exactly (vllm#6719): T = greedy_eps and negative T sample."""
    x = _clean(logits)
    sampled = torch.argmax(_keys(x, noise, temperatures, eps), dim=-1)
    return torch.where(temperatures == 0, torch.argmax(x, dim=-1), sampled)


def no_temperature_clamp(logits, noise, temperatures, eps, greedy_eps):
    """x / T without the 1e-5 clamp: T between greedy_eps and 1e-5 sharpens too far."""
    x = _clean(logits)
    sampled = torch.argmax(_keys(x, noise, temperatures, eps, clamp=False), dim=-1)
    return torch.where(temperatures <= greedy_eps, torch.argmax(x, dim=-1), sampled)


def no_eps(logits, noise, temperatures, eps, greedy_eps):
    """p / E without eps (pytorch#20179): a zero draw divides by zero; 0/0 is NaN, and NaN wins argmax."""
    x = _clean(logits)
    t = temperatures.clamp_min(1e-5).unsqueeze(1)
    sampled = torch.argmax(torch.softmax(x / t, dim=-1) / noise, dim=-1)
    return torch.where(temperatures <= greedy_eps, torch.argmax(x, dim=-1), sampled)


def greedy_highest_id(logits, noise, temperatures, eps, greedy_eps):
    """Greedy ties to the highest id (vllm#5404: top-k 1 differs from greedy on tied maxima)."""
    x = _clean(logits)
    V = x.shape[-1]
    greedy = V - 1 - torch.argmax(torch.flip(x, dims=[-1]), dim=-1)
    sampled = torch.argmax(_keys(x, noise, temperatures, eps), dim=-1)
    return torch.where(temperatures <= greedy_eps, greedy, sampled)


def noise_wrong_row(logits, noise, temperatures, eps, greedy_eps):
    """Every row reads the noise of the row before it (a row-stride bug)."""
    rolled = torch.roll(noise, shifts=1, dims=0)
    return race(logits, rolled, temperatures, eps, greedy_eps)


def sentinel_clamped(logits, noise, temperatures, eps, greedy_eps):
    """A row with no candidate returns the sentinel V, hidden by a clamp to V - 1 (FIELD_BUGS #15)."""
    x = _clean(logits)
    V = x.shape[-1]
    token = race(logits, noise, temperatures, eps, greedy_eps)
    none = ~(x > INF).any(dim=-1)
    return torch.where(none, torch.full_like(token, V), token).clamp_max(V - 1)


def greedy_divides_by_temperature(logits, noise, temperatures, eps, greedy_eps):
    """Greedy rows go through x / T too (vllm#22180): at T = -1, -inf becomes +inf."""
    x = _clean(logits)
    scaled = x / temperatures.unsqueeze(1)
    greedy = torch.argmax(scaled, dim=-1)
    sampled = torch.argmax(_keys(x, noise, temperatures, eps), dim=-1)
    return torch.where(temperatures <= greedy_eps, greedy, sampled)


def nan_propagates(logits, noise, temperatures, eps, greedy_eps):
    """A NaN logit is not isolated: softmax turns the row to NaN and argmax picks the NaN id (flashinfer#2402)."""
    x = logits.float()
    t = temperatures.clamp_min(1e-5).unsqueeze(1)
    sampled = torch.argmax(torch.softmax(x / t, dim=-1) / (noise + eps), dim=-1)
    return torch.where(temperatures <= greedy_eps, torch.argmax(x, dim=-1), sampled)


def padded_vocab(logits, noise, temperatures, eps, greedy_eps):
    """The vocab padded to a multiple of 128 with zero logits and unit noise; padded ids can win (mlx-vlm#1917)."""
    V = logits.shape[-1]
    pad = (-V) % 128
    x = torch.nn.functional.pad(_clean(logits), (0, pad), value=0.0)
    e = torch.nn.functional.pad(noise, (0, pad), value=1.0)
    return race(x, e, temperatures, eps, greedy_eps)


_DECLARED_BELOW = 0.003  # a greedy threshold of the sampler's own, between the generated temperatures


def greedy_at_its_threshold(logits, noise, temperatures, eps, greedy_eps):
    """Declares greedy iff T < 0.003 but tests T <= 0.003: a row at its own threshold is greedy."""
    x = _clean(logits)
    sampled = torch.argmax(_keys(x, noise, temperatures, eps), dim=-1)
    return torch.where(temperatures <= _DECLARED_BELOW, torch.argmax(x, dim=-1), sampled)


def greedy_sampled_in_large_batches(logits, noise, temperatures, eps, greedy_eps):
    """Batches of more than 64 rows take another path, which samples greedy rows too (a path chosen by the batch
    size, as vLLM's split top-p path for small batches): a row's token changes with its batchmates."""
    x = _clean(logits)
    sampled = torch.argmax(_keys(x, noise, temperatures, eps), dim=-1)
    return sampled if x.shape[0] > 64 else torch.where(temperatures <= greedy_eps, torch.argmax(x, dim=-1), sampled)


def float64_in_small_batches(logits, noise, temperatures, eps, greedy_eps):
    """Declares batch_invariance = exact, but batches of up to 8 rows take a float64 softmax: within its
    contract either way, yet not the same token bit for bit where a row is ambiguous."""
    x = _clean(logits)
    keys = _keys(x.double() if x.shape[0] <= 8 else x, noise.double() if x.shape[0] <= 8 else noise, temperatures, eps)
    return torch.where(temperatures <= greedy_eps, torch.argmax(x, dim=-1), torch.argmax(keys, dim=-1))


BROKEN = {f.__name__: f for f in (greedy_only_at_zero, no_temperature_clamp, no_eps, greedy_highest_id,
                                  noise_wrong_row, sentinel_clamped, greedy_divides_by_temperature, nan_propagates,
                                  padded_vocab, greedy_at_its_threshold, greedy_sampled_in_large_batches,
                                  float64_in_small_batches)}
# What a broken sampler declares beyond CONTRACT: the convention it claims to follow.
DECLARED = {"greedy_at_its_threshold": dict(greedy_rule="below", greedy_below=_DECLARED_BELOW),
            "float64_in_small_batches": dict(batch_invariance="exact")}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in BROKEN:
        print("usage: broken_samplers.py NAME\n  " + "\n  ".join(n + ": " + f.__doc__ for n, f in BROKEN.items()),
              file=sys.stderr)
        sys.exit(0 if sys.argv[1:] == ["--list"] else 2)
    import raceoracle
    raceoracle.serve(BROKEN[sys.argv[1]], tensors="torch", name=sys.argv[1], **dict(CONTRACT, **DECLARED.get(sys.argv[1], {})))

"""An exponential-race sampler in numpy alone, post-scale as fused kernels
compute it, served to raceoracle over the sampler protocol:

    raceoracle check --sampler "python3 examples/numpy_race_sampler.py"

Logits arrive as float32 (bf16 widened exactly). Keys are
exp((x - m) / t) / (E + eps) with m the row max: softmax's normaliser is
common to the row, so it is left out, and the keys round once (stages=1).
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import raceoracle  # noqa: E402

CONTRACT = dict(scaling_order="post", exp_ulp=2, div_ulp=2, stages=1)


def race(logits, noise, temperatures, eps, greedy_eps):
    x = np.where(np.isnan(logits), -np.inf, logits).astype(np.float32)
    greedy = temperatures <= np.float32(greedy_eps)
    t = np.maximum(temperatures, np.float32(1e-5))[:, None]
    m = x.max(axis=1, keepdims=True)
    m = np.where(m == -np.inf, np.float32(0), m)  # a fully masked row: every key 0, id 0 wins
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        keys = np.exp((x - m) / t) / (noise + np.float32(eps))
    return np.where(greedy, x.argmax(axis=1), keys.argmax(axis=1))  # argmax: the first maximal id


if __name__ == "__main__":
    raceoracle.serve(race, name="numpy-race", **CONTRACT)

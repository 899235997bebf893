#!/usr/bin/env python3
"""The field's filtered samplers in PyTorch, timed: what a fused filtered
kernel is to be compared with (docs/SPEC.md §9, examples/filtered_samplers.py).

    python3 bench/filtered_peers.py [--rows 1 64 256] [--vocab 163840] [--top-k 50] [--top-p 0.9]
                                    [--raceoracle build/nvidia/cli/raceoracle]

Per cell: rows x V bf16 logits N(0, 3^2), fp32 Exp(1) noise, T = 0.7, every
row filtered by top_k and top_p; the sampler called eagerly from Python
(vLLM's apply_top_k_top_p then its race; a joint sort-based filter; the
unfiltered race beside them), 10 warm-up calls, then --samples samples of
--per-sample calls between two CUDA events: median, min and max microseconds
per call. With --raceoracle, that build's `bench` times its filtered kernels
(fused-filtered, sort-filtered) in the same call at the same shapes and
filters (its own LLM-like rows, T = 0.7 and a quarter of the rows greedy:
bench/kernel_timing.cpp), and their rows join the table.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import filtered_samplers  # noqa: E402
import raceoracle  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, nargs="+", default=[1, 64, 256])
    ap.add_argument("--vocab", type=int, default=163840)
    ap.add_argument("--top-k", type=int, default=50)
    ap.add_argument("--top-p", type=float, default=0.9)
    ap.add_argument("--samples", type=int, default=20)
    ap.add_argument("--per-sample", type=int, default=10)
    ap.add_argument("--raceoracle", help="a raceoracle build: its filtered kernels' `bench` joins the table")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("filtered_peers.py: needs a CUDA device")
    dev = torch.device("cuda")
    g = torch.Generator(device=dev).manual_seed(20261130)
    peers = {
        "vllm top-k-first": lambda x, e, t, f: filtered_samplers.vllm_top_k_top_p(x, e, t, 1e-10, 1e-10, f),
        "joint (sort)": lambda x, e, t, f: filtered_samplers.joint(x, e, t, 1e-10, 1e-10, f),
        "unfiltered race": lambda x, e, t, f: filtered_samplers.vllm_top_k_top_p(x, e, t, 1e-10, 1e-10, None),
    }
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}; V = {a.vocab}, bf16, top_k = {a.top_k}, "
          f"top_p = {a.top_p}, T = 0.7; microseconds per call (median [min, max] of {a.samples} x {a.per_sample})")
    print(f"{'peer':18} {'rows':>5} {'median':>9} {'min':>9} {'max':>9}")
    for rows in a.rows:
        x = (torch.randn(rows, a.vocab, device=dev, generator=g) * 3).to(torch.bfloat16)
        e = torch.empty(rows, a.vocab, device=dev).exponential_(generator=g)
        t = torch.full((rows,), 0.7, device=dev)
        f = raceoracle.Filters(torch.full((rows,), a.top_k, dtype=torch.int32, device=dev),
                               torch.full((rows,), a.top_p, device=dev), torch.zeros(rows, device=dev))
        for name, fn in peers.items():
            for _ in range(10):
                fn(x, e, t, f)
            times = []
            for _ in range(a.samples):
                s, z = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
                for _ in range(a.per_sample):
                    fn(x, e, t, f)
                z.record()
                z.synchronize()
                times.append(s.elapsed_time(z) * 1000 / a.per_sample)
            print(f"{name:18} {rows:>5} {statistics.median(times):>9.1f} {min(times):>9.1f} {max(times):>9.1f}")
    if a.raceoracle:
        for c in raceoracle_cells(a):
            print(f"{c['kernel']:18} {c['rows']:>5} {c['median_us']:>9.1f} {c['min_us']:>9.1f} {c['max_us']:>9.1f}")


def raceoracle_cells(a):
    """`raceoracle bench --json` of the filtered kernels at these shapes and filters."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "bench.json")
        cmd = [a.raceoracle, "bench", "--kernels", "fused-filtered", "sort-filtered", "--dtypes", "bf16",
               "--vocab", str(a.vocab), "--rows", *map(str, a.rows), "--top-k", str(a.top_k), "--top-p", str(a.top_p),
               "--samples", str(a.samples), "--launches", str(a.per_sample), "--json", out]
        print("$ " + " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        with open(out) as f:
            return json.load(f)["results"]


if __name__ == "__main__":
    main()

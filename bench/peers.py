#!/usr/bin/env python3
"""What a user would run instead of raceoracle's kernels, timed the way
`raceoracle bench` times them: the exponential race in PyTorch eager (as
engines write it, examples/torch_race_sampler.py), the same function under
torch.compile, and the Triton race of examples/triton_race_sampler.py.

    python3 bench/peers.py [--rows 1 4 ... 256] [--vocab 163840] [--dtypes bf16 f32]
                           [--peers eager compile triton] [--launch python|graph|both]
                           [--raceoracle build/nvidia/cli/raceoracle] [--json out.json]

Shapes and inputs follow `raceoracle bench` (bench/kernel_timing.cpp): rows x V logits
and fp32 noise, a quarter of the rows greedy (T = 0), the rest T = 0.7; a
pool of rows larger than the L2 cache of which each launch reads the next
window, round the pool across samples; per cell `--samples` samples of
`--per-sample` launches between two CUDA events, and the median, min and max microseconds per launch. Each
peer is timed twice by default: launched from Python call by call (what a
script pays), and replayed from a CUDA graph of the sample's calls (what an
engine that captures its decode step pays: the GPU's time alone). The
logits are N(0, 3^2) and the noise Exp(1) (raceoracle bench draws LLM-like
rows; none of these peers' times depend on the values). Before timing, every
peer must give eager's tokens on one window, up to near ties that rounding
may order either way: a peer that samples wrongly is refused, not timed.
With --raceoracle, that build's `bench --json` runs in the same call, on the
same device (with --graph when peers are timed from graphs: its kernels
replayed from graphs too, KERNEL+graph), and its kernels join the table,
with each peer's time over fused-post's launched the same way (higher is
slower).
"""
import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

try:
    import torch
except ImportError as e:
    raise SystemExit(f"peers.py: needs PyTorch ({e}); on Debian: apt-get install python3-torch")

import torch_race_sampler  # noqa: E402

EPS, GREEDY_EPS, MIN_TEMPERATURE = 1e-10, 1e-10, 1e-5  # race/definition.h: kDefaultEps, kDefaultGreedyEps, kMinTemperature
L2_BYTES = 64 << 20  # at least the H200's 60 MB L2
DTYPES = {"bf16": torch.bfloat16, "f32": torch.float32}
GPU_ONLY = ("compile", "triton")  # on the cpu, torch.compile's inductor needs a compiler toolchain run; Triton a GPU


def make_peers(names):
    """name -> race function, and name -> why it is not timed."""
    peers, missing = {}, {}
    for name in names:
        if name == "eager":
            peers[name] = torch_race_sampler.race
        elif name == "compile":
            if not hasattr(torch, "compile"):
                missing[name] = f"torch {torch.__version__} has no torch.compile (2.0 and later)"
            else:
                # One graph per (rows, dtype): 16 shapes by default, past dynamo's
                # default of 8 recompiles, after which it would run eager unannounced.
                torch._dynamo.config.cache_size_limit = 256
                peers[name] = torch.compile(torch_race_sampler.race, dynamic=False)
        elif name == "triton":
            try:
                import triton_race_sampler
                peers[name] = triton_race_sampler.make_race()
            except ImportError as e:
                missing[name] = f"Triton is not importable ({e})"
        else:
            raise SystemExit(f"peers.py: unknown peer '{name}' (eager, compile, triton)")
    return peers, missing


class Pool:
    """Rows for every window of `rows` rows, a quarter of them greedy."""

    def __init__(self, rows, vocab, dtype, device, seed):
        g = torch.Generator(device="cpu").manual_seed(seed)
        per_row = vocab * (torch.finfo(dtype).bits // 8 + 4)
        needed = -(-2 * L2_BYTES // per_row)  # twice L2: the window read next was evicted
        self.rows = -(-needed // rows) * rows
        self.logits = (torch.randn(self.rows, vocab, generator=g) * 3).to(dtype).to(device)
        self.noise = torch.empty(self.rows, vocab).exponential_(generator=g).to(device)
        t = torch.full((self.rows,), 0.7)
        t[::4] = 0.0
        self.temps = t.to(device)
        self.window_rows = rows

    def windows(self):
        return self.rows // self.window_rows

    def window(self, i):
        lo = (i % self.windows()) * self.window_rows
        hi = lo + self.window_rows
        return self.logits[lo:hi], self.noise[lo:hi], self.temps[lo:hi]


def unexplained(window, got, want):
    """Rows where two samplers' tokens differ beyond rounding: a greedy row
    must agree exactly; a sampling row may differ only when the two ids'
    exact keys exp((x - m) / t) / (E + eps) are within 1e-4 of each other
    (fp32 kernels order near ties as their rounding falls)."""
    logits, noise, temps = window
    rows = (got != want).nonzero().flatten().tolist()
    bad = 0
    for r in rows:
        if float(temps[r]) <= GREEDY_EPS or not all(0 <= int(i) < logits.shape[1] for i in (got[r], want[r])):
            bad += 1
            continue
        x = logits[r].double()
        x = x.masked_fill(x.isnan(), float("-inf"))
        t = max(float(temps[r]), MIN_TEMPERATURE)
        keys = [float(torch.exp((x[i] - x.max()) / t) / (noise[r, i].double() + EPS)) for i in (got[r], want[r])]
        bad += abs(keys[0] - keys[1]) > 1e-4 * max(keys)
    return bad


def time_cell(race, pool, samples, per_sample, device, graph=False):
    """Microseconds per launch: median, min, max over samples. graph: the
    calls captured in CUDA graphs of `per_sample` calls and replayed, as
    engines run their decode steps, so no Python or launch overhead is
    timed; otherwise each call is launched from Python. Either way each call
    reads the next window, round the pool across samples (graphs: enough of
    them, replayed in turn, to cover the pool), so no call finds its inputs
    in L2."""
    windows = itertools.count()
    call = lambda: race(*pool.window(next(windows)), EPS, GREEDY_EPS)  # noqa: E731
    if graph:
        side = torch.cuda.Stream()  # warm-up (compilation, autotuning, allocator) off the stream captured next
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                call()
        torch.cuda.current_stream().wait_stream(side)
        graphs = []
        for _ in range(-(-pool.windows() // per_sample)):
            captured = torch.cuda.CUDAGraph()
            with torch.cuda.graph(captured):
                for _ in range(per_sample):
                    call()
            graphs.append(captured)
        turn = itertools.count()

        def run_sample():
            graphs[next(turn) % len(graphs)].replay()
    else:
        for _ in range(3):  # warm-up: compilation, autotuning, allocator
            call()

        def run_sample():
            for _ in range(per_sample):
                call()
    if device == "cuda":
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    us = []
    for _ in range(samples):
        if device == "cuda":
            torch.cuda.synchronize()
            start.record()
        else:
            t0 = time.perf_counter()
        run_sample()
        if device == "cuda":
            stop.record()
            stop.synchronize()
            us.append(start.elapsed_time(stop) * 1000.0 / per_sample)
        else:
            us.append((time.perf_counter() - t0) * 1e6 / per_sample)
    return {"median_us": statistics.median(us), "min_us": min(us), "max_us": max(us)}


def raceoracle_cells(exe, rows, vocab, dtypes, graph, extra=()):
    """`raceoracle bench --json` of that build (with --graph: its kernels replayed from CUDA graphs too;
    `extra`: more of its options): {(kernel, dtype, rows): median us}, a graph-replayed cell's kernel
    named KERNEL+graph."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "bench.json")
        cmd = [exe, "bench", "--vocab", str(vocab), "--rows", *map(str, rows), "--dtypes", *dtypes, "--json", out]
        cmd += (["--graph"] if graph else []) + list(extra)
        print("$ " + " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True)
        with open(out) as f:
            data = json.load(f)
    cells = {}
    for c in data["results"]:
        label = c["kernel"] + ("+graph" if c.get("launch") == "graph" else "")
        cells[(label, c["dtype"], c["rows"])] = c["median_us"]
    return cells, data.get("device", "")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, nargs="+", default=[1, 4, 8, 16, 32, 64, 128, 256])
    p.add_argument("--vocab", type=int, default=163840)
    p.add_argument("--dtypes", nargs="+", default=["bf16", "f32"], choices=sorted(DTYPES))
    p.add_argument("--peers", nargs="+", default=["eager", "compile", "triton"])
    p.add_argument("--samples", type=int, default=30)
    p.add_argument("--per-sample", type=int, default=20)
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"],
                   help="cpu: a smoke run of the eager peer (no GPU figure)")
    p.add_argument("--launch", default="both", choices=["python", "graph", "both"],
                   help="peers launched from Python per call, replayed from a CUDA graph, or both (cuda only)")
    p.add_argument("--raceoracle", help="a raceoracle build: its `bench` joins the table")
    p.add_argument("--json")
    a = p.parse_args()
    if a.device == "cuda" and not torch.cuda.is_available():
        print("peers.py: no CUDA device (torch.cuda.is_available() is False); --device cpu runs a smoke test",
              file=sys.stderr)
        return 2
    if min(a.rows) < 1 or a.vocab < 1 or a.samples < 1 or a.per_sample < 1:
        print("peers.py: --rows, --vocab, --samples and --per-sample must be positive", file=sys.stderr)
        return 2
    peers, missing = make_peers(a.peers)
    if a.device == "cpu":
        for name in [n for n in peers if n in GPU_ONLY]:
            missing[name] = "GPU only"
            del peers[name]
    graphs = {"python": [False], "graph": [True], "both": [False, True]}[a.launch if a.device == "cuda" else "python"]
    device_name = torch.cuda.get_device_name() if a.device == "cuda" else "cpu (NOT a GPU figure)"
    print(f"peers.py: {device_name}, torch {torch.__version__}, V = {a.vocab}")
    for name, why in missing.items():
        print(f"  {name}: not timed: {why}")
    cells = []
    for dtype in a.dtypes:
        for rows in a.rows:
            pool = Pool(rows, a.vocab, DTYPES[dtype], a.device, seed=rows)
            want = torch_race_sampler.race(*pool.window(0), EPS, GREEDY_EPS).to(torch.int64)
            for name, race in peers.items():
                got = race(*pool.window(0), EPS, GREEDY_EPS).to(torch.int64)
                bad = unexplained(pool.window(0), got, want)
                if bad:
                    print(f"peers.py: {name} gave other tokens than eager on {bad} of {rows} rows ({dtype}), not "
                          "explained by rounding: not timed; check it with `raceoracle check --sampler`",
                          file=sys.stderr)
                    return 1
                for graph in graphs:
                    t = time_cell(race, pool, a.samples, a.per_sample, a.device, graph)
                    label = name + ("+graph" if graph else "")
                    cells.append(dict(peer=label, dtype=dtype, rows=rows, **t))
                    print(f"  {label:14s} {dtype:4s} {rows:4d} rows  {t['median_us']:10.1f} us "
                          f"(min {t['min_us']:.1f}, max {t['max_us']:.1f})", flush=True)
            del pool
    kernels, kernel_device = ({}, "")
    if a.raceoracle:
        kernels, kernel_device = raceoracle_cells(a.raceoracle, a.rows, a.vocab, a.dtypes, True in graphs)
    print()
    print(table(cells, kernels, a.rows, a.dtypes))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"device": device_name, "torch": torch.__version__, "vocab": a.vocab, "not_timed": missing,
                       "cells": cells, "raceoracle_device": kernel_device,
                       "raceoracle": [dict(kernel=k, dtype=d, rows=r, median_us=v) for (k, d, r), v in kernels.items()]},
                      f, indent=1)
    return 0


def table(cells, kernels, rows, dtypes):
    """Markdown: median us per (rows, dtype), each peer with its ratio to fused-post launched the same way
    (call by call, or replayed from graphs: NAME+graph against fused-post+graph) when measured."""
    order = ["eager", "compile", "triton"]
    peers = sorted({c["peer"] for c in cells}, key=lambda p: (order.index(p.split("+")[0]), p))
    names = sorted({k for k, _, _ in kernels}) + peers
    head = "| rows | dtype | " + " | ".join(f"{n} us" for n in names) + " |"
    lines = [head, "|" + "---|" * (2 + len(names))]
    by = {(c["peer"], c["dtype"], c["rows"]): c["median_us"] for c in cells}
    by.update(kernels)
    for d in dtypes:
        for r in rows:
            out = []
            for n in names:
                v = by.get((n, d, r))
                ref_name = "fused-post+graph" if n.endswith("+graph") else "fused-post"
                ref = kernels.get((ref_name, d, r))
                out.append("-" if v is None else f"{v:.1f}" + (f" ({v / ref:.2f}x)" if ref and n != ref_name else ""))
            lines.append(f"| {r} | {d} | " + " | ".join(out) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The drawn-noise step against draw-then-race, in one run on one GPU: what
an engine pays per decode step to sample with noise drawn from a seed.

    python3 bench/drawn_step.py --raceoracle build/nvidia/cli/raceoracle
        [--rows 64 128 256] [--vocab 163840] [--rows-like llm flat wide spread] [--json out.json]

draw-then-race: torch's `exponential_` filling a rows x V fp32 tensor (what
engines draw before a race that reads its noise), timed here, plus
`fused-post` reading it; the drawn step: `fused-philox`, which draws its
noise in-kernel. Both raceoracle kernels are timed by that build's `bench`
(`--graph`: replayed from CUDA graphs on a stream of their own), on each
kind of rows `--rows-like` names (a kernel that skips work for ids that
cannot win is as fast as its rows let it be). The draw is timed the same
way, replayed from graphs of `--per-sample` draws. Printed per kind of rows
and row count: the three times and ratio = (draw + fused-post) / fused-philox.
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import peers  # noqa: E402
from peers import torch  # noqa: E402


class DrawPool:
    """Windows of rows x V fp32 to draw into, together twice the L2 cache."""

    def __init__(self, rows, vocab):
        needed = -(-2 * peers.L2_BYTES // (vocab * 4))
        self.window_rows = rows
        self.noise = torch.empty(-(-needed // rows) * rows, vocab, device="cuda")

    def windows(self):
        return self.noise.shape[0] // self.window_rows

    def window(self, i):
        lo = (i % self.windows()) * self.window_rows
        return (self.noise[lo:lo + self.window_rows],)


def draw(e, eps, greedy_eps):  # time_cell's calling convention
    return e.exponential_()


def step_results(like, rows, draws, cells):
    """One row of the table per row count: the draw's median (draws: rows -> time_cell's dict), the two
    kernels' graph-replayed medians (cells: raceoracle_cells' map), and (draw + fused-post) / fused-philox.
    A cell the bench did not return is an error naming it, not a silent gap."""
    out = []
    for r in rows:
        want = [(k, "bf16", r) for k in ("fused-post+graph", "fused-philox+graph")]
        missing = [k for k in want if k not in cells]
        if missing:
            raise SystemExit(f"drawn_step.py: raceoracle bench returned no {missing[0][0]} cell at {r} rows ({like} rows)")
        post, philox = cells[want[0]], cells[want[1]]
        d = draws[r]["median_us"]
        out.append(dict(rows_like=like, rows=r, exponential_us=d, fused_post_us=post, fused_philox_us=philox,
                        ratio=(d + post) / philox))
    return out


def table(results):
    lines = ["| rows like | rows | exponential_ us | fused-post us | draw-then-race us | fused-philox us | ratio |",
             "|---|---|---|---|---|---|---|"]
    for r in results:
        lines.append(f"| {r['rows_like']} | {r['rows']} | {r['exponential_us']:.1f} | {r['fused_post_us']:.1f} | "
                     f"{r['exponential_us'] + r['fused_post_us']:.1f} | {r['fused_philox_us']:.1f} | {r['ratio']:.2f} |")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--raceoracle", required=True, help="a raceoracle build for the nvidia backend")
    p.add_argument("--rows", type=int, nargs="+", default=[64, 128, 256])
    p.add_argument("--vocab", type=int, default=163840)
    p.add_argument("--rows-like", nargs="+", default=["llm"], choices=["llm", "flat", "wide", "spread"])
    p.add_argument("--samples", type=int, default=30)
    p.add_argument("--per-sample", type=int, default=20)
    p.add_argument("--json")
    a = p.parse_args()
    if not torch.cuda.is_available():
        print("drawn_step.py: no CUDA device (torch.cuda.is_available() is False)", file=sys.stderr)
        return 2
    if min(a.rows) < 1 or a.vocab < 1 or a.samples < 1 or a.per_sample < 1:
        print("drawn_step.py: --rows, --vocab, --samples and --per-sample must be positive", file=sys.stderr)
        return 2
    device = torch.cuda.get_device_name()
    print(f"drawn_step.py: {device}, torch {torch.__version__}, V = {a.vocab}, bf16 logits")
    draws = {}
    for rows in a.rows:
        draws[rows] = peers.time_cell(draw, DrawPool(rows, a.vocab), a.samples, a.per_sample, "cuda", graph=True)
        print(f"  exponential_ {rows:4d} x {a.vocab}: {draws[rows]['median_us']:.1f} us", flush=True)
    results, kernel_device = [], ""
    for like in a.rows_like:
        cells, kernel_device = peers.raceoracle_cells(a.raceoracle, a.rows, a.vocab, ["bf16"], True,
                                                      ["--kernels", "fused-post", "fused-philox", "--rows-like", like])
        results += step_results(like, a.rows, draws, cells)
    print()
    print(table(results))
    if a.json:
        with open(a.json + ".tmp", "w") as f:
            json.dump({"device": device, "torch": torch.__version__, "vocab": a.vocab, "raceoracle_device": kernel_device,
                       "exponential": {str(r): t for r, t in draws.items()}, "results": results}, f, indent=1)
        os.replace(a.json + ".tmp", a.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())

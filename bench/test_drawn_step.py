"""bench/drawn_step.py on the cpu (no GPU figure): its refusal without a
device, and the table it computes from the draw's and the kernels' times."""
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import drawn_step  # noqa: E402


def test_without_a_gpu_it_refuses_in_words():
    if drawn_step.torch.cuda.is_available():
        pytest.skip("a CUDA device is present: the refusal is for machines without one")
    r = subprocess.run([sys.executable, os.path.join(HERE, "drawn_step.py"), "--raceoracle", "/nonexistent"],
                       capture_output=True, text=True)
    assert r.returncode == 2
    assert "no CUDA device" in r.stderr


def test_the_ratio_is_draw_plus_fused_post_over_fused_philox():
    cells = {("fused-post+graph", "bf16", 64): 22.0, ("fused-philox+graph", "bf16", 64): 28.0}
    [row] = drawn_step.step_results("llm", [64], {64: {"median_us": 20.0}}, cells)
    assert row["ratio"] == pytest.approx((20.0 + 22.0) / 28.0)
    assert drawn_step.table([row]).splitlines()[2] == "| llm | 64 | 20.0 | 22.0 | 42.0 | 28.0 | 1.50 |"


def test_a_cell_the_bench_did_not_return_is_named():
    with pytest.raises(SystemExit, match="no fused-philox\\+graph cell at 64 rows"):
        drawn_step.step_results("wide", [64], {64: {"median_us": 1.0}}, {("fused-post+graph", "bf16", 64): 1.0})

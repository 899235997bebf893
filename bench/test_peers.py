"""bench/peers.py on the cpu (no GPU figure): every cell measured, a peer
that samples wrongly refused, and the table's ratios to fused-post."""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import peers  # noqa: E402


def test_a_smoke_run_times_every_cell_and_names_what_it_left_out(tmp_path):
    out = tmp_path / "peers.json"
    r = subprocess.run([sys.executable, os.path.join(HERE, "peers.py"), "--device", "cpu", "--rows", "1", "3",
                        "--vocab", "1000", "--samples", "2", "--per-sample", "1", "--json", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    data = json.loads(out.read_text())
    cells = {(c["peer"], c["dtype"], c["rows"]): c for c in data["cells"]}
    assert sorted(cells) == [("eager", d, n) for d in ("bf16", "f32") for n in (1, 3)]
    for c in cells.values():
        assert 0 < c["min_us"] <= c["median_us"] <= c["max_us"]
    assert set(data["not_timed"]) == {"compile", "triton"}  # GPU only
    assert "NOT a GPU figure" in r.stdout


def test_a_peer_that_samples_wrongly_is_refused(monkeypatch, capsys):
    wrong = lambda *args: peers.torch_race_sampler.race(*args) + 1  # noqa: E731
    monkeypatch.setattr(peers, "make_peers", lambda names: ({"eager": peers.torch_race_sampler.race, "wrong": wrong}, {}))
    monkeypatch.setattr(sys, "argv", ["peers.py", "--device", "cpu", "--rows", "2", "--vocab", "500", "--samples", "1"])
    assert peers.main() == 1
    assert "wrong gave other tokens than eager on 2 of 2 rows" in capsys.readouterr().err


def test_the_table_gives_each_time_over_fused_posts():
    cells = [{"peer": "eager", "dtype": "bf16", "rows": 1, "median_us": 25.0}]
    text = peers.table(cells, {("fused-post", "bf16", 1): 10.0, ("baseline", "bf16", 1): 30.0}, [1], ["bf16"])
    assert text.splitlines()[0] == "| rows | dtype | baseline us | fused-post us | eager us |"
    assert text.splitlines()[2] == "| 1 | bf16 | 30.0 (3.00x) | 10.0 | 25.0 (2.50x) |"


def test_graph_replayed_peers_are_compared_with_graph_replayed_fused_post():
    cells = [{"peer": "eager", "dtype": "bf16", "rows": 1, "median_us": 25.0},
             {"peer": "eager+graph", "dtype": "bf16", "rows": 1, "median_us": 12.0}]
    kernels = {("fused-post", "bf16", 1): 10.0, ("fused-post+graph", "bf16", 1): 6.0}
    text = peers.table(cells, kernels, [1], ["bf16"])
    assert text.splitlines()[0] == "| rows | dtype | fused-post us | fused-post+graph us | eager us | eager+graph us |"
    assert text.splitlines()[2] == "| 1 | bf16 | 10.0 | 6.0 | 25.0 (2.50x) | 12.0 (2.00x) |"


def test_only_differences_beyond_rounding_count_against_a_peer():
    import torch
    logits = torch.tensor([[1.0, 3.0, 3.0, 0.0], [1.0, 3.0, 3.0, 0.0], [1.0, 3.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
    noise = torch.ones(4, 4)
    temps = torch.tensor([1.0, 0.0, 1.0, 1.0])
    want = torch.tensor([1, 1, 1, 0])
    # Row 0: ids 1 and 2 tie exactly (explained); row 1 is greedy (must agree);
    # row 2: id 2's key is e^-3 of id 1's; row 3: an id past V.
    got = torch.tensor([2, 2, 2, 4])
    assert peers.unexplained((logits, noise, temps), got, want) == 3
    assert peers.unexplained((logits, noise, temps), want, want) == 0

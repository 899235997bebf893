"""survivors.json's analyses follow their lines through an edit (rekey.py)."""
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import rekey  # noqa: E402

OLD = "int a;\nif (x < y) z = 1;\nw = v + 1;\nreturn;\n"
NEW = "// a new first line\nint a;\nif (x < y) z = 1;\nw = v - 1;\nreturn;\n"
ANALYSES = {
    "k/x.hip:2:5-2:10:EqualityOperator:<=": {"verdict": "equivalent", "why": "w"},   # line kept: moves to 3
    "k/x.hip:3:5-3:10:ArithmeticOperator:-": {"verdict": "gap", "why": "w"},         # line edited: dropped
    "k/x.hip:2:1-4:7:BlockStatement:{}": {"verdict": "equivalent", "why": "w"},      # spans the edit: dropped
    "k/gone.hip:1:1-1:2:BooleanLiteral:true": {"verdict": "gap", "why": "w"},        # file deleted: dropped
}


def sources(texts):
    return lambda path: texts.get(path)


def test_a_kept_line_moves_and_an_edited_one_drops():
    out, dropped = rekey.moved(ANALYSES, sources({"k/x.hip": OLD, "k/gone.hip": "x\n"}), sources({"k/x.hip": NEW}))
    assert out == {"k/x.hip:3:5-3:10:EqualityOperator:<=": ANALYSES["k/x.hip:2:5-2:10:EqualityOperator:<="]}
    assert sorted(dropped) == sorted(k for k in ANALYSES if k != "k/x.hip:2:5-2:10:EqualityOperator:<=")
    assert "changed" in dropped["k/x.hip:3:5-3:10:ArithmeticOperator:-"]
    assert "missing" in dropped["k/gone.hip:1:1-1:2:BooleanLiteral:true"]


def test_no_edit_keeps_every_key_and_a_bad_key_is_named():
    out, dropped = rekey.moved(ANALYSES, sources({"k/x.hip": OLD}), sources({"k/x.hip": OLD}))
    assert len(out) == 3 and set(out) <= set(ANALYSES)
    out, dropped = rekey.moved({"not a key": {}}, sources({}), sources({}))
    assert out == {} and "not a mutant key" in dropped["not a key"]


def test_the_repository_analyses_stay_put_since_head(tmp_path):
    """The command end to end on this repository: with the kernels as
    committed, rekey --since HEAD keeps every analysis where it is."""
    root = os.path.normpath(os.path.join(HERE, "..", ".."))
    if subprocess.run(["git", "-C", root, "diff", "--quiet", "HEAD", "--", "kernels"]).returncode != 0:
        pytest.skip("kernels/ differs from HEAD: the analyses may move")
    copy = tmp_path / "survivors.json"
    copy.write_text(open(os.path.join(HERE, "survivors.json")).read())
    r = subprocess.run([sys.executable, os.path.join(HERE, "mutate.py"), "rekey", "--since", "HEAD",
                        "--analyses", str(copy)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "(0 moved with their lines), 0 dropped" in r.stdout
    assert copy.read_text() == open(os.path.join(HERE, "survivors.json")).read()


def test_a_file_that_is_not_analyses_is_refused_by_name(tmp_path):
    bad = tmp_path / "list.json"
    bad.write_text('["kernels/x.hip:1:1-1:2:BooleanLiteral:true"]\n')
    r = subprocess.run([sys.executable, os.path.join(HERE, "mutate.py"), "rekey", "--since", "HEAD",
                        "--analyses", str(bad)], capture_output=True, text=True)
    assert r.returncode == 2 and "is not an analyses file" in r.stderr and "Traceback" not in r.stderr
    assert bad.read_text() == '["kernels/x.hip:1:1-1:2:BooleanLiteral:true"]\n'  # left as it was

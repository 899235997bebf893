"""raceoracle from pytest: each check is one line.

    python3 -m pytest examples/        (RACEORACLE_BIN, PATH or the build tree gives the binary)
"""
import os
import subprocess
import sys
from xml.etree import ElementTree

import numpy as np
import pytest

import raceoracle
import broken_samplers
import numpy_race_sampler
import own_rng_samplers
import torch_race_sampler


def test_torch_race_sampler():
    raceoracle.check(torch_race_sampler.race, tensors="torch", **torch_race_sampler.CONTRACT)


# One pytest item per law, and one for the agreement run: `pytest -k GreedyIsExact` runs one, and
# pytest's --junitxml has a testcase per law.
test_numpy_race_sampler = raceoracle.law_tests(numpy_race_sampler.race, **numpy_race_sampler.CONTRACT)


def test_law_tests_are_pytest_items_a_ci_report_names(tmp_path):
    here = os.path.dirname(os.path.abspath(__file__))
    package = os.path.dirname(os.path.dirname(os.path.abspath(raceoracle.__file__)))  # the raceoracle this test runs
    (tmp_path / "test_items.py").write_text(
        "import sys\nsys.path[:0] = [%r, %r]\nimport raceoracle, numpy_race_sampler\n"
        "test_race = raceoracle.law_tests(numpy_race_sampler.race, **numpy_race_sampler.CONTRACT)\n" % (package, here))
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path / "test_items.py"),
                          "-k", "GreedyIsExact or PartialsAreFinite", "--junitxml", str(tmp_path / "junit.xml")],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    cases = {c.get("name"): c for c in ElementTree.parse(tmp_path / "junit.xml").iter("testcase")}
    assert set(cases) == {"test_race[GreedyIsExact]", "test_race[PartialsAreFinite]"}, cases
    assert cases["test_race[GreedyIsExact]"].find("skipped") is None
    assert "n/a" in cases["test_race[PartialsAreFinite]"].find("skipped").get("message")


def test_a_broken_sampler_fails_with_its_counterexample_and_replay():
    with pytest.raises(AssertionError) as failure:
        raceoracle.check(broken_samplers.greedy_only_at_zero, tensors="torch", agreement=False, save_failures=False,
                         properties=["GreedyIsExact"], **torch_race_sampler.CONTRACT)
    text = str(failure.value)
    assert "GreedyIsExact: FAILED" in text
    # The coverage-matrix case catches it first: the replay names that case.
    assert "raceoracle.replay(greedy_only_at_zero, 'GreedyIsExact', case=" in text
    # ... and the printed replay reproduces it.
    case = text.split("case='")[1].split("')")[0]
    with pytest.raises(AssertionError):
        raceoracle.replay(broken_samplers.greedy_only_at_zero, "GreedyIsExact", case=case, tensors="torch",
                          **torch_race_sampler.CONTRACT)


def test_a_malformed_reproduce_string_is_a_usage_error():
    with pytest.raises(ValueError, match="malformed reproduce string"):
        raceoracle.replay(numpy_race_sampler.race, "GreedyIsExact", reproduce="not-a-reproduce-string",
                          **numpy_race_sampler.CONTRACT)


def test_a_numpy_sampler_without_eps_is_caught():
    def no_eps(logits, noise, temperatures, eps, greedy_eps):
        # p / E: a zero draw on a masked id is 0 / 0 = NaN, and np.argmax picks the first NaN.
        t = np.maximum(temperatures, np.float32(1e-5))[:, None]
        m = logits.max(axis=1, keepdims=True)
        with np.errstate(all="ignore"):
            keys = np.exp((logits - m) / t) / noise
        return np.where(temperatures <= greedy_eps, logits.argmax(axis=1), keys.argmax(axis=1))

    with pytest.raises(AssertionError, match="MaskedIdsNeverWin: FAILED"):
        raceoracle.check(no_eps, agreement=False, properties=["MaskedIdsNeverWin"], save_failures=False,
                         **numpy_race_sampler.CONTRACT)


def test_a_sampler_written_from_the_protocol_doc_is_right_at_t_equal_greedy_eps():
    # `temperatures <= greedy_eps` as written: greedy_eps arrives as an fp32
    # scalar, so numpy compares in fp32 (SPEC 1) and the row at T == greedy_eps is greedy.
    def natural(logits, noise, temperatures, eps, greedy_eps):
        assert isinstance(eps, np.float32) and isinstance(greedy_eps, np.float32)
        t = np.maximum(temperatures, np.float32(1e-5))[:, None]
        m = logits.max(axis=1, keepdims=True)
        with np.errstate(all="ignore"):
            keys = np.exp((logits - m) / t) / (noise + eps)
        return np.where(temperatures <= greedy_eps, logits.argmax(axis=1), keys.argmax(axis=1))

    raceoracle.check(natural, agreement=False, properties=["GreedyIsExact"], **numpy_race_sampler.CONTRACT)


def test_an_exception_in_the_sampler_is_reported_not_hidden():
    def raises(logits, noise, temperatures, eps, greedy_eps):
        raise RuntimeError("kernel launch failed")

    with pytest.raises(AssertionError, match="the sampler reported an error: RuntimeError: kernel launch failed"):
        raceoracle.check(raises, agreement=False, properties=["TokensInRange"], save_failures=False)


def test_a_failure_is_reported_under_a_c_locale():
    # An ASCII-only process (LC_ALL=C, UTF-8 mode off) gets the counterexample,
    # not a UnicodeDecodeError, when the sampler's message is not ASCII.
    import os
    import subprocess
    import sys
    program = (
        "import raceoracle\n"
        "def raises(logits, noise, temperatures, eps, greedy_eps):\n"
        "    raise ValueError('temp\\u00e9rature \\u2265 0')\n"
        "try:\n"
        "    raceoracle.check(raises, agreement=False, properties=['TokensInRange'], cases=3, save_failures=False)\n"
        "except AssertionError as e:\n"
        "    print('ASSERTION', 'the sampler reported an error: ValueError: temp' in str(e))\n")
    env = dict(os.environ, LC_ALL="C", PYTHONUTF8="0", PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, timeout=300)
    assert b"ASSERTION True" in out.stdout, (out.stdout[-2000:], out.stderr[-2000:])


def test_verify_judges_in_memory_arrays():
    torch = pytest.importorskip("torch")
    g = torch.Generator().manual_seed(1)
    logits = (torch.randn(16, 4097, generator=g) * 3).to(torch.bfloat16)
    noise = torch.empty(16, 4097).exponential_(generator=g)
    temperatures = torch.tensor([0.0, 0.7, 1.0, 2.0] * 4)
    tokens = torch_race_sampler.race(logits, noise, temperatures, 1e-10, 1e-10)
    report = raceoracle.verify(logits, noise, temperatures, tokens, **torch_race_sampler.CONTRACT)
    assert report.passed and report["identical"] + report["explained"] == 16
    wrong = tokens.clone()
    wrong[3] = (wrong[3] + 1) % 4097
    with pytest.raises(AssertionError, match=r"row 3: token \d+ is UNEXPLAINED"):
        raceoracle.verify(logits, noise, temperatures, wrong, **torch_race_sampler.CONTRACT)


def test_verify_names_a_bad_input():
    with pytest.raises(ValueError, match="noise must be"):
        raceoracle.verify(np.zeros((2, 5), np.float32), np.ones((3, 5), np.float32), np.ones(2, np.float32),
                          np.zeros(2, np.int64))


def test_a_sampler_drawing_its_own_noise():
    # It declares torch's CUDA stream; fn gets the seeds and offsets (a streams.Draws) and draws itself.
    # The law that judges its tokens on the noise it drew; every law runs on it in CTest's
    # Samplers.Stream.torch_exponential.Passes (`raceoracle check --sampler`).
    import stream_samplers
    raceoracle.check(stream_samplers.torch_exponential, agreement=False, properties=["AgreesWithOracle"],
                     **numpy_race_sampler.CONTRACT, **stream_samplers.TENSOR)



def test_a_sampler_with_its_own_rng_is_judged_by_its_frequencies():
    report = raceoracle.frequency(own_rng_samplers.numpy_choice, vocab=4096, draws=65536)
    assert report["law"]["draws"] == 65536 and report["law"]["rows"][0]["power"]["tv"] > 0
    with pytest.raises(AssertionError) as failure:
        raceoracle.frequency(own_rng_samplers.temperature_off, vocab=4096, draws=1 << 18)
    assert "raceoracle frequency: FAIL" in str(failure.value) and "drawn" in str(failure.value)

"""Hostile and new users' probes of the commands that read and write files
(docs/RELIABILITY.md, "Nothing lost"): each probe with the exit code and the
message a user gets, run against this build's binary (RACEORACLE_BIN)."""
import os
import subprocess
import sys

import numpy as np
import pytest

import raceoracle

BIN = os.environ["RACEORACLE_BIN"]
HERE = os.path.dirname(os.path.abspath(__file__))


def run(*args, cwd=None):
    out = subprocess.run([BIN, *args], capture_output=True, text=True, cwd=cwd, timeout=300)
    return out.returncode, out.stdout + out.stderr


def race_inputs(rows=6, vocab=50, seed=1):
    rng = np.random.default_rng(seed)
    logits = rng.normal(0, 2, (rows, vocab)).astype(np.float32)
    noise = rng.exponential(1.0, (rows, vocab)).astype(np.float32)
    temperatures = np.full(rows, 0.8, np.float32)
    return logits, noise, temperatures


def kept_race(logits, noise, temperatures, top_k, top_p, min_p):
    """SPEC 9's filtered race in float64: softmax(x / T), top-k, top-p over the
    top-k set renormalised, min-p, then argmax p / E over the kept ids."""
    tokens = []
    for x, e, t, k, p, mp in zip(logits.astype(np.float64), noise.astype(np.float64), temperatures, top_k, top_p, min_p):
        probs = np.exp(x / t - np.max(x / t))
        probs /= probs.sum()
        order = np.argsort(-probs, kind="stable")
        keep = np.zeros(len(x), bool)
        keep[order[:k if 0 < k < len(x) else len(x)]] = True
        mass = np.where(keep, probs, 0) / np.where(keep, probs, 0).sum()
        before = np.cumsum(mass[order]) - mass[order]
        keep[order[before >= p]] = False
        keep &= probs >= mp * probs.max()
        tokens.append(int(np.argmax(np.where(keep, probs / e, -1))))
    return np.array(tokens, np.int32)


@pytest.fixture
def dump(tmp_path):
    logits, noise, temperatures = race_inputs()
    tokens = np.argmax(np.exp(logits / 0.8) / noise, axis=1).astype(np.int32)
    path = str(tmp_path / "run.safetensors")
    raceoracle.write_dump(path, logits, noise, temperatures, tokens)
    return path


# --- an output that would overwrite an input or another output ---------------------------------

def test_a_report_onto_its_input_is_refused_and_the_input_kept(dump, tmp_path):
    before = open(dump, "rb").read()
    rc, out = run("verify", dump, "--json", dump)
    assert rc == 2 and "--json " + dump + " is the input file" in out, out
    assert open(dump, "rb").read() == before
    # the same file by another name: a relative path through `..`, a hard link
    os.link(dump, tmp_path / "link.safetensors")
    (tmp_path / "sub").mkdir()
    rc, out = run("verify", "run.safetensors", "--html", "sub/../link.safetensors", cwd=tmp_path)
    assert rc == 2 and "the report would overwrite what it reports on" in out, out
    assert open(dump, "rb").read() == before


def test_a_merged_report_onto_a_shard_is_refused(tmp_path):
    for name in ("a.json", "b.json"):
        (tmp_path / name).write_text("{}")
    rc, out = run("merge", "a.json", "b.json", "--json", "a.json", cwd=tmp_path)
    assert rc == 2 and "--json a.json is the input file a.json" in out, out
    assert (tmp_path / "a.json").read_text() == "{}"


def test_two_report_forms_on_one_path_are_refused_before_the_run(dump, tmp_path):
    out_path = str(tmp_path / "report")
    rc, out = run("verify", dump, "--json", out_path, "--html", out_path, "--junit", out_path)
    assert rc == 2 and "name one file" in out and "wrote" not in out, out
    assert not os.path.exists(out_path)


# --- a filtered sampler's dump ------------------------------------------------------------------

FILTERS = raceoracle.Filters(np.array([5, 0, 0, 3, 50, 0], np.int32),
                             np.array([1.0, 0.5, 1.0, 1.0, 0.3, 1.0], np.float32),
                             np.array([0.0, 0.0, 0.2, 0.0, 0.0, 0.0], np.float32))


def filtered_dump(path, tokens=None):
    logits, noise, temperatures = race_inputs(rows=6, vocab=50, seed=2)
    if tokens is None:
        tokens = kept_race(logits, noise, temperatures, *FILTERS)
    raceoracle.write_dump(path, logits, noise, temperatures, tokens, filters=FILTERS)


def test_a_correct_filtered_dump_passes(tmp_path):
    path = str(tmp_path / "f.safetensors")
    filtered_dump(path)
    rc, out = run("verify", path)
    assert rc == 0 and "verdict: PASS" in out and "filtered rows" in out, out


def test_a_dump_whose_sampler_ignored_its_filters_fails(tmp_path):
    path = str(tmp_path / "f.safetensors")
    logits, noise, temperatures = race_inputs(rows=6, vocab=50, seed=2)
    unfiltered = np.argmax(np.exp(logits.astype(np.float64) / 0.8) / noise, axis=1).astype(np.int32)
    filtered_dump(path, tokens=unfiltered)
    rc, out = run("verify", path)
    assert rc == 1 and "UNEXPLAINED" in out and "kept=" in out, out


def test_filter_tensors_without_the_declaration_are_refused(tmp_path):
    logits, noise, temperatures = race_inputs()
    tensors = {"logits": logits, "noise": noise, "temperatures": temperatures, "tokens": np.zeros(6, np.int32)}
    path = str(tmp_path / "f.safetensors")
    tensors.update(top_k=np.zeros(6, np.int32), top_p=np.ones(6, np.float32), min_p=np.zeros(6, np.float32))
    raceoracle.save_safetensors(path, tensors)
    rc, out = run("verify", path)
    assert rc == 2 and "does not declare" in out, out


# --- parameters outside SPEC's domain -----------------------------------------------------------

def verify_step_dump(path, top_p=None, min_p=None, draft_counts=None):
    R, k, V = 4, 2, 16
    rng = np.random.default_rng(3)
    target = rng.normal(0, 1, (R, k + 1, V)).astype(np.float32)
    draft_ids = rng.integers(0, V, (R, k)).astype(np.int32)
    uniforms = rng.uniform(0, 1, (R, k))
    noise = rng.exponential(1.0, (R, V)).astype(np.float32)
    temperatures = np.full(R, 0.7, np.float32)
    tokens = np.full((R, k + 1), -1, np.int32)
    tokens[:, 0] = 0
    filters = None
    if top_p is not None or min_p is not None:
        filters = raceoracle.Filters(np.zeros(R, np.int32), np.full(R, 1.0 if top_p is None else top_p, np.float32),
                                     np.full(R, 0.0 if min_p is None else min_p, np.float32))
    raceoracle.write_verify_dump(path, target, draft_ids, None, uniforms, noise, noise, temperatures, tokens,
                                 filters=filters, draft_counts=draft_counts)


@pytest.mark.parametrize("bad, reason", [
    (dict(top_p=float("nan")), "top_p nan"),
    (dict(top_p=0.0), "top_p 0"),
    (dict(top_p=-0.5), "top_p -0.5"),
    (dict(min_p=1.5), "min_p 1.5"),
    (dict(draft_counts=np.full(4, 3, np.int32)), "its draft count 3, k = 2"),
])
def test_invalid_verify_parameters_are_named_per_request_and_fail(tmp_path, bad, reason):
    path = str(tmp_path / "step.safetensors")
    verify_step_dump(path, **bad)
    rc, out = run("verify-step", path)
    assert rc == 1 and "verdict: FAIL" in out, out
    assert all(f"request {i} (T = 0.7): out of contract" in out for i in range(4)), out
    assert reason in out and "4 requests are out of contract for their parameters" in out, out
    rc, out = run("verify-step", path, "--allow-out-of-contract")
    assert rc == 0 and "verdict: PASS" in out and "(allowed: --allow-out-of-contract)" in out, out


def test_a_nan_temperature_in_a_dump_is_named_and_fails(tmp_path):
    logits, noise, temperatures = race_inputs()
    temperatures[2] = np.nan
    path = str(tmp_path / "t.safetensors")
    raceoracle.write_dump(path, logits, noise, temperatures, np.zeros(6, np.int32))
    rc, out = run("verify", path)
    assert rc == 1 and "row 2 (T = nan): out of contract: invalid (NaN temperature)" in out, out


# --- losslessness needs runs enough to see something ----------------------------------------------

def test_losslessness_on_one_run_a_request_is_inconclusive(tmp_path):
    R, k, V = 3, 1, 8
    rng = np.random.default_rng(4)
    target = rng.normal(0, 1, (R, k + 1, V)).astype(np.float32)
    q = np.full((R, k, V), 1.0 / V, np.float32)
    tokens = np.full((R, 1, k + 1), -1, np.int32)
    tokens[:, 0, 0] = 1
    path = str(tmp_path / "runs.safetensors")
    raceoracle.write_lossless_runs(path, target, q, np.full(R, 1.0, np.float32), tokens)
    rc, out = run("verify-lossless", path)
    assert rc == 1 and "verdict: INCONCLUSIVE" in out and "too few runs" in out, out


# --- messages that say what is true ---------------------------------------------------------------

def test_noise_and_seeds_together_are_named(tmp_path):
    logits, noise, temperatures = race_inputs()
    path = str(tmp_path / "both.safetensors")
    raceoracle.save_safetensors(path, {"logits": logits, "noise": noise, "temperatures": temperatures,
                                       "tokens": np.zeros(6, np.int32), "seeds": np.zeros(6, np.uint64),
                                       "offsets": np.zeros(6, np.uint64)})
    rc, out = run("verify", path)
    assert rc == 2 and "has both a 'noise' tensor and 'seeds'" in out, out


def test_bytes_after_the_last_tensor_are_refused(dump, tmp_path):
    with open(dump, "ab") as f:
        f.write(b"appended")
    rc, out = run("verify", dump)
    assert rc == 2 and "8 bytes follow the last tensor's data" in out, out


SAMPLER = os.path.join(HERE, "reliability_samplers.py")


def test_a_token_past_32_bits_is_reported_with_its_value():
    rc, out = run("check", "--sampler", f"{sys.executable} {SAMPLER} wide-token", "--laws", "TokensInRange",
                  "--cases", "3", "--no-mutants", "--no-agreement", "--no-save-failures")
    assert rc == 1 and "token 1099511627776 is OUT-OF-RANGE" in out and "2147483647" not in out, out


def test_a_sampler_that_ignores_its_filters_is_told_so_first():
    rc, out = run("check", "--sampler", f"{sys.executable} {SAMPLER} ignores-filters", "--laws", "AgreesWithOracle",
                  "--cases", "50", "--no-mutants", "--no-agreement", "--no-save-failures")
    assert rc == 1 and "explained by the race without the row's filters" in out, out
    first = out.index("explained by the race without the row's filters")
    assert "top_p_mass" not in out[:first], out


def marked_sleepers(tag):
    """The processes whose command line names `tag` (a sleep's unique duration)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if tag.encode() in f.read():
                    found.append(int(pid))
        except OSError:
            pass
    return found


@pytest.mark.parametrize("mode", ["setsid-grandchild", "double-fork-daemon"])
def test_no_process_a_sampler_started_outlives_it(mode):
    tag = "987.654" if mode == "setsid-grandchild" else "987.655"
    rc, out = run("check", "--sampler", f"{sys.executable} {SAMPLER} {mode} {tag}", "--laws", "TokensInRange",
                  "--cases", "2", "--no-mutants", "--no-agreement", "--no-save-failures")
    assert rc == 0, out
    left = marked_sleepers(tag)
    for pid in left:
        os.kill(pid, 9)
    assert not left, f"{mode}: processes left behind: {left}\n{out}"


@pytest.mark.parametrize("mode, rc_want", [("in-place", 1), ("in-place-consumed", 0)])
def test_a_sampler_that_changes_its_inputs_in_place_is_named(mode, rc_want):
    rc, out = run("check", "--sampler", f"{sys.executable} {SAMPLER} {mode}", "--laws", "TokensInRange",
                  "--cases", "3", "--no-mutants", "--no-agreement", "--no-save-failures")
    assert rc == rc_want, out
    if rc_want:
        assert "the sampler changed its inputs in place (logits[" in out and "declare inputs = consumed" in out, out

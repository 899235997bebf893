"""check(), replay() and verify(): the raceoracle binary driven from Python."""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

from . import _messages as m
from . import streams as _streams
from ._serve import contract_fields, serve_on

_HERE = os.path.dirname(os.path.abspath(__file__))


def find_binary(why=False):
    """The raceoracle binary this package runs: RACEORACLE_BIN when set; else
    the build tree of the source tree this package sits in (python/ beside
    build/: the binary built from the same sources); else `raceoracle` on
    PATH (an installed package). why=True: (path, the reason in words)."""
    def found(path, reason):
        return (path, reason) if why else path

    env = os.environ.get("RACEORACLE_BIN")
    if env:
        if not os.access(env, os.X_OK):
            raise FileNotFoundError("RACEORACLE_BIN=%s is not an executable" % env)
        return found(env, "RACEORACLE_BIN names it")
    root = os.path.dirname(os.path.dirname(_HERE))
    for preset in ("cpu", "nvidia", "amd", "*"):
        for cand in sorted(glob.glob(os.path.join(root, "build", preset, "cli", "raceoracle"))):
            if os.access(cand, os.X_OK):
                return found(cand, "the build tree of the source tree this package sits in (%s)" % root)
    on_path = shutil.which("raceoracle")
    if on_path:
        return found(on_path, "on PATH (no RACEORACLE_BIN, no build tree beside this package)")
    raise FileNotFoundError("raceoracle binary not found: set RACEORACLE_BIN, put it on PATH, "
                            "or build it (cmake --preset cpu && cmake --build --preset cpu)")


class Report(dict):
    """The command's JSON report, with its text output in .text."""

    text = ""

    @property
    def passed(self):
        return self.get("verdict") == "PASS"


def _echo(text):
    """Writes raceoracle's output to stdout, whatever its encoding (an ASCII one replaces what it cannot hold)."""
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    sys.stdout.write(text.encode(encoding, "replace").decode(encoding))


def _serving(fn, args, *, tensors, device, name, contract):
    """Runs `raceoracle ARGS --sampler-fds ...` with this process serving fn. Returns (exit code, text)."""
    req_r, req_w = os.pipe()  # raceoracle writes requests, we read
    rep_r, rep_w = os.pipe()  # we write replies, raceoracle reads
    # raceoracle writes UTF-8 whatever this process's locale (a C locale reads ASCII).
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as out:
        proc = subprocess.Popen([find_binary()] + args + ["--sampler-fds", "%d,%d" % (rep_r, req_w)],
                                pass_fds=(rep_r, req_w), stdout=out, stderr=subprocess.STDOUT)
        os.close(rep_r)
        os.close(req_w)
        try:
            serve_on(fn, req_r, rep_w, tensors=tensors, device=device, name=name, **contract)
        except (BrokenPipeError, m.ProtocolError):
            pass  # raceoracle stopped reading: its exit code and output say why
        finally:
            os.close(req_r)
            os.close(rep_w)
            code = proc.wait()
        out.seek(0)
        return code, out.read()


def _served_report(fn, command, args, *, tensors, device, name, contract):
    """`raceoracle COMMAND ARGS --json FILE` with fn served from this process:
    (exit code, its JSON report with the text output in .text, echoed)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "report.json")
        code, text = _serving(fn, [command, "--json", path] + args, tensors=tensors, device=device, name=name,
                              contract=contract)
        if not os.path.exists(path):
            raise RuntimeError("raceoracle %s exited %d without a report:\n%s" % (command, code, text))
        with open(path, encoding="utf-8") as f:
            report = Report(json.load(f))
    report.text = text
    _echo(text)
    return code, report


def _last_lines(text, limit):
    """The end of `text`, at most `limit` characters, cut at a line start."""
    if len(text) <= limit:
        return text
    tail = text[-limit:]
    return "[... the first %d characters left out]\n" % (len(text) - len(tail) + tail.find("\n") + 1) + \
        tail[tail.find("\n") + 1:]


def _python_replay(fn, property_name, reproduce, case):
    what = "reproduce=%r" % reproduce if reproduce else "case=%r" % case
    return "raceoracle.replay(%s, %r, %s)" % (getattr(fn, "__name__", "fn"), property_name, what)


def laws(verify=False):
    """The laws `raceoracle check` runs, in its order: dicts with name,
    statement and needs (what a subject must offer; empty: any sampler).
    verify=True: the verify step's laws (name and statement)."""
    out = subprocess.run([find_binary(), "list", "--json"], capture_output=True, text=True, check=True).stdout
    return json.loads(out)["verify_laws" if verify else "laws"]


def check(fn, *, cases=100, seed=None, properties=None, agreement=True, rows=None, vocab=None, timeout=60,
          tensors="numpy", device="cpu", name=None, definition=False, laws=True, corpus=None, save_failures=True,
          **contract):
    """Runs `raceoracle check` on fn, served from this process.

    Returns the report (a dict; .passed, .text) when every law held; raises
    AssertionError with each shrunk counterexample and its replay call
    otherwise. `contract` takes scaling_order, exp_ulp, div_ulp, stages and
    the conventions (greedy_rule, greedy_below, eps_rule, eps_fixed,
    nan_logits; docs/CONVENTIONS.md). definition=True judges by SPEC 1 alone,
    the declared conventions reported but not honoured. laws=False runs the
    agreement run alone. A law the sampler cannot serve is listed in the
    report's "not_applicable" (law_tests skips it). A failure the random search
    finds is saved to the sampler's corpus (`corpus`, default
    .raceoracle/corpus/<name> under the current directory) and replayed first
    on the next run; save_failures=False saves nothing.
    step="verify": fn is a speculative-decoding verify step (serve says its
    signature), judged by the verify laws on random batches of requests; a
    failure is replayed by its seed and case count (no corpus).
    """
    args = ["--cases", str(cases), "--sampler-timeout", str(timeout)]
    if not laws:
        args += ["--no-laws"]
    if corpus is not None:
        args += ["--corpus", os.fspath(corpus)]
    if not save_failures:
        args += ["--no-save-failures"]
    if seed is not None:
        args += ["--seed", str(seed)]
    if properties:
        args += ["--laws"] + list(properties)
    if not agreement:
        args += ["--no-agreement"]
    if definition:
        args += ["--definition"]
    if rows is not None:
        args += ["--rows", str(rows)]
    if vocab is not None:
        args += ["--vocab", str(vocab)]
    code, report = _served_report(fn, "check", args, tensors=tensors, device=device, name=name, contract=contract)
    text = report.text
    if code == 0 and report.passed:
        return report
    lines = ["raceoracle check: %s (%d failures)" % (report.get("verdict"), report.get("failures", 0))]
    for p in report.get("properties", []):
        if p["result"] != "pass":
            lines.append("%s: %s" % (p["law"], p["verdict"] if not p["uncovered"] else "UNCOVERED"))
            if p["counterexample"]:
                lines.append("  " + p["counterexample"])
            if p["uncovered"]:
                lines.append("  input classes never met: " + ", ".join(p["uncovered"]))
            if contract.get("step") == "verify" and p["result"] != "pass":  # replayed by its seed and case count
                lines.append("  replay: raceoracle.check(%s, step='verify', properties=[%r], seed=%s, cases=%s)"
                             % (getattr(fn, "__name__", "fn"), p["law"], report.get("seed"), report.get("cases")))
            elif p.get("reproduce") or p.get("case"):
                lines.append("  replay: " + _python_replay(fn, p["law"], p.get("reproduce"), p.get("case")))
    for c in report.get("agreement", []):
        if c["unexplained"] or c["out_of_range"]:
            lines.append("agreement %s T=%s: %d unexplained, %d out of range of %d rows"
                         % (c["mask"], c["temperature"], c["unexplained"], c["out_of_range"], c["rows"]))
    if report.get("agreement_error"):
        lines.append("agreement run failed: " + report["agreement_error"])
    if report.get("error"):
        lines.append(report["error"])
    raise AssertionError("\n".join(lines) + "\n\n" + _last_lines(text, 4000))


def frequency(fn, *, rows=None, vocab=None, draws=None, alpha=None, resolution=None, seed=None, timeout=60,
              tensors="numpy", device="cpu", name=None, **contract):
    """Runs `raceoracle frequency` on fn, a sampler with its own randomness
    (fn(logits, draws, temperatures, eps, greedy_eps) -> tokens [rows, n],
    draws a raceoracle.OwnDraws), served from this process.

    Returns the report (a dict; .passed, .text) when the law held; raises
    AssertionError with what was seen otherwise. rows, vocab, draws (the
    most per row), alpha (the family-wise false-alarm rate) and resolution:
    the command's options (analysis/FREQUENCY.md); `contract` as for check()
    (filters and their semantics included); randomness is "own".
    """
    args = ["--sampler-timeout", str(timeout)]
    for flag, v in (("--rows", rows), ("--vocab", vocab), ("--draws", draws), ("--alpha", alpha),
                    ("--resolution", resolution), ("--seed", seed)):
        if v is not None:
            args += [flag, str(v)]
    code, report = _served_report(fn, "frequency", args, tensors=tensors, device=device, name=name,
                                  contract=dict(contract, randomness="own"))
    text = report.text
    if code == 0 and report.passed:
        return report
    lines = ["raceoracle frequency: %s" % report.get("verdict")]
    for r in report.get("law", {}).get("rows", []):
        if r["failed"]:
            lines.append("row %d: %s" % (r["row"], r["failure"]))
    lines += ["shared noise: " + x for x in report.get("law", {}).get("shared_noise", [])]
    for key in ("determinism", "error"):
        if report.get(key):
            lines.append("%s: %s" % (key, report[key]))
    raise AssertionError("\n".join(lines) + "\n\n" + _last_lines(text, 4000))


def replay(fn, property_name, reproduce=None, case=None, *, seed=None, cases=100, timeout=60, tensors="numpy",
           device="cpu", name=None, definition=False, **contract):
    """Replays one failure check() reported; raises AssertionError while it still fails."""
    args = ["replay", "--law", property_name, "--cases", str(cases), "--sampler-timeout", str(timeout)]
    if definition:
        args += ["--definition"]
    if reproduce:
        args += ["--reproduce", reproduce]
    elif case:
        args += ["--case", case]
    else:
        raise ValueError("replay needs reproduce= or case=")
    if seed is not None:
        args += ["--seed", str(seed)]
    code, text = _serving(fn, args, tensors=tensors, device=device, name=name, contract=contract)
    _echo(text)
    if code == 2:  # a malformed reproduce string, or one printed for another law: a usage error
        raise ValueError(text.strip())
    if code != 0:
        raise AssertionError(text)
    return text


def _entry(x, dtype=None):
    """A tensor for encode(): numpy as it is, torch from any device, bf16 by its bits."""
    if hasattr(x, "detach"):  # torch, any device
        import torch
        t = x.detach().cpu().contiguous()
        if t.dtype == torch.bfloat16:
            return ("BF16", list(t.shape), t.view(torch.int16).numpy().tobytes())
        x = t.numpy()
    return np.ascontiguousarray(np.asarray(x), dtype=dtype)


def _ids_entry(x):
    """Ids as _entry gives them, kept in int32 or int64 (anything else widened to int64)."""
    x = _entry(x)
    return x if x.dtype in (np.int32, np.int64) else x.astype(np.int64)


def _logits_entry(x, name):
    """Logits as _entry gives them, refused (TypeError) in a dtype no judge reads."""
    e = _entry(x)
    if isinstance(e, np.ndarray) and e.dtype not in (np.float32, np.float16):
        raise TypeError("%s: dtype %s is not accepted; give float32, float16 or bfloat16 (a torch tensor), "
                        "the dtypes a sampler's logits come in" % (name, e.dtype))
    return e


_UMASK = os.umask(0)
os.umask(_UMASK)  # read once, at import


def _write_whole(path, data):
    """Writes `data` to `path` whole or not at all: a temporary file beside it, then a rename."""
    fd, tmp = tempfile.mkstemp(prefix=".raceoracle-", dir=os.path.dirname(os.path.abspath(path)))
    try:
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), 0o666 & ~_UMASK)  # mkstemp's 0600 would be a surprise
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def save_safetensors(path, tensors, metadata=None):
    """Writes numpy or torch tensors (bf16 included) as a safetensors file."""
    _write_whole(path, m.encode({name: _entry(t) for name, t in tensors.items()}, metadata or {}))


def _filter_tensors(filters, contract):
    """A Filters(top_k, top_p, min_p) as the three tensors, the filters declared
    (so that their semantics fields may follow)."""
    top_k, top_p, min_p = filters
    contract.setdefault("filters", "top_k,top_p,min_p")
    return dict(top_k=_entry(top_k, np.int32), top_p=_entry(top_p, np.float32), min_p=_entry(min_p, np.float32))


def write_dump(path, logits, noise, temperatures, tokens, *, filters=None, eps=None, greedy_eps=None, **contract):
    """Writes the file `raceoracle verify` and `raceoracle divergence A B` read:
    a sampler's inputs, its tokens and its contract (scaling_order, exp_ulp,
    div_ulp, stages). `noise` may be the streams.Draws a sampler that draws
    its own noise was handed: the file then holds its seeds, offsets and stream.
    filters: raceoracle.Filters(top_k, top_p, min_p), each [rows], or None:
    each row's filters (SPEC 9), judged under the semantics fields given."""
    tok = _ids_entry(tokens)
    tensors = {"logits": _logits_entry(logits, "logits"), "temperatures": _entry(temperatures, np.float32), "tokens": tok}
    if filters is not None:
        tensors.update(_filter_tensors(filters, contract))
    if isinstance(noise, _streams.Draws):
        tensors["seeds"], tensors["offsets"] = noise.seeds, noise.offsets
        contract = dict(noise.fields(), **contract)
    else:
        tensors["noise"] = _entry(noise, np.float32)
    meta = contract_fields(**contract)  # what is left out (None) takes raceoracle's default, written there once
    for key, v in (("eps", eps), ("greedy_eps", greedy_eps)):
        if v is not None:
            meta[key] = repr(float(v))
    _write_whole(path, m.encode(tensors, meta))


def write_verify_dump(path, target_logits, draft_ids, draft_probs, uniforms, recovery_noise, bonus_noise, temperatures,
                      tokens, *, draft_counts=None, filters=None, eps=None, greedy_eps=None, uniform_compare=None,
                      **contract):
    """Writes the file `raceoracle verify-step` reads (SPEC 11): a speculative-decoding
    verify step's inputs and the k + 1 ids per request it wrote (-1 after the
    emitted token). target_logits [R, k + 1, V]; draft_ids [R, k]; draft_probs
    [R, k, V] or None (deterministic drafts); uniforms [R, k] (float64 kept as
    such); recovery_noise and bonus_noise [R, V]; temperatures [R]; tokens
    [R, k + 1]; draft_counts [R] or None: each request's own number of drafts
    k_r <= k (its drafts the first k_r of its row, its bonus row target row
    k_r, its ids k_r + 1 then -1), as engines batch requests of different
    lengths. filters: raceoracle.Filters(top_k, top_p, min_p), each [R], or
    None: each request's filters (SPEC 9), applied to every target row of a
    sampling request (the probabilities renormalised over the kept set); the
    draft probabilities are taken as given. uniform_compare: "f64" (the
    default, vLLM's) or "f32"."""
    ids, tok = _ids_entry(draft_ids), _ids_entry(tokens)
    u = _entry(uniforms)
    u = u if u.dtype in (np.float64, np.float32) else u.astype(np.float64)
    tensors = {"target_logits": _logits_entry(target_logits, "target_logits"), "draft_ids": ids, "uniforms": u,
               "recovery_noise": _entry(recovery_noise, np.float32), "bonus_noise": _entry(bonus_noise, np.float32),
               "temperatures": _entry(temperatures, np.float32), "tokens": tok}
    if draft_probs is not None:
        tensors["draft_probs"] = _entry(draft_probs, np.float32)
    if draft_counts is not None:
        tensors["draft_counts"] = _ids_entry(draft_counts)
    if filters is not None:
        tensors.update(_filter_tensors(filters, contract))
    meta = contract_fields(**contract)
    for key, v in (("eps", eps), ("greedy_eps", greedy_eps)):
        if v is not None:
            meta[key] = repr(float(v))
    if uniform_compare is not None:
        meta["uniform_compare"] = str(uniform_compare)
    _write_whole(path, m.encode(tensors, meta))


def verify_step(target_logits, draft_ids, draft_probs, uniforms, recovery_noise, bonus_noise, temperatures, tokens, *,
                raise_on_failure=True, **fields):
    """Judges a speculative-decoding verify step's ids on in-memory arrays
    (numpy or torch, cpu or cuda): write_verify_dump's arguments. Returns the
    report (.passed, .text); raises AssertionError on an unexplained or
    out-of-range chain unless raise_on_failure=False."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "verify_step.safetensors")
        write_verify_dump(path, target_logits, draft_ids, draft_probs, uniforms, recovery_noise, bonus_noise,
                          temperatures, tokens, **fields)
        return _judge_file("verify-step", path, raise_on_failure)


def write_lossless_runs(path, target_logits, draft_probs, temperatures, tokens, *, draft_ids=None, eps=None,
                        greedy_eps=None, **contract):
    """Writes the file `raceoracle verify-lossless` reads: a verify step run
    many times on each request with its own randomness (drafts drawn from
    draft_probs, uniforms, noise). target_logits [R, k + 1, V]; draft_probs
    [R, k, V], or None with draft_ids [R, k] (fixed drafts); temperatures [R];
    tokens [R, runs, k + 1] (-1 after each run's emitted token)."""
    tok = _ids_entry(tokens)
    tensors = {"target_logits": _logits_entry(target_logits, "target_logits"), "temperatures": _entry(temperatures, np.float32), "tokens": tok}
    if draft_probs is not None:
        tensors["draft_probs"] = _entry(draft_probs, np.float32)
    if draft_ids is not None:
        tensors["draft_ids"] = _ids_entry(draft_ids)
    meta = contract_fields(**contract)
    for key, v in (("eps", eps), ("greedy_eps", greedy_eps)):
        if v is not None:
            meta[key] = repr(float(v))
    _write_whole(path, m.encode(tensors, meta))


def verify_lossless(target_logits, draft_probs, temperatures, tokens, *, draft_ids=None, raise_on_failure=True,
                    **fields):
    """Judges whether a verify step that draws its own randomness is lossless
    (SPEC 11): over its runs, the first emitted token's law is the target's,
    and the second's among runs that accepted the first draft (the frequency
    law, its power in .text). write_lossless_runs's arguments. Returns the
    report; raises AssertionError on a failure unless raise_on_failure=False."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "lossless.safetensors")
        write_lossless_runs(path, target_logits, draft_probs, temperatures, tokens, draft_ids=draft_ids, **fields)
        return _judge_file("verify-lossless", path, raise_on_failure)


def _judge_file(command, path, raise_on_failure):
    """`raceoracle COMMAND PATH --json`: its report (.text its output); ValueError
    when it refuses the file, AssertionError on a failure unless told otherwise."""
    out = path + ".json"
    proc = subprocess.run([find_binary(), command, path, "--json", out], capture_output=True, encoding="utf-8",
                          errors="replace")
    if proc.returncode == 2 or not os.path.exists(out):
        why = (proc.stderr or proc.stdout).strip().replace(path + ": ", "")  # the file is ours, and gone
        raise ValueError("raceoracle %s rejected the inputs: %s" % (command, why))
    with open(out, encoding="utf-8") as f:
        report = Report(json.load(f))
    report.text = proc.stdout
    if raise_on_failure and not report.passed:
        raise AssertionError(proc.stdout)
    return report


def verify(logits, noise, temperatures, tokens, *, eps=None, greedy_eps=None, raise_on_failure=True, **contract):
    """Judges a sampler's tokens on in-memory arrays (numpy or torch, cpu or cuda);
    write_dump's arguments (filters=Filters(...) for a filtering sampler).

    Returns the report (a dict; .passed, .text); raises AssertionError on an
    unexplained or out-of-range token unless raise_on_failure=False.
    """
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "tokens.safetensors")
        write_dump(path, logits, noise, temperatures, tokens, eps=eps, greedy_eps=greedy_eps, **contract)
        return _judge_file("verify", path, raise_on_failure)

"""Generates the schemata sources and the mutant list from the kernel sources
(kernels/*.hip, kernels/race.h and kernels/filtered_select.h), through clang's AST of the translation
units the cpu build compiles. Only device code is mutated (the bodies of
`__global__` and `__device__` functions): host code there checks arguments
and launches, and is judged by tests/kernels, not by the property suite. A mutant the compiler rejects (a switch in a
place that must stay a constant expression, an operator its types lack) is
recorded as CompileError and left out of the schemata."""
import concurrent.futures
import glob
import json
import os
import re
import shlex
import subprocess

import ast_scan
import schemata
import sites as ops
from sources import Source

# kernels/key_arithmetic.h is not a target: host code (analysis/) compiles it
# too, and a mutated inline copy beside the unmutated one would be one
# definition twice (the linker keeps either). The named mutants reach its
# arithmetic (no_m_safe, wrong_rescale, no_rescale, fast_exp).
TARGET_GLOBS = ("kernels/*.hip", "kernels/race.h", "kernels/filtered_select.h")
# The verify kernels are not targets yet: a machine-made mutant is judged by
# `raceoracle check` on the subjects that reach it, and they are not subjects
# of check's laws (their named mutants are killed by
# tests/kernels/verify_kernel_tests.cpp).
EXCLUDED = ("kernels/verify.hip", "kernels/verify_fused.hip")
_MUTANT_ID = re.compile(r"RACEORACLE_MUTANT\((\d+)\)")


def target_files(root):
    files = []
    for g in TARGET_GLOBS:
        files += glob.glob(os.path.join(root, g))
    excluded = {os.path.normpath(os.path.join(root, e)) for e in EXCLUDED}
    return sorted(f for f in (os.path.normpath(f) for f in files) if f not in excluded)


def _compile_commands(build_dir):
    with open(os.path.join(build_dir, "compile_commands.json")) as f:
        db = json.load(f)
    return {os.path.normpath(os.path.join(e["directory"], e["file"])): e for e in db}


def _arguments(entry):
    return entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])


def _flags(entry):
    """The compile command's arguments less the compiler, -c, -o FILE, the
    source file and the part of fused.hip a unit holds (kernels/CMakeLists.txt):
    without one, a unit holds every part, as the schemata build compiles it."""
    source = os.path.normpath(os.path.join(entry["directory"], entry["file"]))
    out, skip = [], False
    for a in _arguments(entry)[1:]:
        if skip:
            skip = False
        elif a.startswith(("-DRACEORACLE_FUSED_PART=", "-DRACEORACLE_FUSED_PARTS=")):
            pass
        elif a in ("-o", "-c"):
            skip = a == "-o"
        elif os.path.normpath(os.path.join(entry["directory"], a)) != source:
            out.append(a)
    return out


def scan(root, build_dir, clang="clang++-14"):
    """All sites, by file, and the TUs (with their compile entries) that hold them."""
    ordered = target_files(root)  # sorted: mutants.json keeps one order from run to run
    targets = set(ordered)
    db = _compile_commands(build_dir)
    units = [f for f in ordered if f.endswith(".hip") and f in db]
    missing = [f for f in targets if f.endswith(".hip") and f not in db]
    if missing:
        raise RuntimeError(f"not in {build_dir}/compile_commands.json: {missing} (configure a cpu build first)")
    sources = {f: Source(f) for f in ordered}
    found = {f: [] for f in targets}
    # One process a unit (the AST dump's parse is most of the time), the sites joined in unit order.
    jobs = [([clang] + _flags(db[u]) + ["-fsyntax-only", "-Wno-everything", "-fno-color-diagnostics", "-Xclang",
                                       "-ast-dump", u], ordered, db[u]["directory"]) for u in units]
    with concurrent.futures.ProcessPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        for per_path in pool.map(_unit_sites, *zip(*jobs)) if jobs else []:
            for path, here in per_path.items():
                found[path] += here
    return sources, found, {u: db[u] for u in units}


def _unit_sites(args, ordered, cwd):
    """The sites one unit's AST holds, by file (a worker process's job in scan)."""
    roots = ast_scan.dump_nodes(args, set(ordered), cwd)
    out = {}
    for path in ordered:
        src = Source(path)
        bodies = ops.device_bodies(src, roots)
        const = ops.const_spans(src, roots)
        here = ops.node_sites(src, roots)
        here += [s for s in ops.macro_sites(src, bodies) if not any(a <= s.lo < b for a, b in const)]
        out[path] = [s for s in here if ops.in_spans(s, bodies)]
    return out


def _compile_errors(entry, unit_out, gen_dir):
    """Compiles the generated unit with the build's own command, the generated tree first on the include path."""
    cmd = [_arguments(entry)[0], "-I" + gen_dir] + _flags(entry)
    cmd += ["-fsyntax-only", "-fno-diagnostics-color", "-fmax-errors=50", unit_out]
    p = subprocess.run(cmd, cwd=entry["directory"], capture_output=True, text=True)
    return p.returncode, p.stderr


def generate(root, build_dir, out_dir, max_rounds=12, log=print):
    sources, found, units = scan(root, build_dir)
    rejected = {}  # alternative id -> compiler's reason
    all_alts = []
    top = {}
    for path in sources:
        t, crossing = schemata.build_tree(found[path])
        top[path] = t
        found[path] = [s for s in _flatten(t)]
        if crossing:
            log(f"  {os.path.relpath(path, root)}: {len(crossing)} crossing sites left out")
    if schemata.assign_ids({p: found[p] for p in sources}) >= 65536:
        raise RuntimeError("more mutants than RACEORACLE_MUTANT_LIMIT (schemata.h)")
    for path in sources:
        for s in found[path]:
            all_alts += [(path, s, a) for a in s.alternatives]
    for round_ in range(max_rounds):
        paths = _write(root, out_dir, sources, top)
        bad = {}
        # The units' syntax checks side by side (fused.hip's alone is most of a serial round).
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            checked = list(pool.map(lambda u: _compile_errors(units[u], paths[u], out_dir), list(units)))
        for rc, err in checked:
            if rc == 0:
                continue
            ids = _ids_in_error(err, out_dir)
            if not ids:
                raise RuntimeError("the schemata do not compile, and no mutant is to blame:\n" + err[-6000:])
            for i in ids:
                bad.setdefault(i, err.split("\n", 1)[0][:300])
        if not bad:
            break
        log(f"  round {round_ + 1}: {len(bad)} mutants rejected by the compiler")
        rejected.update(bad)
        for path, s, a in all_alts:
            if getattr(a, "id", None) in bad:
                a.id = None
    else:
        raise RuntimeError("the schemata still do not compile after %d rounds" % max_rounds)
    mutants = []
    for path, s, a in all_alts:
        src = sources[path]
        (l0, c0), (l1, c1) = src.line_col(s.lo), src.line_col(s.hi)
        entry = {"file": os.path.relpath(path, root), "start": {"line": l0, "column": c0},
                 "end": {"line": l1, "column": c1}, "mutator": a.mutator, "replacement": a.shown,
                 "original": src.text[s.lo:s.hi]}
        entry["key"] = mutant_key(entry)
        if a.id is None:
            entry["status"] = "CompileError"
        else:
            entry["id"] = a.id
        mutants.append(entry)
    ids = {m["key"] for m in mutants}
    if len(ids) != len(mutants):
        raise RuntimeError("two mutants share a key")
    with open(os.path.join(out_dir, "mutants.json"), "w") as f:
        files = {os.path.relpath(p, root): sources[p].text.encode("latin-1").decode("utf-8") for p in sources}
        json.dump({"files": files, "mutants": mutants}, f, indent=1)
    return mutants


def mutant_key(m):
    """A mutant's name across runs: file, position, operator and replacement."""
    s, e = m["start"], m["end"]
    return f'{m["file"]}:{s["line"]}:{s["column"]}-{e["line"]}:{e["column"]}:{m["mutator"]}:{m["replacement"]}'


def _flatten(top):
    for s in top:
        yield s
        yield from _flatten(s.children)


def _write(root, out_dir, sources, top):
    paths = {}
    for path, src in sources.items():
        out = os.path.join(out_dir, os.path.relpath(path, root))
        os.makedirs(os.path.dirname(out), exist_ok=True)
        text = schemata.render_file(src, top[path])
        data = text.encode("latin-1")
        if not os.path.exists(out) or open(out, "rb").read() != data:
            with open(out, "wb") as f:
                f.write(data)
        paths[path] = out
    return paths


def _ids_in_error(err, out_dir):
    """Mutant ids on the generated lines the compiler points at (errors and
    their notes), or on the line before when the line holds none."""
    ids = set()
    for m in re.finditer(r"^(\S+?):(\d+):\d+: (error|note|required from)", err, re.M):
        path, line = m.group(1), int(m.group(2))
        if not path.startswith(out_dir) and not os.path.abspath(path).startswith(os.path.abspath(out_dir)):
            continue
        try:
            lines = open(path, encoding="latin-1").read().split("\n")
        except OSError:
            continue
        for k in (line - 1, line - 2):
            if 0 <= k < len(lines):
                found = _MUTANT_ID.findall(lines[k])
                if found:
                    ids.update(int(i) for i in found)
                    break
    return ids

"""The sampler side of the protocol: answer raceoracle's requests with fn."""
import inspect
import os
import sys
import traceback

import numpy as np

from . import _messages as m
from . import _schema
from . import streams as _streams


# Each word field's words, from the schema the binary exports (protocol/contract_schema.h).
_CONVENTION_WORDS = _schema.WORDS


_FIELDS = {f["name"]: f for f in _schema.SCHEMA["fields"]}


def contract_fields(**terms):
    """The contract terms and conventions a sampler declares, as protocol
    fields: the fields of the schema (_schema.py, protocol/contract_schema.h;
    `raceoracle list --json` lists each with its words and a line of doc),
    anything else refused with the terms listed. A term left None is not
    sent: raceoracle applies its own default
    (post-scale, 2 ulp, 2 ulp, two stages, and SPEC 1's conventions;
    protocol/contract_fields.cpp), written there only.

    Arithmetic (oracle/ERROR_MODEL.md): scale_op "divide" (x / t rather than
    x * (1/t)), key_op "reciprocal" (w * (1/(E + eps))), key_dtype "bf16";
    rescales (how many times a key is rescaled, in place of stages),
    online_ids (an online max: one more rescale per that many ids), normalise
    "sum" (keys divided by the softmax sum), key_domain "log" (the race of
    x / t - log(E + eps), with log_ulp).
    Conventions (docs/CONVENTIONS.md): greedy_rule "zero" (T == 0) or "below"
    (T < greedy_below); eps_rule "none" (key = p / E) or "fixed" (eps_fixed of
    its own); nan_logits "out_of_contract". Each is reported as a deviation.
    Inputs: "kept" (the default: the arrays fn is handed are checked
    unchanged after each call; one changed in place is an error naming it, as
    an engine reads its logits again after sampling) or "consumed" (fn may
    overwrite them).
    Drawn noise (docs/NOISE_STREAMS.md): noise_stream names the stream the
    sampler draws from itself; fn then gets a streams.Draws (seeds, offsets,
    a torch generator, a numpy replay) in place of the noise tensor, and may
    return (tokens, noise) to echo what it drew. stream_layout "rows" (torch:
    one generator per row), stream_dtype "bf16", stream_sm_count and
    stream_threads_per_sm (torch's grid, default 132 x 2048); stream_version
    the release of the library followed (default the newest raceoracle
    replays; streams.LATEST; raceoracle refuses one it does not know).
    Filters (SPEC 9): filters "top_k,top_p,min_p" says fn applies each row's;
    it is then called with filters=Filters(top_k, top_p, min_p) ([rows]
    arrays, or None for a request without them). top_k_ties "keep_all" (every
    id tied at the k-th value) or "exactly_k"; top_p_mass "top_k_first" (p
    measured on the distribution renormalised over the top-k set) or "joint"
    (on the original); filter_ties "any" (ties at a boundary in any order, not
    the lowest id first); filter_sum_depth (additions on any sum's path).
    Own randomness: randomness "own" says fn draws from an RNG of its own
    (torch.multinomial, a rejection sampler): raceoracle cannot replay it and
    judges its token frequencies (`raceoracle frequency`). fn then gets an
    OwnDraws (n, seeds, a torch or numpy generator per row) in place of the
    noise, and returns tokens [rows, n].
    A verify step (SPEC 11): step "verify" says fn is a speculative-decoding
    verify step, fn(target_logits, draft_ids, draft_probs, uniforms,
    recovery_noise, bonus_noise, temperatures, draft_counts=None) -> ids
    [R, k + 1] (-1 after the emitted token; see serve); uniform_compare "f32"
    (the ratio compared with u rounded to fp32; default "f64", vLLM's)."""
    unknown = sorted(set(terms) - set(_FIELDS))
    if unknown:
        raise TypeError("unknown keyword%s %s: not a contract term; the terms are %s"
                        % ("s" if len(unknown) > 1 else "", ", ".join(map(repr, unknown)), ", ".join(_FIELDS)))
    fields = {}
    for key, v in terms.items():
        if v is None:
            continue
        kind = _FIELDS[key]["kind"]
        if kind in ("word", "stream_name"):
            if v not in _CONVENTION_WORDS[key]:
                raise ValueError("%s must be one of %s, got %r" % (key, ", ".join(_CONVENTION_WORDS[key]), v))
            fields[key] = v
        elif kind == "count":
            if int(v) != v or int(v) < 0:
                raise ValueError("%s must be a whole number >= 0, got %r" % (key, v))
            if key == "stages" and int(v) not in (1, 2):
                raise ValueError("stages must be 1 (unfused) or 2 (fused), got %r" % (v,))
            fields[key] = str(int(v))
        else:  # a number; greedy_below and eps_fixed: raceoracle refuses them unless their rule is the one that reads them
            if key.endswith("_ulp") and not (float(v) >= 0):
                raise ValueError("%s must be >= 0, got %r" % (key, v))
            fields[key] = repr(float(v))
    return fields


class Filters(tuple):
    """Each row's filters (SPEC 9): top_k (int32; <= 0 or >= V: off), top_p
    (float32; >= 1: off), min_p (float32; 0: off), as [rows] arrays (numpy, or
    torch tensors on the device)."""

    __slots__ = ()

    def __new__(cls, top_k, top_p, min_p):
        return tuple.__new__(cls, (top_k, top_p, min_p))

    top_k = property(lambda self: self[0])
    top_p = property(lambda self: self[1])
    min_p = property(lambda self: self[2])


class OwnDraws:
    """What a draws request asks of a sampler with its own randomness: `n`
    tokens per row, row r's RNG seeded with seeds[r] (a request's seeds are
    fresh; the same seeds and inputs must give the same tokens).
    generator(row, device) is a torch.Generator so seeded; rng(row) a numpy
    Generator. A sampler with one generator for the batch seeds it with
    seeds[0]."""

    def __init__(self, n, seeds):
        self.n = int(n)
        self.seeds = seeds

    def generator(self, row=0, device="cpu"):
        import torch
        g = torch.Generator(device=device)
        g.manual_seed(int(self.seeds[row]) & ((1 << 63) - 1))
        return g

    def rng(self, row=0):
        return np.random.Generator(np.random.PCG64(int(self.seeds[row])))


def _filters(inputs, tensors, device):
    if "top_k" not in inputs:
        return None
    arrays = [m.as_numpy(inputs[k]) for k in ("top_k", "top_p", "min_p")]
    if tensors == "torch":
        import torch
        arrays = [torch.from_numpy(a.copy()).to(device) for a in arrays]
    return Filters(*arrays)


def _torch_tensor(entry, device):
    import torch  # optional: only for tensors="torch"
    d, shape, raw = entry
    if d == "BF16":  # torch.frombuffer refuses an empty buffer
        x = torch.frombuffer(raw, dtype=torch.int16).view(torch.bfloat16) if len(raw) else torch.zeros(0, dtype=torch.bfloat16)
    else:
        x = torch.from_numpy(m.as_numpy(entry))
    return x.reshape(shape).to(device)


def _torch_inputs(tensors, device):
    t = lambda name: _torch_tensor(tensors[name], device)  # noqa: E731
    return t("logits"), (t("noise") if "noise" in tensors else None), t("temperatures")


# A verify request's tensors (docs/SAMPLER_PROTOCOL.md), in fn's order; None where absent.
_VERIFY_ARGS = ("target_logits", "draft_ids", "draft_probs", "uniforms", "recovery_noise", "bonus_noise", "temperatures")


def _verify_call(fn, fields, inputs, meta, tensors, device, widened):
    """fn on a verify request: ids [R, k + 1]. BF16 target logits widened to
    float32 (numpy) or as torch.bfloat16; draft_counts passed when the request
    carries them, filters= when fn declared filters (None for a request
    without), eps and greedy_eps when fn's signature names them."""
    def get(name):
        if name not in inputs:
            return None
        if tensors == "torch":
            return _torch_tensor(inputs[name], device)
        return widened.logits(inputs[name]) if name == "target_logits" else m.as_numpy(inputs[name])
    kwargs = {}
    if "draft_counts" in inputs:
        kwargs["draft_counts"] = get("draft_counts")
    if fields.get("filters", "none") != "none":
        kwargs["filters"] = _filters(inputs, tensors, device)
    params = inspect.signature(fn).parameters
    eps, greedy_eps = _constants(meta, tensors)
    for key, v in (("eps", eps), ("greedy_eps", greedy_eps)):
        if key in params:
            kwargs[key] = v
    args = [get(n) for n in _VERIFY_ARGS]
    handed = dict(zip(_VERIFY_ARGS, args), draft_counts=kwargs.get("draft_counts"))
    if kwargs.get("filters") is not None:
        handed.update(top_k=kwargs["filters"].top_k, top_p=kwargs["filters"].top_p, min_p=kwargs["filters"].min_p)
    return _kept(lambda: fn(*args, **kwargs), handed, fields)


class _Widened:
    """One float32 buffer for widened BF16 logits, reused while no array of a
    previous request is still referenced (numpy views hold their base)."""

    def __init__(self):
        self.buf = None

    def logits(self, entry):
        n = int(np.prod(entry[1]))
        if entry[0] != "BF16":
            return m.as_numpy(entry)
        if self.buf is None or self.buf.size != n or sys.getrefcount(self.buf) > 2:
            self.buf = np.empty(n, np.uint32)
        return m.as_numpy(entry, self.buf)


def _snapshot(arrays):
    """Copies of the arrays handed to fn (numpy or torch), to compare after the call."""
    return {n: a.clone() if hasattr(a, "clone") else np.array(a, copy=True)
            for n, a in arrays.items() if hasattr(a, "shape")}


def _changed(before, arrays):
    """The first array fn changed in place, with where and how, or None."""
    for name, b in before.items():
        a = arrays[name]
        if hasattr(a, "clone"):  # torch, any dtype (bf16 included) and device: compared as bytes
            import torch
            x, y = a.detach().contiguous().cpu(), b.contiguous().cpu()
            xb, yb = x.view(-1).view(torch.uint8), y.view(-1).view(torch.uint8)
            if bool((xb == yb).all()):
                continue
            flat = (xb != yb).nonzero()[0].item() // x.element_size()
            was, now = y.view(-1)[flat].item(), x.view(-1)[flat].item()
        else:
            if a.tobytes() == b.tobytes():
                continue
            flat = int(np.flatnonzero(a.reshape(-1).view(np.uint8) != b.reshape(-1).view(np.uint8))[0]) // a.itemsize
            was, now = b.reshape(-1)[flat].item(), a.reshape(-1)[flat].item()
        at = tuple(int(i) for i in np.unravel_index(flat, tuple(a.shape)))
        return "%s%s: %r, now %r" % (name, list(at), was, now)
    return None


def _kept(fn_call, arrays, fields):
    """fn_call() with the arrays it is handed checked unchanged after it (unless
    the sampler declared inputs = consumed): an engine reads its logits again
    after sampling (logprobs), so a sampler that scales them in place is named."""
    if fields.get("inputs", "kept") == "consumed":
        return fn_call()
    before = _snapshot(arrays)
    out = fn_call()
    where = _changed(before, arrays)
    if where is not None:
        raise ValueError("the sampler changed its inputs in place (%s); raceoracle hands it arrays to leave as they "
                         "were, as an engine reads its logits again after sampling; declare inputs = consumed if it "
                         "owns them" % where)
    return out


def _numpy_tokens(tokens):
    if hasattr(tokens, "detach"):  # a torch tensor, on any device
        tokens = tokens.detach().cpu().numpy()
    return np.asarray(tokens)


def _constants(meta, tensors):
    """eps and greedy_eps as fn receives them. numpy: fp32 scalars, so that
    `temperatures <= greedy_eps` compares in fp32 as SPEC 1 does (a Python
    float would promote an fp32 array to float64 under numpy 1.x and get
    T == greedy_eps wrong). torch: Python floats, which torch compares in the
    tensor's dtype already, and which a Triton or CUDA launch takes as scalars."""
    eps, greedy_eps = float(meta["eps"]), float(meta["greedy_eps"])
    return (np.float32(eps), np.float32(greedy_eps)) if tensors == "numpy" else (eps, greedy_eps)


def serve_on(fn, read_fd, write_fd, *, tensors="numpy", device="cpu", name=None, **contract):
    """Answers requests on (read_fd, write_fd) until EOF. Returns the number answered."""
    if tensors not in ("numpy", "torch"):
        raise ValueError("tensors must be 'numpy' or 'torch', got %r" % (tensors,))
    fields = contract_fields(**contract)
    if tensors == "torch":
        import torch  # noqa: F401  (imported now: its start-up belongs to the handshake, not the first request)
    answered = 0
    receive, widened = m.Receiver(read_fd), _Widened()
    while True:
        inputs = msg = None  # the last request's arrays: released, so its buffer can be reused
        msg = receive()
        if msg is None:
            return answered
        inputs, meta = msg
        kind, rid = meta.get("type"), meta.get("id", "")
        if kind == "hello":
            reply = dict(fields, type="hello", protocol=m.PROTOCOL_VERSION, name=name or getattr(fn, "__name__", "sampler"))
            m.write_message(write_fd, {}, reply)
            continue
        verify = fields.get("step") == "verify"
        if kind not in (("verify",) if verify else ("sample", "draws")):
            m.write_message(write_fd, {}, {"type": "error", "id": rid, "message": "unknown request type %r" % kind})
            continue
        try:
            if verify:  # a speculative-decoding verify step: ids [R, k + 1]
                out = _verify_call(fn, fields, inputs, meta, tensors, device, widened)
                m.write_message(write_fd, {"tokens": _numpy_tokens(out)}, {"type": "tokens", "id": rid})
                out = None
                answered += 1
                continue
            if tensors == "torch":
                logits, noise, temps = _torch_inputs(inputs, device)
            else:
                logits = widened.logits(inputs["logits"])
                noise = m.as_numpy(inputs["noise"]) if "noise" in inputs else None
                temps = m.as_numpy(inputs["temperatures"])
            if kind == "draws":  # its own randomness: n tokens a row from its own RNG, seeded per row
                noise = OwnDraws(meta["draws"], m.as_numpy(inputs["seeds"]))
            elif "seeds" in inputs:  # a drawn-noise request: the sampler draws from its declared stream
                noise = _streams.Draws(fields, m.as_numpy(inputs["seeds"]), m.as_numpy(inputs["offsets"]),
                                       inputs["logits"][1][1])
            args = (logits, noise, temps) + _constants(meta, tensors)
            handed = {"logits": logits, "noise": noise, "temperatures": temps}
            if fields.get("filters", "none") != "none":
                filters = _filters(inputs, tensors, device)
                if filters is not None:
                    handed.update(top_k=filters.top_k, top_p=filters.top_p, min_p=filters.min_p)
                out = _kept(lambda: fn(*args, filters=filters), handed, fields)
            else:
                out = _kept(lambda: fn(*args), handed, fields)
            tensors_out = {}
            if isinstance(out, tuple):  # (tokens, the noise it drew): raceoracle checks the echo against the stream
                out, echo = out
                if hasattr(echo, "detach"):  # a torch tensor, bf16 included (numpy has no bf16)
                    echo = echo.detach().float().cpu().numpy()
                tensors_out["noise"] = np.ascontiguousarray(echo, dtype=np.float32)
            tensors_out["tokens"] = _numpy_tokens(out)
            m.write_message(write_fd, tensors_out, {"type": "tokens", "id": rid})
            logits = noise = temps = out = echo = tensors_out = args = None
        except Exception as e:  # the sampler raised on these inputs: an answer raceoracle reports
            traceback.print_exc(file=sys.stderr)
            m.write_message(write_fd, {}, {"type": "error", "id": rid, "message": "%s: %s" % (type(e).__name__, e)})
        answered += 1


def serve(fn, *, tensors="numpy", device="cpu", name=None, **contract):
    """Runs the sampler side of the protocol on stdin/stdout until EOF.

    fn(logits, noise, temperatures, eps, greedy_eps) -> tokens [rows]; a
    verify step (step="verify"): fn(target_logits [R, k + 1, V], draft_ids
    [R, k], draft_probs [R, k, V] or None, uniforms [R, k] float64,
    recovery_noise [R, V], bonus_noise [R, V], temperatures [R],
    draft_counts=[R] when a request carries them, filters=Filters(...) or
    None when it declared filters) -> ids [R, k + 1], and eps=, greedy_eps=
    when its signature names them. With
    tensors="numpy", BF16 logits arrive widened to float32 (exactly), and eps
    and greedy_eps as numpy float32 scalars; with tensors="torch", logits as
    torch.bfloat16 (or float32) on `device`, eps and greedy_eps as Python
    floats (torch compares them in the tensor's dtype). Anything the
    process prints to stdout goes to stderr: stdout carries the protocol.
    `contract`: the terms and conventions contract_fields() takes.
    """
    contract_fields(**contract)  # a misspelt or malformed term fails here, before the protocol starts
    protocol_out = os.dup(1)
    os.dup2(2, 1)  # print() and C-level writes to fd 1 now land on stderr
    sys.stdout = sys.stderr
    try:
        return serve_on(fn, 0, protocol_out, tensors=tensors, device=device, name=name, **contract)
    finally:
        os.close(protocol_out)

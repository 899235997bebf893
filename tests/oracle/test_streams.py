"""raceoracle.streams (the package's numpy replay) against the draws torch made
on an H200 (tests/oracle/known_answers), word for word, as
noise_streams_tests.cpp checks the C++ replay."""
import json
import os
import struct

import numpy as np

from raceoracle import streams

HERE = os.path.dirname(os.path.abspath(__file__))


def load(name):
    raw = open(os.path.join(HERE, "known_answers", name), "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    meta = header.pop("__metadata__")

    def tensor(key, dtype):
        a, b = header[key]["data_offsets"]
        return np.frombuffer(raw[8 + n + a:8 + n + b], dtype)

    return tensor, meta


def test_torch_uniforms_and_offset_advance():
    tensor, meta = load("torch_cuda_exponential.safetensors")
    for case in ("whole", "whole_small", "whole_offset"):
        seed, offset, rows, vocab = (int(meta[case + "." + k]) for k in ("seed", "offset", "rows", "vocab"))
        want = tensor(case + ".uniform", np.float32)
        got = streams.torch_uniform(seed, offset, tensor(case + ".index", np.int64), rows * vocab)
        assert np.array_equal(got, np.where(want == 0, np.float32(1), want))  # uniform_ maps 1 to 0
        assert streams.torch_offset_advance(rows * vocab) == int(meta[case + ".offset_after"]) - offset


def test_curand_words():
    tensor, meta = load("curand_philox.safetensors")
    for k in range(3):  # offsets that are multiples of 4, as torch's are
        seed, offset = int(meta["draw%d.seed" % k]), int(meta["draw%d.offset" % k])
        subs = tensor("draw%d.subsequence" % k, np.uint64)
        words = tensor("draw%d.word" % k, np.uint32).reshape(len(subs), 3, 4)
        for call in range(3):
            assert np.array_equal(np.stack(streams.curand_words(seed, subs, offset, call), 1), words[:, call, :])


def test_triton_words_and_gumbel():
    tensor, meta = load("triton_philox.safetensors")
    seeds, pos = tensor("seed", np.int64), tensor("position", np.int64)
    uniform = tensor("uniform", np.float32).reshape(len(seeds), -1)
    for r in range(len(seeds)):
        g = streams.triton_randint64(int(seeds[r]), int(pos[r]))
        assert int(g) == int(tensor("word", np.int64)[r])
        ids = np.arange(uniform.shape[1])
        assert np.array_equal(streams.triton_uniform(streams.triton_randint(int(g), ids)), uniform[r])


def test_a_dump_of_draws_names_its_stream(tmp_path):
    # write_dump with the Draws a sampler was handed: seeds, offsets and the stream travel, verify replays them.
    import raceoracle
    import subprocess
    rows, vocab = 4, 300
    draws = streams.Draws({"noise_stream": "torch-cuda-exponential"}, np.full(rows, 77, np.uint64),
                          np.full(rows, 8, np.uint64), vocab)
    rng = np.random.default_rng(1)
    logits = rng.normal(size=(rows, vocab)).astype(np.float32)
    temps = np.ones(rows, np.float32)
    keys = np.exp(logits - logits.max(axis=1, keepdims=True)) / (draws.noise() + np.float32(1e-10))
    path = str(tmp_path / "drawn.safetensors")
    raceoracle.write_dump(path, logits, draws, temps, keys.argmax(axis=1), stages=1)
    out = subprocess.run([raceoracle.find_binary(), "verify", path], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    # Another seed's race fails.
    other = streams.Draws({"noise_stream": "torch-cuda-exponential"}, np.full(rows, 78, np.uint64),
                          np.full(rows, 8, np.uint64), vocab)
    keys = np.exp(logits - logits.max(axis=1, keepdims=True)) / (other.noise() + np.float32(1e-10))
    raceoracle.write_dump(path, logits, draws, temps, keys.argmax(axis=1), stages=1)
    assert subprocess.run([raceoracle.find_binary(), "verify", path], capture_output=True).returncode == 1


def test_the_package_names_the_streams_the_header_defines():
    # One list in C++ (race/noise_streams.h, kStreams), mirrored in the pure-Python package: kept equal here.
    import re
    header = open(os.path.join(HERE, "..", "..", "race", "noise_streams.h")).read()
    table = header[header.index("kStreams[] = {"):header.index("};", header.index("kStreams[] = {"))]
    declared = re.findall(r'StreamKind::\w+, "([a-z0-9-]+)", (\d+)', table)
    assert tuple(n for n, _ in declared) == streams.STREAMS
    assert dict((n, int(v)) for n, v in declared) == streams.LATEST
    assert sorted(streams.LATEST) == sorted(streams.STREAMS)


def test_flashinfer_layout_reads_the_librarys_tokens():
    # FlashInfer 0.6.18's own kernel on zero logits: each token is the argmin of E; version 2 reads them all
    # (the 32-bit wrap included), version 1 misses where V is not a multiple of 4.
    tensor, meta = load("flashinfer_tokens.safetensors")
    for case in ("v3", "v6", "v4097", "wrap"):
        seed, offset, rows, vocab, first = (int(meta[case + "." + k]) for k in ("seed", "offset", "rows", "vocab", "first"))
        tokens = tensor(case + ".token", np.int32)[:8]
        got = {v: streams.flashinfer_noise(seed, offset, len(tokens), vocab, v, first=first).argmin(axis=1) for v in (1, 2)}
        assert np.array_equal(got[2], tokens), case
        assert not np.array_equal(got[1], tokens), case


def test_vllm_current_draw():
    tensor, meta = load("triton_gumbel_v2.safetensors")
    seeds, pos = tensor("seed", np.int64), tensor("position", np.int64)
    noise = tensor("noise", np.float32).reshape(len(seeds), -1)
    got = streams.triton_gumbel_noise(seeds.astype(np.uint64), pos.astype(np.uint64), noise.shape[1], version=2)
    # libdevice's log1pf within 1 ulp and this replay's rounding: 1.5 x 2^-23 relative (noise_bound's version 2)
    assert np.all(np.abs(got.astype(np.float64) - noise) <= 1.5 * 2.0**-23 * got)

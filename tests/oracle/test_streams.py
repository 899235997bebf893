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

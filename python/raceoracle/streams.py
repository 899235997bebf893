"""The field's noise streams, replayed in numpy (docs/NOISE_STREAMS.md).

The same streams as raceoracle's C++ oracle (race/noise_streams.h), for a
sampler written in numpy that must draw what a GPU library draws, e.g. a
CPU stand-in for vLLM's `q.exponential_(generator=g)`:

    from raceoracle import streams
    E = streams.torch_exponential(seed, offset, rows, vocab)        # float32 [rows, vocab]

Uniform words are exact (checked word for word against fixtures drawn on
an H200); E uses numpy's accurate log where the GPU uses the fast __logf,
which stays within the transform's error bound the oracle allows.
"""
import numpy as np

from . import _schema

M0, M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
W0, W1 = np.uint32(0x9E3779B9), np.uint32(0xBB67AE85)
LO = np.uint64(0xFFFFFFFF)

# torch 2.11's CUDA distribution kernels (ATen/native/cuda/DistributionTemplates.h)
TORCH_BLOCK = 256
TORCH_CALL_WORDS = 4


def philox4x32(c0, c1, c2, c3, k0, k1, rounds=10):
    """Philox-4x32-`rounds` of counters (c0..c3) and key (k0, k1), elementwise; four uint32 arrays."""
    c = [np.asarray(x, dtype=np.uint64) & LO for x in (c0, c1, c2, c3)]
    k0 = np.asarray(k0, dtype=np.uint64) & LO
    k1 = np.asarray(k1, dtype=np.uint64) & LO
    for r in range(rounds):
        p0, p1 = M0 * c[0], M1 * c[2]
        c = [((p1 >> np.uint64(32)) ^ c[1] ^ k0) & LO, p1 & LO, ((p0 >> np.uint64(32)) ^ c[3] ^ k1) & LO, p0 & LO]
        if r + 1 < rounds:
            k0 = (k0 + np.uint64(W0)) & LO
            k1 = (k1 + np.uint64(W1)) & LO
    return [x.astype(np.uint32) for x in c]


def curand_words(seed, subsequence, offset, call):
    """Words of call `call` after curand_init(seed, subsequence, offset) (offset a multiple of 4, as torch's are)."""
    if offset % 4:
        raise ValueError("curand_words replays offsets that are multiples of 4 (torch's), got %d" % offset)
    sub = np.asarray(subsequence, dtype=np.uint64)
    ctr = np.uint64(offset // 4) + np.asarray(call, dtype=np.uint64)  # the low 64 bits: offset / 4 + call
    carry = ctr < np.uint64(offset // 4)
    hi = sub + carry.astype(np.uint64)
    return philox4x32(ctr & LO, ctr >> np.uint64(32), hi & LO, hi >> np.uint64(32), np.uint64(seed) & LO,
                      np.uint64(seed) >> np.uint64(32))


def curand_uniform(w):
    """cuRAND's float uniform in (0, 1]: fl(fl(w) 2^-32 + 2^-33)."""
    return (np.asarray(w, dtype=np.uint32).astype(np.float32) * np.float32(2.0**-32)) + np.float32(2.0**-33)


def torch_grid(numel, sm_count=132, max_threads_per_sm=2048):
    """Threads of torch's grid-stride distribution kernel for `numel` elements."""
    blocks = min((numel + TORCH_BLOCK - 1) // TORCH_BLOCK, sm_count * (max_threads_per_sm // TORCH_BLOCK))
    return blocks * TORCH_BLOCK


def torch_offset_advance(numel, sm_count=132, max_threads_per_sm=2048):
    """How far one draw of `numel` elements advances the generator's offset."""
    T = torch_grid(numel, sm_count, max_threads_per_sm)
    return ((numel - 1) // (T * TORCH_CALL_WORDS) + 1) * TORCH_CALL_WORDS


def torch_uniform(seed, offset, index, numel, sm_count=132, max_threads_per_sm=2048):
    """The cuRAND uniform of linear element `index` of a tensor of `numel` elements drawn by torch's
    uniform_/exponential_ with a CUDA generator at (seed, offset)."""
    T = torch_grid(numel, sm_count, max_threads_per_sm)
    li = np.asarray(index, dtype=np.int64)
    call, lane, thread = li // (4 * T), (li % (4 * T)) // T, li % T
    w = curand_words(seed, thread, offset, call)
    word = np.choose(lane, w)
    return curand_uniform(word)


def rocrand_uniform(w):
    """rocRAND's float uniform in (0, 1] (hiprand on AMD): fl(2^-32 + fl(w) 2^-32)."""
    return np.float32(2.0**-32) + np.asarray(w, dtype=np.uint32).astype(np.float32) * np.float32(2.0**-32)


def aiter_exponential(seed, offset, rows, vocab):
    """E of aiter's internal-noise kernels: id n of row r is lane n mod 4 of call n / 4096 of
    hiprand_init(seed, subsequence = r 1024 + (n / 4) mod 1024, offset); torch's transform."""
    n = np.arange(vocab, dtype=np.int64)
    out = np.empty((rows, vocab), np.float32)
    for r in range(rows):
        w = curand_words(seed, r * 1024 + (n // 4) % 1024, offset, n // 4096)
        out[r] = exponential_of_uniform(rocrand_uniform(np.choose(n % 4, w)))
    return out


def exponential_of_uniform(u, dtype=np.float32):
    """torch's transform: 2^-24 where u >= 1 - 2^-24 (its fast log would underflow), else -log(u);
    numpy's accurate log, within the bound of the GPU's __logf (docs/NOISE_STREAMS.md)."""
    u = np.asarray(u, dtype=np.float32)
    with np.errstate(divide="ignore"):
        e = np.where(u >= np.float32(1 - 2.0**-24), np.float32(2.0**-24), -np.log(u))
    return e.astype(np.float32)


def torch_exponential(seed, offset, rows, vocab, sm_count=132, max_threads_per_sm=2048):
    """E of `torch.empty(rows, vocab).exponential_(generator=g)` with g at (seed, offset), float32."""
    n = rows * vocab
    u = torch_uniform(seed, offset, np.arange(n), n, sm_count, max_threads_per_sm)
    return exponential_of_uniform(u).reshape(rows, vocab)


def triton_randint(seed, offset):
    """Triton's tl.randint(seed, offset) for an int32 offset: word 0 of Philox(key = seed, counter = (offset, 0, 0, 0))."""
    s = np.uint64(seed)
    return philox4x32(np.asarray(offset, dtype=np.int64).astype(np.uint32), 0, 0, 0, s & LO, s >> np.uint64(32))[0]


def triton_uniform(w):
    """Triton's uint_to_uniform_float: the word as int32, negatives x to -x - 1, times 4.6566127342e-10 (in [0, 1))."""
    x = np.asarray(w, dtype=np.uint32).view(np.int32).astype(np.int64)
    x = np.where(x < 0, -x - 1, x)
    return x.astype(np.float32) * np.float32(4.6566127342e-10)


TRITON_RAND_MIN = np.float32(4.6566127342e-10)  # the smallest positive tl.rand


def triton_gumbel_noise(seeds, positions, vocab, version=None):
    """E of vLLM Model Runner V2's gumbel_sample, float32 [rows, vocab]; u = tl.rand(tl.randint(seed, position), id).
    Version 2 (vLLM at 03f97cc): u clamped to the smallest positive tl.rand, E = -log1p(-u) in fp32.
    Version 1 (earlier): E = -log(u + 1e-20) in float64 (its Gumbel g is -log(E + 1e-20)). None: the newest."""
    version = version or LATEST["vllm-triton-gumbel"]
    ids = np.arange(vocab, dtype=np.int64)
    out = np.empty((len(seeds), vocab), np.float32)
    for r, (s, p) in enumerate(zip(seeds, positions)):
        g = triton_randint64(int(s), int(p))
        u = triton_uniform(triton_randint(int(g), ids))
        if version == 1:
            out[r] = -np.log(u.astype(np.float64) + 1e-20)
        else:
            out[r] = -np.log1p(-np.maximum(u, TRITON_RAND_MIN).astype(np.float64))
    return out


def flashinfer_width(vocab, version=None):
    """Ids a curand_init in FlashInfer's sampling_from_logits: gcd(4, V) (fp32 logits); version 1: 4 for every V."""
    return 4 if (version or LATEST["flashinfer-curand"]) == 1 else int(np.gcd(4, vocab))


def flashinfer_noise(seed, offset, rows, vocab, version=None, first=0):
    """E of FlashInfer's sampling_from_logits at (seed, offset), float32 [rows, vocab] for rows first .. first +
    rows - 1 of the batch: id n of row r draws lane
    n mod W of curand_init(seed, r V + W floor(n / W), offset), W its width; version 2 forms that subsequence in
    32 bits as the library does (None: the newest version). Its Gumbel is -log(E) up to a constant,
    E = -log(u (1 - 2^-23))."""
    version = version or LATEST["flashinfer-curand"]
    w = flashinfer_width(vocab, version)
    n = np.arange(vocab, dtype=np.uint64)
    out = np.empty((rows, vocab), np.float32)
    for r in range(rows):
        sub = np.uint64(first + r) * np.uint64(vocab) + np.uint64(w) * (n // np.uint64(w))
        if version != 1:
            sub &= LO
        words = np.stack(curand_words(seed, sub, offset, 0))
        u = curand_uniform(words[(n % np.uint64(w)).astype(np.int64), np.arange(vocab)]).astype(np.float64)
        out[r] = -np.log(u * (1 - 2.0**-23))
    return out


def triton_randint64(seed, offset):
    """tl.randint(seed, offset) for a 64-bit offset: counter (offset lo, offset hi, 0, 0)."""
    s, o = np.uint64(seed), np.uint64(offset)
    return philox4x32(o & LO, o >> np.uint64(32), 0, 0, s & LO, s >> np.uint64(32))[0]


# The streams raceoracle replays, in its order, and each one's newest version: the binary's exported schema
# (_schema.py; race/noise_streams.h, kStreams). The numpy replay below covers all but raceoracle-philox.
STREAMS = _schema.WORDS["noise_stream"]
LATEST = dict(_schema.LATEST_STREAM_VERSIONS)


class Draws:
    """What fn gets in place of the noise tensor when its sampler declares a
    noise stream (docs/SAMPLER_PROTOCOL.md, version 2): each row's seed and
    offset, chosen by raceoracle, and the means to draw from them.

        g = draws.generator(row)          # torch.Generator(device) at (seeds[row], offsets[row])
        E = draws.noise()                 # the stream replayed in numpy, float32 [rows, vocab]

    For torch-cuda-exponential with stream_layout "tensor" every row holds the
    same seed and offset: one draw over the whole [rows, vocab] tensor, e.g.
    `q.exponential_(generator=draws.generator())`.
    """

    def __init__(self, fields, seeds, offsets, vocab):
        self.stream = fields.get("noise_stream")
        self.version = int(fields.get("stream_version", LATEST.get(self.stream, 1)))
        self.per_row = fields.get("stream_layout", "tensor") == "rows"
        self.dtype = fields.get("stream_dtype", "f32")
        self.sm_count = int(fields.get("stream_sm_count", 132))
        self.threads_per_sm = int(fields.get("stream_threads_per_sm", 2048))
        self.seeds = np.asarray(seeds, dtype=np.uint64)
        self.offsets = np.asarray(offsets, dtype=np.uint64)
        self.vocab = int(vocab)

    def __len__(self):
        return len(self.seeds)

    def fields(self):
        """The stream as contract_fields' keywords (what a dump of these draws declares)."""
        f = dict(noise_stream=self.stream, stream_dtype=self.dtype, stream_version=self.version)
        if self.stream == "torch-cuda-exponential":
            f.update(stream_layout="rows" if self.per_row else "tensor", stream_sm_count=self.sm_count,
                     stream_threads_per_sm=self.threads_per_sm)
        return f

    def generator(self, row=0, device="cuda"):
        """A torch.Generator on `device` at row `row`'s seed and offset (torch keeps seeds as signed 64-bit)."""
        import torch
        g = torch.Generator(device=device)
        g.manual_seed(int(self.seeds[row]))
        g.set_offset(int(self.offsets[row]))
        return g

    def noise(self):
        """The declared stream replayed in numpy (uniform words exact, accurate log), float32 [rows, vocab]."""
        rows = len(self.seeds)
        if self.stream == "torch-cuda-exponential":
            if not self.per_row:
                e = torch_exponential(int(self.seeds[0]), int(self.offsets[0]), rows, self.vocab, self.sm_count,
                                      self.threads_per_sm)
            else:
                e = np.stack([torch_exponential(int(s), int(o), 1, self.vocab)[0] for s, o in zip(self.seeds, self.offsets)])
            return _round_bf16(e) if self.dtype == "bf16" else e
        if self.stream == "vllm-triton-gumbel":
            return triton_gumbel_noise(self.seeds, self.offsets, self.vocab, self.version)
        if self.stream == "flashinfer-curand":
            return flashinfer_noise(int(self.seeds[0]), int(self.offsets[0]), rows, self.vocab, self.version)
        if self.stream == "aiter-hiprand":
            return aiter_exponential(int(self.seeds[0]), int(self.offsets[0]), rows, self.vocab)
        raise NotImplementedError("no numpy replay of %r yet: draw it with the library itself" % (self.stream,))


def _round_bf16(x):
    b = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    b = (b + np.uint64(0x7FFF) + ((b >> np.uint64(16)) & np.uint64(1))) >> np.uint64(16)
    return (b.astype(np.uint32) << np.uint32(16)).view(np.float32)

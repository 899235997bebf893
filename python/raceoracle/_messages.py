"""Safetensors documents as protocol messages (docs/SAMPLER_PROTOCOL.md).

Every message is one safetensors document: an 8-byte little-endian header
length, the JSON header, then the data. Pure Python over numpy.
"""
import json
import os
import struct

import numpy as np

PROTOCOL_VERSION = "2"

_NUMPY = {"F32": np.float32, "F64": np.float64, "F16": np.float16, "I32": np.int32, "I64": np.int64,
          "I16": np.int16, "I8": np.int8, "U8": np.uint8, "BOOL": np.bool_, "BF16": np.uint16, "U64": np.uint64}
_NAMES = {np.dtype(np.float32): "F32", np.dtype(np.float64): "F64", np.dtype(np.float16): "F16",
          np.dtype(np.int32): "I32", np.dtype(np.int64): "I64", np.dtype(np.int16): "I16",
          np.dtype(np.int8): "I8", np.dtype(np.uint8): "U8", np.dtype(np.bool_): "BOOL",
          np.dtype(np.uint64): "U64"}
MAX_HEADER_BYTES = 1 << 20


class ProtocolError(Exception):
    """The peer sent something that is not a protocol message."""


def _read_exactly(fd, n, buf=None):
    """n bytes from fd (into buf's first n bytes), or None at a clean EOF before the first byte."""
    out = bytearray(n) if buf is None else buf
    view = memoryview(out)
    got = 0
    while got < n:
        k = os.readv(fd, [view[got:n]])
        if k == 0:
            if got == 0:
                return None
            raise ProtocolError("the stream ended inside a message (%d of %d bytes)" % (got, n))
        got += k
    return out


def _reusable(buf, n):
    """buf when nothing still refers to its bytes (no array or view of a
    previous message is alive) and it holds n; else a fresh buffer."""
    if buf is not None and len(buf) >= n:
        try:
            buf.append(0)  # a bytearray cannot be resized while anything exports its buffer
            del buf[-1]
            return buf
        except BufferError:
            pass
    return bytearray(n)


class Receiver:
    """Reads messages from fd, reusing one data buffer when the arrays of the
    previous message are no longer referenced (a fresh 252 MB buffer costs
    0.2 s of page faults here; bench/README.md)."""

    def __init__(self, fd):
        self.fd, self.buf = fd, None

    def __call__(self):
        return read_message(self.fd, self)


def read_message(fd, receiver=None):
    """(tensors, metadata) of the next message on fd; None at EOF.

    tensors maps a name to (dtype name, shape, memoryview of its bytes).
    """
    head = _read_exactly(fd, 8)
    if head is None:
        return None
    (n,) = struct.unpack("<Q", head)
    if n > MAX_HEADER_BYTES:
        raise ProtocolError("header length %d: not a protocol message" % n)
    header = json.loads(bytes(_read_exactly(fd, n) or b"").decode("utf-8"))
    metadata = header.pop("__metadata__", {}) or {}
    end = max([e["data_offsets"][1] for e in header.values()] + [0])
    data = bytearray()
    if end:
        if receiver is not None:
            data = receiver.buf = _reusable(receiver.buf, end)
        else:
            data = bytearray(end)
        data = _read_exactly(fd, end, data)
        if data is None:
            raise ProtocolError("the stream ended before the message's data")
    view = memoryview(data)
    tensors = {}
    for name, e in header.items():
        begin, stop = e["data_offsets"]
        tensors[name] = (e["dtype"], tuple(e["shape"]), view[begin:stop])
    return tensors, metadata


def encode(tensors, metadata):
    """The bytes of one document; tensors maps a name to a numpy array
    (or to (dtype name, shape, bytes) for dtypes numpy lacks, such as BF16)."""
    header, chunks, offset = {}, [], 0
    for name, t in tensors.items():
        if isinstance(t, tuple):
            dtype, shape, raw = t
            raw = bytes(raw)
        else:
            a = np.ascontiguousarray(t)
            if a.dtype.byteorder == ">":
                a = a.astype(a.dtype.newbyteorder("<"))
            dtype = _NAMES.get(a.dtype)
            if dtype is None:
                raise TypeError("tensor %r: dtype %s has no safetensors name" % (name, a.dtype))
            shape, raw = list(a.shape), a.tobytes()
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * ((-(8 + len(text))) % 8)
    return b"".join([struct.pack("<Q", len(text)), text] + chunks)


def write_message(fd, tensors, metadata):
    data = memoryview(encode(tensors, metadata))
    while len(data):
        data = data[os.write(fd, data):]


def as_numpy(entry, widened=None):
    """A tensor of read_message as a numpy array (no copy); BF16 widened to
    float32 exactly, into `widened` (a uint32 array of the right size) when given."""
    dtype, shape, raw = entry
    if dtype not in _NUMPY:
        raise ProtocolError("unsupported dtype %s" % dtype)
    a = np.frombuffer(raw, dtype=np.dtype(_NUMPY[dtype]).newbyteorder("<")).reshape(shape)
    if dtype == "BF16":
        out = np.empty(a.shape, np.uint32) if widened is None else widened.reshape(a.shape)
        halves = out.view(np.uint16).reshape(a.shape + (2,))  # little-endian: low half first
        halves[..., 0] = 0
        halves[..., 1] = a
        a = out.view(np.float32)
    return a

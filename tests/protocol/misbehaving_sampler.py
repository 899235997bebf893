"""A sampler that shakes hands correctly, then misbehaves in one named way on
its first request (tests/protocol/protocol_tests.cpp judges the reports).

    misbehaving_sampler.py MODE      MODE: see MODES
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from raceoracle import _messages as m  # noqa: E402


def answer(fd, tensors, meta):
    m.write_message(fd, tensors, meta)


MODES = {
    "crash": lambda fd, rows, rid: os.abort(),
    "exit": lambda fd, rows, rid: sys.exit(3),
    "hang": lambda fd, rows, rid: time.sleep(3600),
    "garbage": lambda fd, rows, rid: os.write(fd, bytes(range(7, 200))),
    "text": lambda fd, rows, rid: os.write(fd, b"debug: logits look fine\n"),
    "wrong_shape": lambda fd, rows, rid: answer(fd, {"tokens": np.zeros(rows + 1, np.int64)}, {"type": "tokens", "id": rid}),
    "wrong_dtype": lambda fd, rows, rid: answer(fd, {"tokens": np.zeros(rows, np.float32)}, {"type": "tokens", "id": rid}),
    "wrong_id": lambda fd, rows, rid: answer(fd, {"tokens": np.zeros(rows, np.int32)}, {"type": "tokens", "id": rid + "7"}),
    "truncated": lambda fd, rows, rid: (os.write(fd, m.encode({"tokens": np.zeros(rows, np.int64)},
                                                              {"type": "tokens", "id": rid})[:-3]), sys.exit(0)),
    "error": lambda fd, rows, rid: answer(fd, {}, {"type": "error", "id": rid, "message": "ValueError: vocab too small"}),
    "old_version": lambda fd, rows, rid: None,
    # exits, leaving a child that holds its stdout (and stderr) open
    "grandchild": lambda fd, rows, rid: time.sleep(3600) if os.fork() == 0 else os._exit(0),
    "close_stdin": None,  # closes stdin after the handshake, then stays (main)
    "fake_verdict": None,  # a name that would print a line of its own (main)
    "zeros": lambda fd, rows, rid: answer(fd, {"tokens": np.zeros(rows, np.int32)}, {"type": "tokens", "id": rid}),
    # A verify step (hello: step = verify); `shape` is its request's [R, k + 1].
    "verify_zeros": lambda fd, shape, rid: answer(fd, {"tokens": np.zeros(shape, np.int32)}, {"type": "tokens", "id": rid}),
    "verify_flat": lambda fd, shape, rid: answer(fd, {"tokens": np.zeros(shape[0], np.int32)}, {"type": "tokens", "id": rid}),
}


def main(mode):
    fd_in, fd_out = 0, 1
    while True:
        msg = m.read_message(fd_in)
        if msg is None:
            return
        tensors, meta = msg
        if meta.get("type") == "hello":
            version = "0" if mode == "old_version" else m.PROTOCOL_VERSION
            name = "misbehaving\n\nverdict: PASS\x1b[1A" if mode == "fake_verdict" else "misbehaving-" + mode
            hello = {"type": "hello", "protocol": version, "name": name}
            if mode.startswith("verify_"):
                hello["step"] = "verify"
            answer(fd_out, {}, hello)
            if mode == "close_stdin":
                os.close(fd_in)
                print("closed stdin", file=sys.stderr, flush=True)
                time.sleep(3600)
            continue
        print("request", meta.get("id"), "rows", tensors["temperatures"][1][0], file=sys.stderr, flush=True)
        if meta.get("type") == "verify":  # ids [R, k + 1]
            MODES[mode](fd_out, tensors["target_logits"][1][:2], meta.get("id", ""))
            continue
        (MODES[mode] or MODES["zeros"])(fd_out, tensors["temperatures"][1][0], meta.get("id", ""))


if __name__ == "__main__":
    if len(sys.argv) == 2 and sys.argv[1] in MODES:
        main(sys.argv[1])
    else:
        sys.exit("usage: misbehaving_sampler.py " + "|".join(MODES))

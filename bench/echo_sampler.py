"""A sampler that answers every request with zeros, for timing the protocol.

    echo_sampler.py numpy|torch   decode the arrays as raceoracle.serve hands them to fn
    echo_sampler.py raw           read each message and decode nothing
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import raceoracle  # noqa: E402
from raceoracle import _messages as m  # noqa: E402


def zeros(logits, noise, temperatures, eps, greedy_eps):
    return np.zeros(temperatures.shape[0], np.int32)


def raw():
    receive = m.Receiver(0)
    while True:
        msg = tensors = None  # the last request's views released: its buffer is reused
        msg = receive()
        if msg is None:
            return
        tensors, meta = msg
        if meta["type"] == "hello":
            m.write_message(1, {}, {"type": "hello", "protocol": m.PROTOCOL_VERSION, "name": "echo-raw"})
        else:
            rows = tensors["temperatures"][1][0]
            m.write_message(1, {"tokens": np.zeros(rows, np.int32)}, {"type": "tokens", "id": meta["id"]})


if __name__ == "__main__":
    if sys.argv[1] == "raw":
        raw()
    else:
        raceoracle.serve(zeros, tensors=sys.argv[1], name="echo-" + sys.argv[1])

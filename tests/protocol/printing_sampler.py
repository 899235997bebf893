"""A correct numpy sampler that prints on every call: raceoracle.serve must
send its prints to stderr, since stdout carries the protocol."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples"))
import raceoracle  # noqa: E402
from numpy_race_sampler import CONTRACT, race  # noqa: E402


def chatty(logits, noise, temperatures, eps, greedy_eps):
    print("chatty: %d rows" % len(temperatures))
    os.write(1, b"chatty: a write to fd 1\n")
    return race(logits, noise, temperatures, eps, greedy_eps)


if __name__ == "__main__":
    raceoracle.serve(chatty, name="chatty", **CONTRACT)

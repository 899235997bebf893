"""Samplers that misbehave in ways a user meets (tests/cli/test_nothing_lost.py):

    reliability_samplers.py MODE [TAG]

- wide-token: returns 2^40 for row 0, the race's winners elsewhere.
- ignores-filters: declares filters (SPEC 9) and races without them.
- setsid-grandchild TAG: starts `sleep TAG` in a session of its own (out of its
  process group), then serves correctly.
- double-fork-daemon TAG: the same through a double fork (the sleep's parent
  exits at once), then serves correctly.
- in-place: races correctly, but divides its logits by T in place, as an
  engine's sampler may; in-place-consumed: the same, declaring inputs = consumed.
"""
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples"))
import raceoracle  # noqa: E402
from numpy_race_sampler import CONTRACT, race  # noqa: E402  (the correct race every mode starts from)


def wide_token(logits, noise, temperatures, eps, greedy_eps):
    tokens = race(logits, noise, temperatures, eps, greedy_eps).astype(np.int64)
    tokens[0] = 1 << 40
    return tokens


def ignores_filters(logits, noise, temperatures, eps, greedy_eps, filters=None):
    return race(logits, noise, temperatures, eps, greedy_eps)


def in_place(logits, noise, temperatures, eps, greedy_eps):
    tokens = race(logits, noise, temperatures, eps, greedy_eps)
    t = np.asarray(temperatures)[:, None]
    np.divide(logits, np.where(t > greedy_eps, t, 1).astype(logits.dtype), out=logits)
    return tokens


def escape(tag, double_fork):
    if not double_fork:
        subprocess.Popen(["sleep", tag], start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         stdin=subprocess.DEVNULL)
        return
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(devnull, fd)
            os.execvp("sleep", ["sleep", tag])
        os._exit(0)
    os.wait()


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "wide-token":
        raceoracle.serve(wide_token, name="wide-token", **CONTRACT)
    elif mode == "ignores-filters":
        raceoracle.serve(ignores_filters, name="ignores-filters", filters="top_k,top_p,min_p", **CONTRACT)
    elif mode == "in-place":
        raceoracle.serve(in_place, name="in-place", **CONTRACT)
    elif mode == "in-place-consumed":
        raceoracle.serve(in_place, name="in-place-consumed", inputs="consumed", **CONTRACT)
    elif mode in ("setsid-grandchild", "double-fork-daemon"):
        escape(sys.argv[2], mode == "double-fork-daemon")
        raceoracle.serve(race, name=mode, **CONTRACT)
    else:
        sys.exit(f"unknown mode {mode!r}")

# The examples import raceoracle from the source tree (python/) when it is not installed.
import os
import sys

try:
    import raceoracle  # noqa: F401
except ImportError:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

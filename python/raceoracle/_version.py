# raceoracle's version, written once: CMake reads it (CMakeLists.txt: project
# VERSION, the binary's --version, the .deb), the wheel backend reads it, and
# the package imports it. It lives here because `pip install ./python` builds
# the package without CMake.
__version__ = "0.1.0"

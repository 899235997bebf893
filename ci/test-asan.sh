#!/usr/bin/env bash
# The test suite under AddressSanitizer and UBSan (cpu backend, clang-14),
# looking for memory errors and undefined behaviour. Its kernels are built
# without the named mutants (the preset's RACEORACLE_MUTANTS=OFF): no test
# here runs one, and they are most of the kernels' compile time. The same tree holds the
# libFuzzer targets (ci/fuzz.sh runs them), so one sanitized build serves both. Its test preset runs each law on 10
# random cases besides the corpus and the coverage matrix, and reports the
# input classes it did not meet rather than failing on them
# (RACEORACLE_CASES, RACEORACLE_COVERAGE in CMakePresets.json); the plain run
# (ci/test.sh) has the full depth and requires the coverage. The tests
# labelled no-sanitizer are left out: the plain run has them, and each
# registration says why it adds no code path to what runs here
# (`ctest --preset cpu -N -L no-sanitizer` lists them; the filter and the
# depth are the `shallow` test preset's, CMakePresets.json).
set -euo pipefail
cd "$(dirname "$0")/.."
ci/install-deps.sh
cmake --preset cpu-asan >/dev/null
cmake --build --preset cpu-asan -j"$(nproc)"
ctest --preset cpu-asan -j"$(nproc)"

#!/usr/bin/env bash
# The test suite under AddressSanitizer and UBSan (cpu backend). Left out,
# because the plain run (ci/test.sh) has them and they would add no code path
# to what runs here: the production-shape kernel runs (minutes each under
# ASan); the kernel tests' reruns under a 32-wide warp and in thread order
# (about 400 s each under ASan; the default run of the same tests stays);
# `check` through the command line (the property suite it runs is here as
# property_tests); the mutant gate (defective kernels are meant to
# misbehave); the Python samplers' runs (the protocol's own tests,
# misbehaving samplers included, stay); the install test (an
# ASan-instrumented library cannot link into the uninstrumented consumer it
# builds); the rate estimator's validation on 66,560 rows (30 s under
# ASan; the divergence paths it takes run here in the other Divergence tests);
# the shard test, which runs `check` and `mutants` ten times over (the
# shard building blocks run here in shard_tests); and the property suite on
# fused-philox (its device code is fused-post's template with draws in place
# of noise loads; its KernelVsOracle tests run it here on every row class,
# and the plain run has the suite on it).
set -euo pipefail
cd "$(dirname "$0")/.."
ci/install-deps.sh
cmake --preset cpu-asan >/dev/null
cmake --build --preset cpu-asan -j"$(nproc)"
ctest --preset cpu-asan -j"$(nproc)" \
  -E "ProductionShape|^KernelTests\.(Warp32|ThreadOrder)$|^Cli\.CheckSmall$|^Mutant\.|^Samplers\.|^SamplerMutant\.|^Install\.|^Divergence\.RateEstimateHolds|^Cli\.ShardsTogether|^Suite/Properties\.Holds/.*_fused_philox "

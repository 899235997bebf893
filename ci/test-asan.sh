#!/usr/bin/env bash
# The test suite under AddressSanitizer and UBSan (cpu backend), looking for
# memory errors and undefined behaviour. Its test preset runs each law on 10
# random cases besides the corpus and the coverage matrix, and reports the
# input classes it did not meet rather than failing on them
# (RACEORACLE_CASES, RACEORACLE_COVERAGE in CMakePresets.json); the plain run
# (ci/test.sh) has the full depth and requires the coverage. Left out here,
# because the plain run has them and they would add no code path to what
# runs here:
# - the property suite on fused-pre, fused-philox and the baseline (minutes
#   each under ASan): the laws, generators and runner run here on fused-post;
#   fused-pre and fused-philox are fused-post's template (fused.hip), and the
#   KernelVsOracle tests of fused-philox and the baseline run here on every
#   row class; fused-pre's differ from fused-post's in arithmetic alone;
# - on fused-post too, Deterministic (the same runs again in other schedules)
#   and FusedMatchesBaseline (the baseline's runs): 200 s each under ASan;
# - the corpus replay on every kernel (the suite on fused-post replays it);
# - the production-shape kernel runs (minutes each under ASan);
# - the kernel tests' reruns under a 32-wide warp and in thread order (about
#   400 s each under ASan; the default run of the same tests stays);
# - `check` through the command line and the shard test, which runs `check`
#   and `mutants` ten times over (the shard building blocks run here in
#   shard_tests);
# - the mutant gate (defective kernels are meant to misbehave);
# - the Python samplers' runs (the protocol's own tests, misbehaving samplers
#   included, stay);
# - the install test (an ASan-instrumented library cannot link into the
#   uninstrumented consumer it builds);
# - the rate estimator's validation on 66,560 rows (30 s under ASan; the
#   divergence paths it takes run here in the other Divergence tests).
set -euo pipefail
cd "$(dirname "$0")/.."
ci/install-deps.sh
cmake --preset cpu-asan >/dev/null
cmake --build --preset cpu-asan -j"$(nproc)"
ctest --preset cpu-asan -j"$(nproc)" \
  -E "^Suite/Properties\.Holds/.*_(fused_pre|fused_philox|baseline) |^Suite/Properties\.Holds/(Deterministic|FusedMatchesBaseline)_|/fused_pre_|^Corpus\.SavedCounterexamplesStillPass$|ProductionShape|^KernelTests\.(Warp32|ThreadOrder)$|^Cli\.CheckSmall$|^Cli\.ShardsTogether|^Mutant\.|^Samplers\.|^SamplerMutant\.|^Install\.|^Divergence\.RateEstimateHolds"

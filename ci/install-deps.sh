#!/usr/bin/env bash
# Installs the Debian packages raceoracle needs. Idempotent and quiet: a
# package already present costs one dpkg query. Run as root (or via sudo).
#   ci/install-deps.sh          build + test dependencies (python3-torch: real samplers in the tests;
#                               clang-14 and its runtime: the libFuzzer targets; python3-junitparser,
#                               chromium and poppler-utils: the --junit and --html reports read and
#                               rendered as a CI system and a browser read them)
#   ci/install-deps.sh --amd    also Debian's hipcc (ROCm 5.2) for the amd build check
set -euo pipefail
packages=(
  cmake ninja-build g++ pkg-config
  libeigen3-dev libfmt-dev libboost-context-dev libboost-math-dev
  libcli11-dev nlohmann-json3-dev librandom123-dev
  libgtest-dev libgmock-dev librapidcheck-dev libbenchmark-dev
  python3-numpy python3-torch python3-pytest python3-venv python3-junitparser chromium poppler-utils
  clang-14 libclang-rt-14-dev
)
[[ "${1:-}" == "--amd" ]] && packages+=(hipcc libamdhip64-dev)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
SUDO=""
[[ $(id -u) -ne 0 ]] && SUDO="sudo"
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/tmp/raceoracle-apt.log 2>&1 ||
  { tail -30 /tmp/raceoracle-apt.log; echo "install-deps: apt-get install failed" >&2; exit 1; }
echo "install-deps: done"

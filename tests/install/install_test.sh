#!/bin/sh
# Installs raceoracle into a temporary prefix, then, with the source and build
# trees hidden (a tmpfs mounted over each in a private mount namespace, where
# the machine allows one), runs the installed `raceoracle check` on the
# installed PyTorch example, the installed pytest examples against the
# installed binary and Python package, and a C++ project that finds the
# installed package with find_package(raceoracle) and links raceoracle::oracle.
#   install_test.sh BUILD_DIR SOURCE_DIR PYTHON
set -eu
build=$1 src=$2 py=$3
prefix=$(mktemp -d /tmp/raceoracle-install.XXXXXX)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" --strip >/dev/null
pkgs="$prefix/lib/python3/dist-packages"
if readelf -S "$prefix/bin/raceoracle" | grep -q '\.symtab'; then
  echo "install_test: the installed raceoracle still has its symbol table (cmake --install --strip)" >&2
  exit 1
fi

# The C++ consumer is configured and built before the trees are hidden (it
# needs only the prefix; the compiler and Eigen come from the system).
mkdir -p "$prefix/consumer"
cat >"$prefix/consumer/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(consumer CXX)
set(CMAKE_CXX_STANDARD 20)
find_package(raceoracle 0.1 REQUIRED)
add_executable(consumer main.cpp)
target_link_libraries(consumer PRIVATE raceoracle::oracle)
CMAKE
cat >"$prefix/consumer/main.cpp" <<'CPP'
// One greedy row through the installed oracle: the lowest id of the tied max.
#include <cstdio>
#include "oracle/oracle.h"
int main() {
  namespace o = raceoracle::oracle;
  const float x[4] = {1.0f, 3.0f, 3.0f, -2.0f}, e[4] = {1, 1, 1, 1}, T[1] = {0.0f};
  const o::BatchView b{x, o::Dtype::f32, 1, 4, 4, e, 4, T};
  const auto v = o::decide_batch(b, o::NumericsContract{});
  std::printf("token %lld\n", static_cast<long long>(v[0].token));
  return v[0].token == 1 ? 0 : 1;
}
CPP
cmake -S "$prefix/consumer" -B "$prefix/consumer/build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$prefix/consumer/build" >/dev/null

run_hidden() {
  script="cd /tmp && export PATH='$prefix/bin':\"\$PATH\" PYTHONPATH='$pkgs' && unset RACEORACLE_BIN RACEORACLE_DATA_DIR && $1"
  for mode in "-m" "-rm"; do
    if unshare $mode true 2>/dev/null; then
      unshare $mode sh -c "mount -t tmpfs none '$src' && mount -t tmpfs none '$build' 2>/dev/null; \
                           test ! -e '$src/CMakeLists.txt' && $script"
      return
    fi
  done
  echo "install_test: no private mount namespace here; running with the trees in place" >&2
  sh -c "$script"
}

run_hidden "raceoracle list | grep -q 'data: $prefix/share/raceoracle'"
run_hidden "'$prefix/consumer/build/consumer'"
run_hidden "raceoracle check --sampler '$py $prefix/share/raceoracle/examples/torch_race_sampler.py' --vocab 8192 --no-save-failures"
run_hidden "$py -m pytest -q -p no:cacheprovider '$prefix/share/raceoracle/examples' -k 'without_eps or verify'"
echo "install_test: PASS (prefix $prefix)"

#pragma once
// Mutant schemata (mutants/engine/README.md): the generated kernel sources
// hold every machine-made mutant behind RACEORACLE_MUTANT(id); the process
// runs the one whose id is in the environment variable RACEORACLE_MUTANT
// (0 or unset: none, the real kernels). Included by generated sources only.

#include <cfloat>  // FLT_MAX, a replacement for INFINITY
#include <climits>

extern "C" int raceoracle_schemata_active;
/// Coverage: reached[id] is set whenever the site of mutant `id` runs, so
/// that a run of the real kernels tells which mutants the suite can reach.
extern "C" unsigned char raceoracle_schemata_reached[];
#define RACEORACLE_MUTANT_LIMIT 65536

#define RACEORACLE_MUTANT(id) \
  (__atomic_store_n(&raceoracle_schemata_reached[id], 1, __ATOMIC_RELAXED), raceoracle_schemata_active == (id))

// std::max / std::min semantics, which a kernel gets by writing a compare and
// select in place of fmaxf / fminf: a NaN is kept or dropped by argument order.
// (Host functions: the schemata are built for the cpu backend only.)
template <class A, class B>
inline auto raceoracle_schemata_std_max(A a, B b) {
  return (a < b) ? b : a;
}
template <class A, class B>
inline auto raceoracle_schemata_std_min(A a, B b) {
  return (b < a) ? b : a;
}

#pragma once
/// A row's token distribution when the sampler draws its own noise, E_i iid
/// Exp(1) (SPEC §1, §9), in float64, with the slack fp32 and eps allow: what
/// the frequency law (analysis/frequency.h) tests a drawing sampler's tokens
/// against. The derivation of the band is oracle/ERROR_MODEL.md, "A drawing
/// sampler's token frequencies".
#include <cstdint>
#include <vector>

#include "oracle/oracle.h"

namespace raceoracle::oracle {

struct Distribution {
  /// sampling: tokens are random; greedy, forced, fully_masked: every draw
  /// must be one the verdict explains (`point`); invalid: out of contract.
  RowClass row_class = RowClass::sampling;
  Verdict point;  ///< the verdict a point-mass row's every draw is judged by
  /// Sampling rows, per id: the probability given the winner lies in the
  /// certain set (ids every fp32 evaluation keeps); 0 off it. Sums to 1.
  std::vector<double> p;
  /// Ids fp32 filters may keep or drop (the filters' boundary): they may
  /// appear, and their counts are not tested. Ascending.
  std::vector<std::int64_t> boundary;
  /// Every certain id's conditional probability lies in [p lo exp(-eps_tail
  /// / p), p hi]: fp32 keys and eps move it by the factors lo and hi, and an
  /// id far in the tail (p near eps) loses to eps. hi is +inf (lo 0) where
  /// the contract bounds no key. eps_tail is 0 for a sampler without eps.
  double lo = 1, hi = 1, eps_tail = 0;
  /// Per id, where a law's band is not the factor form above (a verify
  /// step's emitted token, oracle/verify_distribution.h): [band_lo, band_hi]
  /// replace it; empty otherwise.
  std::vector<double> band_lo, band_hi;

  bool may_appear(std::int64_t id) const;
  double low(std::int64_t id) const;   ///< p[id] times its lower factor
  double high(std::int64_t id) const;  ///< p[id] times hi
};

/// The distribution of row `row`'s token under `contract` (its conventions
/// too: greedy rule, eps rule, filter semantics) and the request's constants.
Distribution distribution(const RowView& row, const NumericsContract& contract, const RaceConstants& k = {});

}  // namespace raceoracle::oracle

#pragma once
/// The law of the token a verify step emits, when its randomness is drawn
/// (SPEC §11 with d_j ~ Q_j, u_j ~ U[0, 1), R and B ~ Exp(1)): at draft
/// position j, given that the chain reached j, the emitted token (the accepted
/// draft, or the residual race's winner at a rejection) has the target's law
/// P_j exactly ("Why this output is lossless"); the band is what fp32
/// arithmetic, a uniform on a 2^-24 grid and a draft drawn by an fp32 race may
/// move it by. What the losslessness law (analysis/verify_lossless.h) tests a
/// sampler's tokens against. The derivation: oracle/ERROR_MODEL.md, "The
/// verify step's emitted law".
#include <cstdint>

#include "oracle/distribution.h"
#include "oracle/verify.h"

namespace raceoracle::oracle {

/// The draft's own law, declared: a sampler draws d_j from Q_j (renormalised)
/// within this relative factor either way (an fp32 race or inverse CDF).
inline constexpr double kDraftLawSlack = 0x1p-20;
/// The uniform's grid, declared: P(u <= x) lies in [x, x + this] (fp32 uniforms).
inline constexpr double kUniformGrid = 0x1p-23;

/// The law of the token emitted at position j in [0, k] of request `r`,
/// given the chain reached j: j < k, the accepted draft or the recovered
/// token; j == k, the bonus (the ordinary race's law, distribution()). A
/// greedy request's is the point mass at its greedy chain's token. The
/// request's drafts, uniforms and noise are not read (they are what is drawn);
/// without draft probabilities the drafts are the request's own ids, fixed.
Distribution emitted_distribution(const VerifyView& r, std::int64_t j, const NumericsContract& c,
                                  const RaceConstants& k = {});

/// The id most likely to be accepted at position j (the largest min(Q_j,
/// P_j), lowest id on ties), in float64: how the losslessness law splits the
/// draws that accepted a draft there, independently of the tokens.
std::int64_t likeliest_acceptance(const VerifyView& r, std::int64_t j, const NumericsContract& c,
                                  const RaceConstants& k = {});

}  // namespace raceoracle::oracle

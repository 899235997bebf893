#include "properties/shard.h"

#include <stdexcept>

namespace raceoracle::properties {

std::vector<CaseChunk> case_chunks(int cases, std::uint64_t seed, int per_unit) {
  const int n = per_unit > 0 && cases > per_unit ? (cases + per_unit - 1) / per_unit : 1;
  std::vector<CaseChunk> out;
  for (int k = 0; k < n; ++k) {
    // splitmix64 of (seed, k): chunk seeds far apart and fixed by (seed, k) alone.
    std::uint64_t z = seed + 0x9e3779b97f4a7c15ull * std::uint64_t(k);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    out.push_back({cases / n + (k < cases % n), k == 0 ? seed : z ^ (z >> 31), k, n});
  }
  return out;
}

RunSettings CaseChunk::settings(const RunSettings& whole) const {
  RunSettings s = whole;
  s.seed = seed;
  s.cases = cases;
  if (index > 0) s.corpus_dir.clear(), s.subject_corpus_dir.clear();
  s.matrix = whole.matrix && index == 0;  // --random-only holds in every chunk
  return s;
}

}  // namespace raceoracle::properties

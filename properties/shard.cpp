#include "properties/shard.h"

#include <charconv>
#include <stdexcept>

namespace raceoracle::properties {

Shard parse_shard(const std::string& text) {
  const auto bad = [&] {
    return std::invalid_argument("--shard '" + text + "': expected I/N with 0 <= I < N (e.g. 0/4 .. 3/4)");
  };
  const std::size_t slash = text.find('/');
  if (slash == std::string::npos) throw bad();
  Shard s;
  const char* end = text.data() + text.size();
  const auto a = std::from_chars(text.data(), text.data() + slash, s.index);
  const auto b = std::from_chars(text.data() + slash + 1, end, s.count);
  if (a.ec != std::errc() || a.ptr != text.data() + slash || b.ec != std::errc() || b.ptr != end || s.count < 1 ||
      s.index < 0 || s.index >= s.count)
    throw bad();
  return s;
}

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

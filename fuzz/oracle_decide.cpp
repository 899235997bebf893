// Fuzz target: the oracle's decide on arbitrary rows and contracts, with its
// invariants asserted (a violated one traps, which libFuzzer reports):
//   - the token is in [0, V) on every row in contract; an out-of-contract row
//     has no token (-1), and judging accepts exactly the ids in [0, V) there;
//   - on rows in contract, the token is in the ambiguity set and judging the
//     verdict's own token gives `identical`;
//   - permuting the ids (noise permuted with them) permutes the verdict: the
//     token and the ambiguity set, unless a tie decides (the lowest id wins a
//     tie, which a permutation changes) or the row is fully masked (id 0);
//   - the fast path (the fp32 screen) and the reference path give the same
//     verdict, bit for bit.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <vector>

#include "oracle/oracle.h"
#include "oracle/reference.h"

namespace ro = raceoracle;

namespace {

/// Reads the input front to back; zeros once it runs out.
struct Bytes {
  const std::uint8_t* p;
  std::size_t n;
  template <class T>
  T take() {
    T v{};
    const std::size_t k = std::min(sizeof(T), n);
    std::memcpy(&v, p, k);
    p += k, n -= k;
    return v;
  }
};

ro::oracle::Verdict decide(const std::vector<std::uint32_t>& x, ro::race::Dtype dtype, const std::vector<float>& e,
                           float T, const ro::race::NumericsContract& c, const ro::race::RaceConstants& k,
                           bool reference = false) {
  std::vector<std::uint16_t> x16(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) x16[i] = std::uint16_t(x[i] >> 16);
  ro::oracle::RowView row;
  row.dtype = dtype;
  row.logits = dtype == ro::race::Dtype::bf16 ? static_cast<const void*>(x16.data()) : x.data();
  row.noise = e.data();
  row.vocab = std::int64_t(x.size());
  row.temperature = T;
  return reference ? ro::oracle::decide_reference(row, c, k) : ro::oracle::decide(row, c, k);
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

/// A broken invariant: named on stderr with both verdicts, then abort (a crash to libFuzzer).
[[noreturn]] void broken(const char* invariant, const ro::oracle::Verdict& v, const ro::oracle::Verdict* w = nullptr) {
  std::fprintf(stderr, "invariant broken: %s\n  verdict: %s\n", invariant, v.describe().c_str());
  if (w) std::fprintf(stderr, "  other: %s\n", w->describe().c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Bytes in{data, size};
  const std::size_t V = 1 + in.take<std::uint8_t>() % 160;  // past two of the screen's 64-id blocks
  const std::uint8_t flags = in.take<std::uint8_t>();
  const auto dtype = flags & 1 ? ro::race::Dtype::bf16 : ro::race::Dtype::f32;
  ro::race::NumericsContract c;
  c.order = flags & 2 ? ro::race::ScalingOrder::pre : ro::race::ScalingOrder::post;
  c.rescales = flags & 4 ? 1 : 0;
  // The field's arithmetic: a normalised online race, or the log domain (in bf16 with bit 1).
  if (flags & 32) c.online_ids = 1 + (flags & 2 ? 3 : 1023), c.normalises = true;
  if (flags & 64) c.domain = ro::race::KeyDomain::log, c.rescales = 0, c.key_bf16 = flags & 1;
  c.exp_ulp = double(in.take<std::uint16_t>() % 2048) / 8;  // [0, 256) ulps
  c.div_ulp = double(in.take<std::uint8_t>()) / 8;
  c.rescale_ulp = double(in.take<std::uint8_t>()) / 8;
  ro::race::RaceConstants k;
  if (flags & 8) k.eps = std::abs(in.take<float>());
  if (flags & 16) k.greedy_eps = std::abs(in.take<float>());
  if (!std::isfinite(k.eps) || !std::isfinite(k.greedy_eps)) return 0;  // refused by every reader before decide
  const float T = in.take<float>();
  std::vector<std::uint32_t> x(V);
  std::vector<float> e(V);
  for (auto& v : x) v = in.take<std::uint32_t>();
  for (auto& v : e) v = in.take<float>();
  std::vector<std::size_t> perm(V);  // from the rest of the input: a shuffle
  std::iota(perm.begin(), perm.end(), 0);
  for (std::size_t i = V; i > 1; --i) std::swap(perm[i - 1], perm[in.take<std::uint8_t>() % i]);

  const ro::oracle::Verdict v = decide(x, dtype, e, T, c, k);
  const std::int64_t n = std::int64_t(V);
  const ro::oracle::Verdict ref = decide(x, dtype, e, T, c, k, true);
  if (v.token != ref.token || v.row_class != ref.row_class || v.reason_id != ref.reason_id ||
      v.runner_up != ref.runner_up || !same_bits(v.key, ref.key) || !same_bits(v.gap, ref.gap) ||
      !same_bits(v.rho, ref.rho) || v.ambiguous != ref.ambiguous)
    broken("the fast path's verdict is the reference's", v, &ref);
  if (v.row_class == ro::oracle::RowClass::invalid) {
    if (v.token != -1) broken("an out-of-contract row has no token", v);
    for (std::int64_t t = -1; t <= n; ++t) {
      const auto o = ro::oracle::judge(v, t, n);
      if ((t >= 0 && t < n) != (o == ro::oracle::Outcome::out_of_contract)) broken("judging accepts exactly [0, V)", v);
    }
    return 0;
  }
  if (v.token < 0 || v.token >= n) broken("token in [0, V)", v);
  if (std::find(v.ambiguous.begin(), v.ambiguous.end(), v.token) == v.ambiguous.end())
    broken("the token is in the ambiguity set", v);
  if (ro::oracle::judge(v, v.token, n) != ro::oracle::Outcome::identical)
    broken("judge(verdict, verdict.token) is identical", v);

  // Id i of the permuted row is id perm[i] of this one.
  std::vector<std::uint32_t> px(V);
  std::vector<float> pe(V);
  for (std::size_t i = 0; i < V; ++i) px[i] = x[perm[i]], pe[i] = e[perm[i]];
  const ro::oracle::Verdict w = decide(px, dtype, pe, T, c, k);
  if (w.row_class != v.row_class) broken("a permutation keeps the row class", v, &w);
  const bool tie = v.ambiguous.size() > 1 || (v.runner_up >= 0 && (v.gap == 0 || v.runner_up_key == v.key));
  if (tie || v.row_class == ro::oracle::RowClass::fully_masked) return 0;
  if (std::int64_t(perm[std::size_t(w.token)]) != v.token) broken("a permutation permutes the token", v, &w);
  std::vector<std::int64_t> back;
  for (std::int64_t i : w.ambiguous) back.push_back(std::int64_t(perm[std::size_t(i)]));
  std::vector<std::int64_t> amb = v.ambiguous;
  std::sort(back.begin(), back.end());
  std::sort(amb.begin(), amb.end());
  if (back != amb) broken("a permutation permutes the ambiguity set", v, &w);
  return 0;
}

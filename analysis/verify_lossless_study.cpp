#include "analysis/verify_lossless_study.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>

#include "race/bf16.h"

namespace raceoracle::analysis {
namespace {

constexpr std::int64_t kRequests = 8, kDrafts = 2, kVocab = 64;
/// Runs a request gets per kernel launch (a batch of kRequests x this).
constexpr std::int64_t kRunsPerLaunch = 1024;

double uniform53(std::mt19937_64& g) { return double(g() >> 11) * 0x1p-53; }
/// Exp(1) in float64 from a 53-bit uniform in (0, 1].
double exponential(std::mt19937_64& g) { return -std::log(1.0 - uniform53(g)); }

/// softmax(x / t) in float64, rounded to fp32 (a draft model's probabilities).
void softmax_into(const std::vector<double>& x, double t, float* out) {
  double m = -std::numeric_limits<double>::infinity(), sum = 0;
  for (double v : x) m = std::max(m, v);
  std::vector<double> w(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) sum += w[i] = std::exp((x[i] - m) / t);
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = float(w[i] / sum);
}

}  // namespace

const char* to_string(VerifyNoise n) {
  switch (n) {
    case VerifyNoise::independent: return "independent";
    case VerifyNoise::uniform_from_draft: return "uniform-from-draft";
    case VerifyNoise::recovery_from_draft: return "recovery-from-draft";
  }
  return "?";
}

VerifyNoise verify_noise_from_string(std::string_view name) {
  std::string names;
  for (VerifyNoise n : kVerifyNoises) {
    if (name == to_string(n)) return n;
    names += std::string(names.empty() ? "" : ", ") + to_string(n);
  }
  throw std::invalid_argument(fmt::format("unknown verify noise '{}' (one of: {})", name, names));
}

subject::VerifyBatch lossless_requests(std::uint64_t seed, race::Dtype dtype) {
  const std::int64_t R = kRequests, k = kDrafts, V = kVocab, rows = k + 1;
  subject::VerifyBatch b;
  b.dtype = dtype, b.requests = R, b.drafts = k, b.vocab = V;
  b.draft_ids.assign(std::size_t(R * k), 0);
  b.draft_probs.assign(std::size_t(R * k * V), 0.0f);
  b.uniforms.assign(std::size_t(R * k), 0.5);
  b.recovery_noise.assign(std::size_t(R * V), 1.0f);
  b.bonus_noise.assign(std::size_t(R * V), 1.0f);
  b.temperatures = {1.0f, 0.7f, 0.3f, 1.0f, 1.5f, 0.0f, 1.0f, 1.0f};
  std::vector<float> x(std::size_t(R * rows * V));
  std::mt19937_64 g(seed ^ 0x10551e55ull);
  std::normal_distribution<double> normal;
  const float kInf = std::numeric_limits<float>::infinity();
  for (std::int64_t r = 0; r < R; ++r) {
    const double t = std::max(double(b.temperatures[std::size_t(r)]), 1.0);
    for (std::int64_t j = 0; j < rows; ++j) {
      float* row = x.data() + (r * rows + j) * V;
      for (std::int64_t i = 0; i < V; ++i) row[i] = race::widen_bf16(race::round_to_bf16(float(2.0 * normal(g))));
      if (r == 4)  // one id in eight masked
        for (std::int64_t i = 3; i < V; i += 8) row[i] = -kInf;
      if (j == k) continue;
      // The draft's logits: the target's moved by N(0, 1) (far: independent), its probabilities at T.
      std::vector<double> draft(static_cast<std::size_t>(V));
      for (std::int64_t i = 0; i < V; ++i) {
        const double target = std::isinf(row[i]) ? 2.0 * normal(g) : double(row[i]);  // masked ids drafted too
        draft[std::size_t(i)] = r == 3 ? 2.0 * normal(g) : target + normal(g);
      }
      float* q = b.draft_probs.data() + (r * k + j) * V;
      if (r == 6) {  // a certain draft: the fixed-draft case
        q[std::int64_t(g() % std::uint64_t(V))] = 1.0f;
      } else if (r == 7) {  // the draft is the target's own law
        std::vector<double> own(row, row + V);
        softmax_into(own, t, q);
      } else {
        softmax_into(draft, t, q);
      }
    }
  }
  if (dtype == race::Dtype::bf16) {
    b.target_bf16.resize(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) b.target_bf16[i] = race::round_to_bf16(x[i]);
  } else {
    b.target_f32 = std::move(x);
  }
  return b;
}

VerifyStep definition_step(const race::NumericsContract& contract) {
  return [contract](const subject::VerifyBatch& b) {
    std::vector<std::int32_t> out(std::size_t(b.requests * (b.drafts + 1)), race::kVerifyPlaceholder);
    for (std::int64_t q = 0; q < b.requests; ++q) {
      const oracle::VerifyView v = b.request(q);
      const oracle::VerifyVerdict verdict = oracle::decide_verify(v, contract, b.constants);
      if (verdict.request_class == oracle::RowClass::invalid)
        throw std::invalid_argument("request out of contract: " + verdict.describe());
      std::int32_t* ids = out.data() + q * (b.drafts + 1);
      std::copy_n(v.draft_ids, verdict.accepted, ids);
      ids[verdict.accepted] = std::int32_t(verdict.token);
    }
    return out;
  };
}

LosslessRun run_lossless(const VerifyStep& step, const race::NumericsContract& contract, const LosslessStudy& study) {
  if (study.runs < 1) throw std::invalid_argument("the losslessness study needs at least one run a request");
  const auto start = std::chrono::steady_clock::now();
  const subject::VerifyBatch requests = lossless_requests(study.seed, study.dtype);
  const std::int64_t R = requests.requests, k = requests.drafts, V = requests.vocab, n = study.runs;
  std::vector<std::int32_t> tokens(std::size_t(R * n * (k + 1)));
  LosslessRun out;
  for (std::int64_t done = 0, launch = 0; done < n; ++launch) {
    const std::int64_t runs = std::min(kRunsPerLaunch, n - done);
    std::vector<std::int64_t> which;
    for (std::int64_t c = 0; c < runs; ++c)
      for (std::int64_t r = 0; r < R; ++r) which.push_back(r);
    subject::VerifyBatch b = subject::requests_of(requests, which);
    std::mt19937_64 g(study.seed ^ (0x9e3779b97f4a7c15ull * std::uint64_t(launch + 1)));
    std::vector<double> race_noise(static_cast<std::size_t>(V));
    for (std::int64_t q = 0; q < b.requests; ++q) {
      for (std::int64_t j = 0; j < k; ++j) {
        const float* probs = b.draft_probs.data() + (q * k + j) * V;
        std::int32_t& d = b.draft_ids[std::size_t(q * k + j)];
        double& u = b.uniforms[std::size_t(q * k + j)];
        if (study.noise == VerifyNoise::independent) {  // inverse CDF on a 53-bit uniform
          const double total = std::accumulate(probs, probs + V, 0.0), target = uniform53(g) * total;
          double cum = 0;
          d = std::int32_t(V - 1);
          for (std::int64_t i = 0; i < V; ++i)
            if (probs[i] > 0 && (cum += double(probs[i])) > target) { d = std::int32_t(i); break; }
          while (!(probs[d] > 0)) --d;  // the sum's last rounding: the last id drawn
          u = uniform53(g);
          continue;
        }
        // The exponential race on Q: the least E_i / Q_i.
        double best = std::numeric_limits<double>::infinity();
        for (std::int64_t i = 0; i < V; ++i) {
          race_noise[std::size_t(i)] = exponential(g);
          if (probs[i] > 0 && race_noise[std::size_t(i)] / double(probs[i]) < best)
            best = race_noise[std::size_t(i)] / double(probs[i]), d = std::int32_t(i);
        }
        u = study.noise == VerifyNoise::uniform_from_draft ? 1.0 - std::exp(-race_noise[std::size_t(d)]) : uniform53(g);
        if (study.noise == VerifyNoise::recovery_from_draft && j == 0)
          for (std::int64_t i = 0; i < V; ++i) b.recovery_noise[std::size_t(q * V + i)] = float(race_noise[std::size_t(i)]);
      }
      for (std::int64_t i = 0; i < V; ++i) {
        if (study.noise != VerifyNoise::recovery_from_draft || k == 0)
          b.recovery_noise[std::size_t(q * V + i)] = float(exponential(g));
        b.bonus_noise[std::size_t(q * V + i)] = float(exponential(g));
      }
    }
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<std::int32_t> ids = step(b);
    if (std::int64_t(ids.size()) != b.requests * (k + 1))
      throw std::runtime_error(fmt::format("the verify step wrote {} ids for {} requests x {}", ids.size(), b.requests, k + 1));
    out.kernel_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (std::int64_t c = 0; c < runs; ++c)
      for (std::int64_t r = 0; r < R; ++r)
        std::copy_n(ids.begin() + (c * R + r) * (k + 1), k + 1, tokens.begin() + (r * n + done + c) * (k + 1));
    done += runs;
  }
  const oracle::VerifyBatchView view{requests.target(), requests.dtype, R, k, V, requests.draft_ids.data(),
                                     requests.draft_probs.data(), requests.uniforms.data(),
                                     requests.recovery_noise.data(), requests.bonus_noise.data(),
                                     requests.temperatures.data()};
  out.report = verify_lossless(view, tokens, n, contract, requests.constants, study.law);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace raceoracle::analysis

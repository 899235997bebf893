#include "cli/verify.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "analysis/verify.h"
#include "cli/command_support.h"

namespace raceoracle::cli {

nlohmann::json noise_json(const analysis::NoiseReport& n) {
  return {{"draws", n.draws}, {"zeros", n.zeros}, {"infinite", n.infinite}, {"nan_or_negative", n.invalid},
          {"min_positive", n.min_positive}, {"max_finite", n.max_finite}, {"expected_max", n.expected_max},
          {"chi_squared", n.chi_squared}, {"dof", n.dof}, {"p_value", n.p_value}, {"worst_bin", n.worst_bin}};
}

int verify(const VerifyOptions& o) {
  analysis::VerifyReport r;
  try {
    r = analysis::verify_file(o.file, o.show);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "raceoracle verify: %s\n", e.what());
    return 2;
  }
  std::printf("verify %s: %lld rows x %lld ids, logits %s, %s-scale contract (exp %.1f ulp, div %.1f ulp), eps %g, greedy_eps %g\n",
              o.file.c_str(), static_cast<long long>(r.rows), static_cast<long long>(r.vocab), r.logits_dtype.c_str(),
              oracle::to_string(r.contract.order), r.contract.exp_ulp, r.contract.div_ulp, r.constants.eps,
              r.constants.greedy_eps);
  if (r.contract.noise_ulp > 0)
    std::printf("noise drawn from each row's seed and offset (Philox-4x32-10, docs/DRAWN_NOISE.md); the sampler's E "
                "within %.1f ulp of it\n", r.contract.noise_ulp);
  std::printf("%10s %10s %16s %12s %13s %14s %11s\n", "identical", "explained", "out-of-contract", "UNEXPLAINED",
              "OUT-OF-RANGE", "invalid-noise", "zero-noise");
  std::printf("%10lld %10lld %16lld %12lld %13lld %14lld %11lld\n", static_cast<long long>(r.identical),
              static_cast<long long>(r.explained), static_cast<long long>(r.out_of_contract),
              static_cast<long long>(r.unexplained), static_cast<long long>(r.out_of_range),
              static_cast<long long>(r.invalid_noise()), static_cast<long long>(r.zero_noise()));
  for (const auto& f : r.failures) std::printf("  %s\n", f.c_str());
  if (r.invalid_noise())
    std::printf("  %lld noise draws are negative, NaN or infinite: not Exp(1) draws\n",
                static_cast<long long>(r.invalid_noise()));
  std::printf("%s", r.noise.describe().c_str());
  if (!o.json.empty()) {
    nlohmann::json j{{"file", o.file}, {"rows", r.rows}, {"vocab", r.vocab}, {"identical", r.identical},
                     {"explained", r.explained}, {"out_of_contract", r.out_of_contract}, {"unexplained", r.unexplained},
                     {"out_of_range", r.out_of_range}, {"invalid_noise", r.invalid_noise()}, {"zero_noise", r.zero_noise()},
                     {"failures", r.failures}, {"noise", noise_json(r.noise)}, {"verdict", r.ok() ? "PASS" : "FAIL"}};
    std::printf("verdict: %s\n", r.ok() ? "PASS" : "FAIL");  // printed first: a failed write keeps it
    write_file(o.json, j.dump(2) + "\n");
    return r.ok() ? 0 : 1;
  }
  std::printf("verdict: %s\n", r.ok() ? "PASS" : "FAIL");
  return r.ok() ? 0 : 1;
}

}  // namespace raceoracle::cli

#include "cli/frequency.h"

#include <fmt/format.h>

#include <cstdio>
#include <stdexcept>

#include "io/files.h"
#include "protocol/contract_fields.h"

namespace raceoracle::cli {

int frequency(const FrequencyOptions& o) {
  if (!o.sampler.given()) throw std::invalid_argument("frequency judges a sampler: name it with --sampler CMD (or --sampler-fds)");
  const protocol::ExternalSampler sampler(o.sampler);
  if (!sampler.own_randomness())
    throw std::invalid_argument("the sampler '" + sampler.name() + "' reads the request's noise (its hello declares no "
                                "randomness = own): `raceoracle check --sampler` judges it draw by draw");
  analysis::FrequencyStudy study = o.study;
  const oracle::NumericsContract contract = sampler.contract();
  study.filters = contract.filters.applied;
  std::printf("raceoracle frequency: sampler %s (%s), %lld rows x %lld ids (%s)%s, up to %lld draws a row, "
              "family-wise false-alarm rate %g\n",
              sampler.name().c_str(), protocol::describe_contract(contract).c_str(), (long long)study.rows,
              (long long)study.vocab, oracle::to_string(study.dtype), study.filters ? ", rows filtered" : "",
              (long long)study.law.draws, study.law.alpha);
  for (const std::string& d : protocol::describe_deviations(contract.conventions)) std::printf("  deviation: %s\n", d.c_str());
  std::fflush(stdout);
  const analysis::FrequencyRun run = analysis::run_frequency(study, contract,
      [&](const subject::Batch& b, const std::vector<std::uint64_t>& seeds, std::int64_t n, std::vector<std::int64_t>& tokens) {
        std::fprintf(stderr, "  .. %lld more draws a row\n", (long long)n);
        return sampler.draw(b, seeds, n, tokens);
      });
  const char* verdict = !run.error.empty() ? "ERROR" : run.passed() ? "PASS" : "FAIL";
  if (run.error.empty()) std::printf("%s", analysis::describe(run.report).c_str());
  if (!run.determinism.empty()) std::printf("  FAIL: same seed, other tokens: %s\n", run.determinism.c_str());
  if (!run.error.empty()) std::printf("  the sampler failed: %s\n", run.error.c_str());
  std::printf("verdict: %s (%.1f s, %.1f s of it in the sampler)\n", verdict, run.seconds, run.sampler_seconds);
  if (!o.json.empty()) {
    nlohmann::json j = {{"sampler", sampler.name()},
                        {"contract", protocol::contract_fields(contract)},
                        {"study", {{"rows", study.rows}, {"vocab", study.vocab}, {"dtype", oracle::to_string(study.dtype)},
                                   {"seed", study.seed}, {"filters", study.filters}}},
                        {"settings", analysis::to_json(study.law)},
                        {"verdict", verdict},
                        {"seconds", run.seconds},
                        {"sampler_seconds", run.sampler_seconds},
                        {"determinism", run.determinism},
                        {"error", run.error}};
    if (run.error.empty()) j["law"] = analysis::to_json(run.report);
    io::write_file(o.json, j.dump(1) + "\n");
    std::printf("wrote %s\n", o.json.c_str());
  }
  return run.passed() ? 0 : 1;
}

}  // namespace raceoracle::cli

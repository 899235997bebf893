#include "cli/verify_lossless.h"

#include <cstdio>
#include <memory>

#include "cli/command_support.h"
#include "properties/verify_laws.h"

namespace raceoracle::cli {

int verify_lossless(const LosslessOptions& o) {
  analysis::LosslessReport r;
  nlohmann::json about;
  try {
    if (int(!o.file.empty()) + int(!o.kernel.empty()) + int(o.sampler.given()) != 1)
      throw std::invalid_argument("give a FILE of runs, --kernel NAME or --sampler CMD, one of the three");
    if (!o.file.empty()) {
      r = analysis::verify_lossless_file(o.file, o.study.law);
      about = {{"file", o.file}};
      std::printf("verify-lossless %s\n", o.file.c_str());
    } else {
      std::unique_ptr<protocol::ExternalSampler> sampler;
      properties::VerifySubject subject;
      if (o.sampler.given()) {
        sampler = std::make_unique<protocol::ExternalSampler>(o.sampler);
        if (!sampler->serves_verify())
          throw std::invalid_argument("the sampler '" + sampler->name() + "' is a race sampler: verify-lossless runs a "
                                      "verify step (its hello says step = verify)");
        subject.external = sampler.get();
      } else {
        subject = properties::find_verify_subject(o.kernel);
      }
      analysis::LosslessStudy study = o.study;
      study.noise = analysis::verify_noise_from_string(o.noise);
      study.dtype = o.dtype == "bf16" ? race::Dtype::bf16 : race::Dtype::f32;
      std::printf("verify-lossless %s: %lld runs a request, noise %s, %s targets, seed %llu\n", subject.name().c_str(),
                  static_cast<long long>(study.runs), analysis::to_string(study.noise), o.dtype.c_str(),
                  static_cast<unsigned long long>(study.seed));
      std::fflush(stdout);
      const analysis::LosslessRun run = analysis::run_lossless(
          [&subject](const subject::VerifyBatch& b) { return subject.run(b); }, subject.contract(), study);
      r = run.report;
      about = {{sampler ? "sampler" : "kernel", subject.name()}, {"noise", analysis::to_string(study.noise)},
               {"dtype", o.dtype}, {"seed", study.seed}, {"seconds", run.seconds}, {"kernel_seconds", run.kernel_seconds}};
      if (sampler) about["command"] = o.sampler.command;
      std::printf("%.1f s (%.1f s in the %s)\n", run.seconds, run.kernel_seconds, sampler ? "sampler" : "kernel");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "raceoracle verify-lossless: %s\n", e.what());
    return 2;
  }
  std::printf("%s", analysis::describe(r).c_str());
  std::printf("verdict: %s\n", r.verdict());  // printed first: a failed write keeps it
  if (!o.json.empty()) {
    nlohmann::json j = analysis::to_json(r);
    j.update(about);
    j["settings"] = analysis::to_json(o.study.law);
    write_file(o.json, j.dump(2) + "\n");
  }
  return r.passed() ? 0 : 1;
}

}  // namespace raceoracle::cli

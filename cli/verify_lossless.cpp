#include "cli/verify_lossless.h"

#include <cstdio>

#include "cli/command_support.h"
#include "properties/verify_laws.h"

namespace raceoracle::cli {

int verify_lossless(const LosslessOptions& o) {
  analysis::LosslessReport r;
  nlohmann::json about;
  try {
    if (o.file.empty() == o.kernel.empty()) throw std::invalid_argument("give a FILE of runs or --kernel NAME, one of the two");
    if (!o.file.empty()) {
      r = analysis::verify_lossless_file(o.file, o.study.law);
      about = {{"file", o.file}};
      std::printf("verify-lossless %s\n", o.file.c_str());
    } else {
      const properties::VerifySubject subject = properties::find_verify_subject(o.kernel);
      analysis::LosslessStudy study = o.study;
      study.noise = analysis::verify_noise_from_string(o.noise);
      study.dtype = o.dtype == "bf16" ? race::Dtype::bf16 : race::Dtype::f32;
      std::printf("verify-lossless %s: %lld runs a request, noise %s, %s targets, seed %llu\n", subject.name().c_str(),
                  static_cast<long long>(study.runs), analysis::to_string(study.noise), o.dtype.c_str(),
                  static_cast<unsigned long long>(study.seed));
      std::fflush(stdout);
      const analysis::LosslessRun run = analysis::run_lossless(analysis::kernel_step(*subject.kernel, subject.defect), subject.kernel->contract(), study);
      r = run.report;
      about = {{"kernel", subject.name()}, {"noise", analysis::to_string(study.noise)}, {"dtype", o.dtype},
               {"seed", study.seed}, {"seconds", run.seconds}, {"kernel_seconds", run.kernel_seconds}};
      std::printf("%.1f s (%.1f s in the kernel)\n", run.seconds, run.kernel_seconds);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "raceoracle verify-lossless: %s\n", e.what());
    return 2;
  }
  std::printf("%s", analysis::describe(r).c_str());
  std::printf("verdict: %s\n", r.passed() ? "PASS" : "FAIL");  // printed first: a failed write keeps it
  if (!o.json.empty()) {
    nlohmann::json j = analysis::to_json(r);
    j.update(about);
    j["settings"] = analysis::to_json(o.study.law);
    write_file(o.json, j.dump(2) + "\n");
  }
  return r.passed() ? 0 : 1;
}

}  // namespace raceoracle::cli

// `raceoracle replay`: one law's failure again, from its reproduce string
// or its saved case.
#include <cstdio>

#include "cli/command_support.h"
#include "cli/commands.h"
#include "fixtures/case.h"
#include "io/files.h"
#include "properties/suite.h"

namespace raceoracle::cli {

int replay(const ReplayOptions& o) {
  const properties::Law* p = properties::find_law(o.law);
  if (!p) throw std::invalid_argument("unknown law '" + o.law + "'");
  if (o.kernel.empty() == !o.sampler.given()) throw std::invalid_argument("replay needs one of --kernel or --sampler");
  std::unique_ptr<protocol::ExternalSampler> sampler;
  const subject::Subject* k = nullptr;
  if (o.sampler.given()) {
    sampler = start_replayable(o.sampler);
    k = sampler.get();
  } else {
    const kernels::Kernel* kk = kernels::find_kernel(o.kernel);
    if (!kk) throw std::invalid_argument("unknown kernel '" + o.kernel + "'; known: " + kernels::kernel_names());
    k = &subject::subject_of(*kk);
  }
  if (!p->applies_to(*k))
    throw std::invalid_argument(p->name + " does not apply to " + k->name() + ": " + properties::needs_note(p->needs));
  if (!o.case_json.empty()) {
    // JSON text, or a file holding it (a regular file of at most 16 MiB).
    const std::string text = o.case_json.front() == '{' ? o.case_json : io::read_file(o.case_json, io::kSmallFileLimit);
    const auto spec = fixtures::case_from_json(text);
    const std::string failure = properties::run_case(*p, *k, spec);
    std::printf("%s on %s, case %s: %s\n", p->name.c_str(), k->name().c_str(), fixtures::describe(spec, k->contract().conventions).c_str(),
                failure.empty() ? "holds" : "FAILS");
    if (!failure.empty()) std::printf("  %s\n", failure.c_str());
    return failure.empty() ? 0 : 1;
  }
  if (o.run.reproduce.empty()) throw std::invalid_argument("replay needs --reproduce or --case");
  // A string that cannot replay this law here is a usage error (exit 2), before any sampler runs a case.
  if (const std::string problem = properties::reproduce_problem(*p, *k, o.run.reproduce); !problem.empty())
    throw std::invalid_argument(problem);
  const auto r = properties::run_law(*p, *k, o.run);
  std::printf("%s on %s: %s\n", p->name.c_str(), k->name().c_str(), r.summary().c_str());
  if (!r.counterexample.empty()) std::printf("%s\n", r.counterexample.c_str());
  return r.verdict == properties::LawResult::Verdict::passed ? 0 : 1;
}

}  // namespace raceoracle::cli

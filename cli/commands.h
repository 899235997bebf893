#pragma once
/// The subcommands of `raceoracle`, each a function of its parsed options.
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/agreement.h"
#include "cli/report_files.h"
#include "protocol/external_sampler.h"
#include "properties/shard.h"
#include "properties/suite.h"

namespace raceoracle::cli {

struct CheckOptions {
  std::vector<std::string> kernels;  ///< empty: every real kernel
  protocol::SamplerSpec sampler;     ///< given: check this external sampler instead
  std::vector<std::string> laws;  ///< empty: every law that applies
  bool run_agreement = true;            ///< the production-shape agreement run
  bool run_laws = true;                 ///< false: the agreement run alone (and the gate, when on)
  /// Seed, cases, corpus (empty: none), shrink budget: the suite's and the mutant gate's.
  properties::RunSettings run;
  bool mutants = true;
  double mutant_timeout_s = 120;
  bool racecheck = false;  ///< the gate's surviving pairs again under compute-sanitizer racecheck (mutants::HarnessSettings)
  analysis::AgreementSettings agreement;
  ReportFiles files;  ///< the report's JSON, JUnit XML, HTML page
  bool save_failures = true;  ///< save shrunk counterexamples to the corpus (a sampler's: its own)
  /// An external sampler's own corpus: its failures saved there, replayed
  /// first on the next run (empty: .raceoracle/corpus/<its name> here).
  std::string sampler_corpus;
  bool fail_fast = false;     ///< stop the laws at their first failure
  properties::Shard shard;    ///< run only this shard's units (properties/shard.h)
  int cases_per_unit = properties::kCasesPerUnit;
  /// > 0: run as this many shards in parallel, one process a device, then
  /// merge; -1: one a device this machine shows. `args` is the command line
  /// the shards repeat.
  int devices = 0;
  std::vector<std::string> args;
};
int check(const CheckOptions& o);

struct MutantsOptions {
  std::vector<std::string> mutants;  ///< empty: all
  protocol::SamplerSpec sampler;     ///< given: the mutant is this (deliberately broken) external sampler
  properties::RunSettings run;       ///< seed, cases, corpus (empty: none), shrink budget
  double timeout_s = 120;
  std::vector<std::string> laws;              ///< run only these (empty: every one)
  std::vector<std::string> expect_killed_by;  ///< each must be among the killers
  std::string report_json, matrix_md;
  bool save_corpus = false;  ///< save each mutant's first shrunk counterexample to the corpus
  properties::Shard shard;   ///< run only this shard's (mutant, property) pairs
  ReportFiles files;         ///< JSON: every pair's outcome, the report `raceoracle merge` joins; JUnit, HTML
  bool racecheck = false;    ///< each pair under compute-sanitizer racecheck (mutants::HarnessSettings)
};
int mutants(const MutantsOptions& o);

/// `raceoracle merge REPORT...`: the `--json` reports of the N shards of one
/// run (`check` or `mutants`) joined into the unsharded report, with its
/// verdict, mutation report (Stryker schema) and kill matrix; or the
/// `--state` files of a sharded `divergence` run joined into its tables.
struct MergeOptions {
  std::vector<std::string> reports;
  ReportFiles files;  ///< the merged report: the unsharded run's JSON, its JUnit XML and HTML page
  std::string report_json, matrix_md;
  std::string out_dir = "divergence";  ///< divergence states: where the run's CSV, JSON and SVG go
  bool out_given = false;              ///< --out was given (check's and mutants' reports refuse it)
};
int merge(const MergeOptions& o);

struct ReplayOptions {
  std::string law, kernel;
  protocol::SamplerSpec sampler;  ///< instead of --kernel
  std::string case_json;  ///< a CaseSpec (JSON text or a file holding it) instead of a reproduce string
  /// The failing run's seed and cases, and the reproduce string; no corpus.
  properties::RunSettings run = [] {
    properties::RunSettings s;
    s.corpus_dir.clear();
    return s;
  }();
};
int replay(const ReplayOptions& o);

/// Lists kernels, mutants and laws; json: as one JSON object on stdout
/// (the Python package reads the laws from it).
int list(bool json = false);

}  // namespace raceoracle::cli

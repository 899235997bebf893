// raceoracle: the command-line front end.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <string>

#include "cli/bench.h"
#include "cli/commands.h"
#include "cli/divergence.h"
#include "cli/verify.h"
#include "kernels/device_memory.h"
#include "kernels/sampler.h"
#include "mutants/harness.h"

namespace cli = raceoracle::cli;
namespace kernels = raceoracle::kernels;

namespace {

/// --sampler and the flags that go with it, on every command that takes one.
void add_sampler_options(CLI::App* app, cli::SamplerOptions& o, const char* what) {
  auto* s = app->add_option("--sampler", o.command, what);
  app->add_option("--sampler-fds", o.fds, "IN,OUT: a sampler already serving on these inherited descriptors "
                                          "(how the Python package's check() runs)")
      ->excludes(s);
  app->add_option("--sampler-timeout", o.timeout_s, "seconds the sampler may take per request (default 60)")
      ->check(CLI::Range(0.001, 86400.0));
  app->add_option_function<std::string>(
         "--scaling-order", [&o](const std::string& v) { o.overrides["scaling_order"] = v; },
         "override the sampler's declared scaling order")
      ->check(CLI::IsMember({"post", "pre"}));
  app->add_option_function<double>(
         "--exp-ulp", [&o](double v) { o.overrides["exp_ulp"] = fmt::format("{}", v); },
         "override the sampler's declared exp error (ulps)")
      ->check(CLI::Range(0.0, 1048576.0));
  app->add_option_function<double>(
         "--div-ulp", [&o](double v) { o.overrides["div_ulp"] = fmt::format("{}", v); },
         "override the sampler's declared division error (ulps)")
      ->check(CLI::Range(0.0, 1048576.0));
  app->add_option_function<int>(
         "--stages", [&o](int v) { o.overrides["stages"] = std::to_string(v); },
         "override the sampler's rounding stages (1 unfused, 2 fused)")
      ->check(CLI::IsMember({1, 2}));
}

}  // namespace

int main(int argc, char** argv) {
  // The mutant harness's children (mutants/harness.h), not a user command.
  if (argc > 1 && std::string(argv[1]) == "__pair") return raceoracle::mutants::pair_child_main(argc, argv);
  CLI::App app{"raceoracle: correctness oracle and property suite for exponential-race sampling kernels"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "raceoracle 0.1.0");

  cli::CheckOptions check;
  auto* c = app.add_subcommand("check", "properties, mutant gate and a production-shape agreement run");
  c->add_option("--kernels", check.kernels, "kernels to check (default: every real kernel)");
  add_sampler_options(c, check.sampler, "check this sampler (a command speaking docs/SAMPLER_PROTOCOL.md) instead of kernels");
  std::string backend;
  c->add_option("--backend", backend, "cpu, nvidia or amd: must be the backend this binary was built for "
                                      "(ci/check.sh builds nvidia when an NVIDIA GPU is found)")
      ->check(CLI::IsMember({"cpu", "nvidia", "amd"}));
  c->add_option("--seed", check.seed, "RapidCheck seed (default: the fixed CI seed)");
  c->add_option("--cases", check.cases, "cases per property")->check(CLI::Range(1, 1000000));
  c->add_option("--properties", check.properties, "properties to run (default: every one that applies)");
  c->add_flag("!--no-mutants", check.mutants, "skip the mutant gate");
  c->add_flag("!--no-agreement", check.run_agreement, "skip the production-shape agreement run");
  c->add_option("--mutant-timeout", check.mutant_timeout_s, "seconds per (mutant, property)")->check(CLI::PositiveNumber);
  c->add_option("--rows", check.agreement.rows, "rows per agreement batch")->check(CLI::Range(1, 65535));
  c->add_option("--vocab", check.agreement.vocab, "vocabulary size of the agreement run")->check(CLI::Range(1, 1 << 30));
  c->add_option("--batches", check.agreement.batches, "agreement batches")->check(CLI::Range(1, 10000));
  std::string dtype = "bf16";
  c->add_option("--dtype", dtype, "logit dtype of the agreement run")->check(CLI::IsMember({"bf16", "f32"}));
  c->add_option("--json", check.json, "write the machine-readable report to this file");
  c->add_flag("!--no-save-failures", check.save_failures, "do not save counterexamples to properties/corpus");

  cli::MutantsOptions mut;
  auto* m = app.add_subcommand("mutants", "run every property against every mutant; report kills");
  m->add_option("--mutants", mut.mutants, "mutants to run (default: all)");
  add_sampler_options(m, mut.sampler, "gate this deliberately broken sampler (docs/SAMPLER_PROTOCOL.md) instead");
  m->add_option("--seed", mut.seed, "RapidCheck seed");
  m->add_option("--cases", mut.cases, "cases per property")->check(CLI::Range(1, 1000000));
  m->add_option("--timeout", mut.timeout_s, "seconds per (mutant, property)")->check(CLI::PositiveNumber);
  m->add_option("--expect-killed-by", mut.expect_killed_by, "properties that must be among the killers");
  m->add_option("--report", mut.report_json, "write the mutation-testing report JSON (Stryker schema)");
  m->add_option("--matrix", mut.matrix_md, "write the kill matrix (Markdown)");
  m->add_flag("--save-corpus", mut.save_corpus, "save each mutant's first counterexample to properties/corpus");
  m->add_flag("!--no-corpus", mut.corpus, "skip the regression corpus: random search alone must kill");

  cli::ReplayOptions rep;
  auto* r = app.add_subcommand("replay", "replay a property failure from its reproduce string");
  r->add_option("--property", rep.property, "property name")->required();
  r->add_option("--kernel", rep.kernel, "kernel or mutant name");
  add_sampler_options(r, rep.sampler, "the sampler the failure was found on");
  r->add_option("--reproduce", rep.reproduce, "the reproduce string a failure printed");
  r->add_option("--case", rep.case_json, "a saved case: JSON text or a corpus file");
  r->add_option("--seed", rep.seed, "seed of the failing run");
  r->add_option("--cases", rep.cases, "cases of the failing run");

  cli::DivergenceOptions div;
  auto* d = app.add_subcommand("divergence", "fp32 key error and its certified bound per temperature and scaling order");
  d->add_option("--temperatures", div.temperatures, "temperatures (default 0.01 0.1 0.3 0.7 1 2)")
      ->check(CLI::PositiveNumber);
  d->add_option("--rows", div.rows, "rows per batch")->check(CLI::Range(1, 65535));
  d->add_option("--vocab", div.vocab, "vocabulary size")->check(CLI::Range(1, 1 << 30));
  d->add_option("--batches", div.batches, "batches per temperature")->check(CLI::Range(1, 100000));
  d->add_option("--seed", div.seed, "random seed");
  d->add_option("--out", div.out_dir, "directory for divergence.csv, .json and .svg");
  add_sampler_options(d, div.sampler, "also run this sampler on the same batches: its disagreement with fused-post per T");
  std::string div_dtype = "bf16";
  d->add_option("--dtype", div_dtype, "logit dtype")->check(CLI::IsMember({"bf16", "f32"}));

  cli::VerifyOptions ver;
  auto* v = app.add_subcommand("verify", "check any sampler's tokens (a safetensors file) against the oracle");
  v->add_option("file", ver.file, "safetensors file with logits, noise, temperatures, tokens")->required();
  v->add_option("--json", ver.json, "write the machine-readable report to this file");
  v->add_option("--show", ver.show, "failing rows to print")->check(CLI::Range(0, 1000000));

  cli::BenchOptions bo;
  auto* bn = app.add_subcommand("bench", "device timings of the kernels vs copy bandwidth and empty launches");
  bn->add_option("--rows", bo.rows, "row counts (default 1 4 8 16 32 64 128 256; cpu: 1 8)")->check(CLI::Range(1, 65535));
  bn->add_option("--vocab", bo.vocab, "vocabulary size")->check(CLI::Range(1, 1 << 30));
  bn->add_option("--dtypes", bo.dtypes, "logit dtypes")->check(CLI::IsMember({"bf16", "f32"}));
  bn->add_option("--kernels", bo.kernels, "kernels to time");
  bn->add_option("--samples", bo.samples, "timed samples per cell")->check(CLI::Range(1, 100000));
  bn->add_option("--launches", bo.per_sample, "launches per sample")->check(CLI::Range(1, 100000));
  std::vector<int> block_vs;  // the compiled tilings at the default thread count
  for (const kernels::FusedConfig& tiling : kernels::kFusedConfigs)
    if (tiling.threads == kernels::FusedConfig{}.threads) block_vs.push_back(tiling.block_v);
  bn->add_option("--block-v", bo.block_v, "fused tile size")->check(CLI::IsMember(block_vs));
  bn->add_option("--json", bo.json, "write the results as JSON");

  auto* l = app.add_subcommand("list", "list kernels, mutants and properties");

  CLI11_PARSE(app, argc, argv);
  check.agreement.dtype = dtype == "f32" ? raceoracle::oracle::Dtype::f32 : raceoracle::oracle::Dtype::bf16;
  check.agreement.seed = check.seed;
  div.dtype = div_dtype == "f32" ? raceoracle::oracle::Dtype::f32 : raceoracle::oracle::Dtype::bf16;
  try {
    if (*c && !backend.empty() && backend != raceoracle::kernels::backend_name())
      throw std::invalid_argument("this raceoracle was built for the " + std::string(raceoracle::kernels::backend_name()) +
                                  " backend; for " + backend + " build with `cmake --preset " + backend +
                                  "` (or RACEORACLE_BACKEND=" + backend + " bash ci/check.sh)");
    if (*c) return cli::check(check);
    if (*m) return cli::mutants(mut);
    if (*r) return cli::replay(rep);
    if (*l) return cli::list();
    if (*d) return cli::divergence(div);
    if (*bn) return cli::bench(bo);
    if (*v) return cli::verify(ver);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "raceoracle: error: %s\n", e.what());
    return 2;
  }
  return 0;
}

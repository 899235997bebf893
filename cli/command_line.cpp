#include "cli/command_line.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "cli/bench.h"
#include "cli/commands.h"
#include "cli/divergence.h"
#include "cli/frequency.h"
#include "cli/verify.h"
#include "cli/path_clashes.h"
#include "cli/verify_lossless.h"
#include "io/files.h"
#include "kernels/device_memory.h"
#include "kernels/host_api.h"
#include "protocol/contract_fields.h"
#include "protocol/external_sampler.h"

namespace raceoracle::cli {

struct CommandLine::Options {
  CheckOptions check;
  MutantsOptions mut;
  ReplayOptions rep;
  DivergenceOptions div;
  VerifyOptions ver, step;
  BenchOptions bo;
  MergeOptions merge;
  FrequencyOptions freq;
  LosslessOptions lossless;
  std::string backend, dtype = "bf16", div_dtype = "bf16", freq_dtype = "bf16";
  bool list_json = false;
  PathUses paths;  // every file a command reads or writes, checked for clashes once parsed
  CLI::App *c = nullptr, *m = nullptr, *r = nullptr, *d = nullptr, *v = nullptr, *bn = nullptr, *l = nullptr, *mg = nullptr,
           *f = nullptr, *vs = nullptr, *vl = nullptr;
};

namespace {

/// A finite number in [lo, hi]. CLI::Range and CLI::PositiveNumber let NaN
/// through (every comparison with it is false) and print 300-digit bounds.
CLI::Validator finite_in(double lo, double hi, bool open_low = false) {
  const std::string allowed = fmt::format("a finite number {} {}{}", open_low ? ">" : ">=", lo,
                                          std::isinf(hi) ? std::string() : fmt::format(" and <= {}", hi));
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        double v = 0;
        std::size_t used = 0;
        try {
          v = std::stod(text, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        const bool ok = used == text.size() && std::isfinite(v) && (open_low ? v > lo : v >= lo) && v <= hi;
        return ok ? std::string() : fmt::format("'{}' is not {}", text, allowed);
      },
      allowed);
}
const CLI::Validator kPositive = finite_in(0.0, INFINITY, true);

/// A validator of a library's check: `accept(text)` throws what is wrong.
template <class Accept>
CLI::Validator refusing(Accept accept, const char* description) {
  return CLI::Validator(
      [accept](std::string& text) -> std::string {
        try {
          accept(text);
        } catch (const std::exception& e) {
          return e.what();
        }
        return {};
      },
      description);
}

/// --racecheck on `app` (mutants::HarnessSettings::racecheck).
void add_racecheck(CLI::App* app, bool& racecheck) {
  app->add_flag("--racecheck", racecheck,
                "nvidia backend: a (mutant, law) pair that survives runs again under compute-sanitizer --tool "
                "racecheck; a shared-memory hazard is a kill");
}

/// --shard I/N on `app`, parsed into `shard`.
void add_shard(CLI::App* app, properties::Shard& shard) {
  app->add_option_function<std::string>(
         "--shard", [&shard](const std::string& text) { shard = properties::parse_shard(text); },
         "run shard I of N (0 <= I < N): N shards run exactly the unsharded work; join them with `raceoracle merge`")
      ->check(refusing([](const std::string& text) { properties::parse_shard(text); }, "I/N"));
}

/// --devices all|N on `app`, into `devices` (-1: all): N shards in parallel (cli/devices.h), then `what`.
CLI::Option* add_devices(CLI::App* app, int& devices, const std::string& what) {
  return app
      ->add_option_function<std::string>(
          "--devices", [&devices](const std::string& v) { devices = v == "all" ? -1 : std::stoi(v); },
          "all, or N: run N shards in parallel, one process a device, and " + what)
      ->check(CLI::IsMember({"all"}) | CLI::Range(1, 1024));
}

/// A seed: decimal digits, below 2^64 (CLI11 would wrap -1 to 2^64 - 1 and
/// clamp larger values silently).
const CLI::Validator kSeed(
    [](std::string& text) -> std::string {
      const bool digits = !text.empty() && text.size() <= 20 &&
                          std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
      if (digits && (text.size() < 20 || text <= "18446744073709551615")) return {};
      return fmt::format("'{}' is not a seed: decimal digits, 0 to 18446744073709551615", text);
    },
    "an integer in [0, 2^64)");

/// An output file or directory that can be written: checked when the command
/// line is read, so that a bad path is exit 2 before the run, not after it.
const CLI::Validator kWritableFile = refusing([](const std::string& path) { io::check_writable(path); }, "FILE");
const CLI::Validator kWritableDir = refusing([](const std::string& path) { io::check_writable_dir(path); }, "DIR");

/// An output file `flag` of `app` into `path`, checked writable and registered in `uses`.
CLI::Option* add_output(PathUses& uses, CLI::App* app, const std::string& flag, std::string& path, const std::string& help) {
  CLI::Option* opt = app->add_option(flag, path, help)->check(kWritableFile);
  uses.push_back({app, opt, &path, nullptr, true});
  return opt;
}

/// An input file (or files) `name` of `app`, registered in `uses`.
template <class Target>
CLI::Option* add_input(PathUses& uses, CLI::App* app, const std::string& name, Target& target, const std::string& help) {
  CLI::Option* opt = app->add_option(name, target, help);
  if constexpr (std::is_same_v<Target, std::string>) uses.push_back({app, opt, &target, nullptr, false});
  else uses.push_back({app, opt, nullptr, &target, false});
  return opt;
}

/// --json, --junit and --html: the report, as JSON (`json_help` says which), JUnit XML and one HTML page.
void add_report_files(PathUses& uses, CLI::App* app, ReportFiles& files, const std::string& json_help) {
  add_output(uses, app, "--json", files.json, json_help);
  add_output(uses, app, "--junit", files.junit,
             "write the report as JUnit XML for CI: a testcase per (subject, law), per mutant, per agreement cell");
  add_output(uses, app, "--html", files.html,
             "write the report as one self-contained HTML page for CI: the verdict, each law with the input "
             "classes it met, counterexamples and replay commands, the kill matrix, the agreement run");
}

/// A command line run by /bin/sh -c: an empty or blank one (an unset
/// variable in a CI script) would check nothing that the user named.
const CLI::Validator kCommand(
    [](std::string& text) -> std::string {
      if (std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isspace(c); }))
        return "--sampler is empty: name the command that starts the sampler (is a variable unset?)";
      return {};
    },
    "CMD");

/// A batch the host holds whole (fp32 logits and noise, or with `divergence
/// --no-kernels` logit rows and their order): refused up front, naming the
/// flags, when it cannot fit in this machine's memory.
void require_fits(const std::string& command, std::int64_t rows, std::int64_t vocab, const char* rows_flag = "--rows",
                  const char* what = "logits and noise") {
  const double bytes = double(rows) * double(vocab) * 8.0;
  const double ram = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGE_SIZE));
  if (bytes > ram)
    throw CLI::ValidationError(command, fmt::format("{} {} x --vocab {} needs {:.1f} GB for {}; this machine has {:.1f} GB",
                                                    rows_flag, rows, vocab, bytes / 1e9, what, ram / 1e9));
}

/// --seed, --cases, --shrink-seconds, --no-corpus and --random-only into one RunSettings.
void add_run_settings(CLI::App* app, properties::RunSettings& run, const char* no_corpus) {
  app->add_option("--seed", run.seed, "RapidCheck seed (default: the fixed CI seed)")->check(kSeed);
  app->add_option("--cases", run.cases, "cases per law")->check(CLI::Range(1, 1000000));
  app->add_option("--shrink-seconds", run.shrink_seconds,
                  "seconds a failure may spend shrinking before the smallest case found so far is reported")
      ->check(CLI::Range(0.0, 86400.0));
  app->add_flag_callback("--no-corpus", [&run] { run.corpus_dir.clear(); }, no_corpus);
  app->add_flag_callback("--random-only", [&run] { run.matrix = false; },
                         "skip the coverage matrix and the built cases: the random search alone (what a kill owes to "
                         "the generators; the matrix's cells are then not required)");
}

/// --sampler and the flags that go with it, on every command that takes one.
void add_sampler_options(CLI::App* app, protocol::SamplerSpec& o, const char* what) {
  auto* s = app->add_option("--sampler", o.command, what)->check(kCommand);
  app->add_option_function<std::string>(
         "--sampler-fds", [&o](const std::string& v) { protocol::parse_sampler_fds(v, o); },
         "IN,OUT: a sampler already serving on these inherited descriptors (how the Python package's check() runs)")
      ->check(refusing([](const std::string& text) { protocol::SamplerSpec probe; protocol::parse_sampler_fds(text, probe); },
                       "IN,OUT"))
      ->excludes(s);
  app->add_option("--sampler-timeout", o.timeout_s, "seconds the sampler may take per request (default 60)")
      ->check(finite_in(0.001, 86400.0));
  app->add_flag("--definition", o.definition,
                "judge by SPEC §1 alone: the sampler's declared conventions (greedy rule, eps, NaN logits) are reported "
                "but not honoured");
  protocol::ContractOverrides& over = o.overrides;
  auto flag = [](const char* field) { return protocol::override_flag(field); };
  app->add_option_function<std::string>(
         flag("scaling_order"),
         [&over](const std::string& v) {
           for (std::size_t i = 0; i < std::size(race::kScalingOrderNames); ++i)
             if (v == race::kScalingOrderNames[i]) over.scaling_order = race::ScalingOrder(i);
         },
         "override the sampler's declared scaling order")
      ->check(CLI::IsMember(std::vector<std::string>(std::begin(race::kScalingOrderNames), std::end(race::kScalingOrderNames))));
  app->add_option_function<double>(
         flag("exp_ulp"), [&over](double v) { over.exp_ulp = v; }, "override the sampler's declared exp error (ulps)")
      ->check(finite_in(0.0, protocol::kMaxUlp));
  app->add_option_function<double>(
         flag("div_ulp"), [&over](double v) { over.div_ulp = v; }, "override the sampler's declared division error (ulps)")
      ->check(finite_in(0.0, protocol::kMaxUlp));
  app->add_option_function<int>(
         flag("stages"), [&over](int v) { over.stages = v; }, "override the sampler's rounding stages (1 unfused, 2 fused)")
      ->check(CLI::IsMember({1, 2}));
  app->add_option_function<int>(
         flag("rescales"), [&over](int v) { over.rescales = v; },
         "override the rescales every key undergoes (oracle/ERROR_MODEL.md; in place of --stages)")
      ->check(CLI::Range(0, protocol::kMaxCount));
  app->add_option_function<std::string>(
         flag("normalise"), [&over](const std::string& v) { over.normalises = v == "sum"; },
         "override whether keys are divided by the softmax sum")
      ->check(CLI::IsMember({"none", "sum"}));
  app->add_option_function<std::string>(
         flag("key_domain"),
         [&over](const std::string& v) { over.key_domain = v == "log" ? race::KeyDomain::log : race::KeyDomain::ratio; },
         "override the race's domain: ratio (w / (E + eps)) or log (x / t - log(E + eps))")
      ->check(CLI::IsMember({"ratio", "log"}));
  app->add_option_function<std::string>(
         flag("key_dtype"), [&over](const std::string& v) { over.key_bf16 = v == "bf16"; },
         "override the dtype the keys are compared in")
      ->check(CLI::IsMember({"f32", "bf16"}));
}

constexpr const char* kExitCodes =
    "Exit codes: 0 every verdict PASS; 1 a law failed, a mutant survived or a token is unexplained (the report says "
    "which); 2 a usage or input error (the reason on stderr), before any work; 128 + the signal (130 for Ctrl-C) "
    "check or mutants interrupted (the reports written, marked partial).";

/// The footer of a command's --help: one example, then the exit codes.
std::string example(const char* line) { return std::string("Example:\n  ") + line + "\n" + kExitCodes; }

}  // namespace

CommandLine::CommandLine()
    : o_(std::make_unique<Options>()),
      app_("raceoracle: correctness oracle and property-based test suite for exponential-race sampling kernels") {
  Options& o = *o_;
  app_.require_subcommand(1);
  app_.set_version_flag("--version", "raceoracle " RACEORACLE_VERSION);
  app_.option_defaults()->always_capture_default();  // each option's help shows its default
  app_.footer(kExitCodes);

  o.c = app_.add_subcommand("check", "the laws, the mutant gate and a production-shape agreement run");
  o.c->footer(example("raceoracle check --kernels fused-post --cases 200 --json check.json"));
  o.c->add_option("--kernels", o.check.kernels,
                  "kernels to check, their mutants gated (default: every real kernel, every mutant; the verify "
                  "kernels, verify-fused and verify-probs, only when named, apart from the others: SPEC §11)");
  add_sampler_options(o.c, o.check.sampler, "check this sampler (a command speaking docs/SAMPLER_PROTOCOL.md) instead of kernels");
  o.c->add_option("--backend", o.backend, "cpu, nvidia or amd: must be the backend this binary was built for "
                                      "(ci/check.sh builds nvidia when an NVIDIA GPU is found)")
      ->check(CLI::IsMember({"cpu", "nvidia", "amd"}));
  add_run_settings(o.c, o.check.run, "skip the regression corpus: random search alone must find failures");
  o.c->add_option("--laws,--properties", o.check.laws, "laws to run, on the subjects and in the mutant gate (default: every one that applies)");
  o.c->add_flag_callback("--no-mutants", [&flag = o.check.mutants] { flag = false; }, "skip the mutant gate");
  o.c->add_flag_callback("--no-agreement", [&flag = o.check.run_agreement] { flag = false; }, "skip the production-shape agreement run");
  o.c->add_flag_callback("--no-laws", [&flag = o.check.run_laws] { flag = false; },
                         "skip the laws on the subjects: the agreement run (and the mutant gate, when on) alone");
  o.c->add_option("--mutant-timeout", o.check.mutant_timeout_s, "seconds per (mutant, law)")->check(kPositive);
  add_racecheck(o.c, o.check.racecheck);
  o.c->add_option("--rows", o.check.agreement.rows, "rows per agreement batch")->check(CLI::Range(1, 65535));
  o.c->add_option("--vocab", o.check.agreement.vocab, "vocabulary size of the agreement run")->check(CLI::Range(1, 1 << 30));
  o.c->add_option("--batches", o.check.agreement.batches, "agreement batches")->check(CLI::Range(1, 10000));
  o.c->add_option("--dtype", o.dtype, "logit dtype of the agreement run")->check(CLI::IsMember({"bf16", "f32"}));
  add_report_files(o.paths, o.c, o.check.files, "write the machine-readable report to this file");
  o.c->add_flag_callback("--no-save-failures", [&flag = o.check.save_failures] { flag = false; },
                         "do not save counterexamples to the corpus (properties/corpus; a sampler's own: --corpus)");
  o.c->add_option("--corpus", o.check.sampler_corpus,
                  "a sampler's own corpus: its failures saved there and replayed first on the next run "
                  "(default: .raceoracle/corpus/<sampler name> under the current directory)");
  o.c->add_flag("--fail-fast", o.check.fail_fast, "stop the laws at their first failure (mutation runs)");
  add_shard(o.c, o.check.shard);
  add_devices(o.c, o.check.devices, "merge their reports");
  o.c->add_option("--cases-per-unit", o.check.cases_per_unit,
                  "a (subject, law) with more cases is split into units of about this many (sharding grain)")
      ->check(CLI::Range(1, 1000000));

  o.m = app_.add_subcommand("mutants", "run every law against every mutant; report kills");
  o.m->footer(example("raceoracle mutants --mutants fused-post~high_id_tie --laws AgreesWithOracle --expect-killed-by AgreesWithOracle"));
  o.m->add_option("--mutants", o.mut.mutants, "mutants to run (default: all but the verify kernels', which run when named: verify-fused~accept_strict, ...)");
  add_sampler_options(o.m, o.mut.sampler, "gate this deliberately broken sampler (docs/SAMPLER_PROTOCOL.md) instead");
  add_run_settings(o.m, o.mut.run, "skip the regression corpus: random search alone must kill");
  o.m->add_option("--timeout", o.mut.timeout_s, "seconds per (mutant, law)")->check(kPositive);
  o.m->add_option("--laws,--properties", o.mut.laws, "laws to run (default: every one)");
  o.m->add_option("--expect-killed-by", o.mut.expect_killed_by, "laws that must be among the killers");
  add_output(o.paths, o.m, "--report", o.mut.report_json, "write the mutation-testing report JSON (Stryker schema)");
  add_output(o.paths, o.m, "--matrix", o.mut.matrix_md, "write the kill matrix (Markdown)");
  o.m->add_flag("--save-corpus", o.mut.save_corpus, "save each mutant's first counterexample to properties/corpus");
  add_racecheck(o.m, o.mut.racecheck);
  add_shard(o.m, o.mut.shard);
  add_report_files(o.paths, o.m, o.mut.files, "write every (mutant, law) outcome, for `raceoracle merge`");

  o.mg = app_.add_subcommand("merge", "join the --json reports of a sharded check or mutants run, or the --state files of a sharded divergence run, into one");
  add_input(o.paths, o.mg, "reports", o.merge.reports, "the shards' --json reports (or divergence --state files), every shard once")->required();
  add_report_files(o.paths, o.mg, o.merge.files, "write the merged report (the unsharded run's JSON)");
  add_output(o.paths, o.mg, "--report", o.merge.report_json, "write the merged mutation-testing report (Stryker schema)");
  add_output(o.paths, o.mg, "--matrix", o.merge.matrix_md, "write the merged kill matrix (Markdown)");
  o.mg->add_option("--out", o.merge.out_dir, "divergence states: directory for divergence.csv, .json and .svg")
      ->check(kWritableDir);

  o.r = app_.add_subcommand("replay", "replay a law's failure from its reproduce string");
  o.r->add_option("--law,--property", o.rep.law, "the law's name")->required();
  o.r->add_option("--kernel", o.rep.kernel, "kernel or mutant name");
  add_sampler_options(o.r, o.rep.sampler, "the sampler the failure was found on");
  o.r->add_option("--reproduce", o.rep.run.reproduce, "the reproduce string a failure printed");
  o.r->add_option("--case", o.rep.case_json, "a saved case: JSON text or a corpus file");
  o.r->add_option("--seed", o.rep.run.seed, "seed of the failing run")->check(kSeed);
  o.r->add_option("--cases", o.rep.run.cases, "cases of the failing run")->check(CLI::Range(1, 1000000));

  o.d = app_.add_subcommand("divergence", "fp32 key error and its certified bound per temperature and scaling order");
  o.d->add_option("--temperatures", o.div.study.temperatures, "temperatures (default 0.01 0.1 0.3 0.7 1 2)")
      ->check(kPositive);
  o.d->add_option("--rows", o.div.study.rows, "rows per batch")->check(CLI::Range(1, 65535));
  o.d->add_option("--vocab", o.div.study.vocab, "vocabulary size")->check(CLI::Range(1, 1 << 30));
  o.d->add_option("--batches", o.div.study.batches, "batches per temperature")->check(CLI::Range(1, 100000));
  o.d->add_option("--seed", o.div.study.seed, "random seed")->check(kSeed);
  o.d->add_option("--out", o.div.out_dir, "directory for divergence.csv, .json and .svg")->check(kWritableDir);
  add_output(o.paths, o.d, "--html", o.div.html,
             "write one self-contained HTML page: the key error against its bound and the disagreement rate "
             "per temperature, charts and tables (comparing two dumps: their table and unexplained rows)");
  add_sampler_options(o.d, o.div.sampler, "also run this sampler on the same batches: its disagreement with fused-post per T");
  o.d->add_option("--dtype", o.div_dtype, "logit dtype")->check(CLI::IsMember({"bf16", "f32"}));
  auto* logits = add_input(o.paths, o.d, "--logits", o.div.study.logits_file,
                           "rows from this safetensors file (tensor `logits` [R, V], BF16/F16/F32), reused with fresh noise")
                     ->check(CLI::ExistingFile);
  auto* normal = o.d->add_option("--normal", o.div.study.normal_sigma, "rows drawn as N(0, SIGMA^2) instead of LLM-like rows")
                     ->check(kPositive)
                     ->excludes(logits);
  o.d->add_option("--centre", o.div.study.normal_centre, "with --normal: N(CENTRE, SIGMA^2) (real logits sit far from 0)")
      ->check(finite_in(-1e4, 1e4))
      ->needs(normal);
  logits->excludes("--vocab")->excludes("--dtype");
  o.d->add_option("--competitive", o.div.study.competitive,
                  "key-error columns over the ids whose exact key is at least this fraction of the winner's")
      ->check(finite_in(0.0, 1.0, true));
  o.d->add_option("--top-k", o.div.study.top_k, "key-error columns over each row's top K keys instead")
      ->check(CLI::Range(1, 1 << 20))
      ->excludes("--competitive");
  o.d->add_option_function<double>(
         "--rate-exp-ulp", [&o](double v) { o.div.study.exp_ulp = v; },
         "estimate the disagreement rate under this exp accuracy instead of the fused kernels' (a coarse one is countable)")
      ->check(finite_in(0.0, protocol::kMaxUlp));
  o.d->add_option_function<double>(
         "--rate-div-ulp", [&o](double v) { o.div.study.div_ulp = v; }, "the same for the division")
      ->check(finite_in(0.0, protocol::kMaxUlp));
  o.d->add_option("--window", o.div.study.window, "top-two gap window the rate's density is read over")
      ->check(finite_in(0.0, 0.5, true));
  auto* no_kernels =
      o.d->add_flag_callback("--no-kernels", [&flag = o.div.study.kernels] { flag = false; },
                             "the oracle and the emulated keys only, no kernel runs: logit rows reused with fresh noise, "
                             "drawn only where it can matter (millions of rows)")
          ->excludes("--sampler");
  o.d->add_option("--logit-rows", o.div.study.logit_rows,
                  "with --no-kernels: logit rows drawn (or read) once and reused in turn with fresh noise")
      ->check(CLI::Range(1, 1 << 20))
      ->needs(no_kernels);
  auto* dumps = add_input(o.paths, o.d, "dumps", o.div.dumps,
                                "two files in verify's format with the same inputs and noise: compare their tokens instead")
                    ->expected(2);
  auto* state = add_output(o.paths, o.d, "--state", o.div.state,
                            "write the run's tallies (with --shard, this shard's) for `raceoracle merge` to join "
                            "into the run's tables; no files in --out")
                    ->excludes("--out")
                    ->excludes("--html");
  add_shard(o.d, o.div.study.shard);
  o.d->get_option("--shard")->needs(state);
  add_devices(o.d, o.div.devices, "merge their states into the run's tables")->excludes("--shard")->excludes(state);
  for (const char* solo : {"--logits", "--normal", "--rows", "--vocab", "--batches", "--temperatures", "--sampler",
                           "--rate-exp-ulp", "--rate-div-ulp", "--top-k", "--competitive", "--window", "--dtype",
                           "--no-kernels", "--logit-rows", "--centre", "--state", "--shard", "--devices"})
    dumps->excludes(solo);

  o.f = app_.add_subcommand("frequency", "judge a sampler that draws its own randomness by its token frequencies");
  add_sampler_options(o.f, o.freq.sampler, "the sampler (docs/SAMPLER_PROTOCOL.md; its hello declares randomness = own)");
  analysis::FrequencyStudy& fs = o.freq.study;
  const analysis::FrequencyStudy fd;  // the defaults the help states
  o.f->add_option("--rows", fs.rows, fmt::format("rows (default {}: analysis/frequency_study.h says what each holds)", fd.rows))
      ->check(CLI::Range(1, 65535));
  o.f->add_option("--vocab", fs.vocab, fmt::format("vocabulary size (default {})", fd.vocab))->check(CLI::Range(1, 1 << 30));
  o.f->add_option("--dtype", o.freq_dtype, "logit dtype (default bf16)")->check(CLI::IsMember({"bf16", "f32"}));
  o.f->add_option("--seed", fs.seed, "seed of the rows and of the seeds each request carries (default: the CI seed)")->check(kSeed);
  o.f->add_option("--draws", fs.law.draws, fmt::format("the most draws per row (default {})", fd.law.draws))
      ->check(CLI::Range(std::int64_t(1), std::int64_t(1) << 40));
  o.f->add_option("--first-look", fs.law.first_look,
                  fmt::format("draws per row at the first look; each next look has 4x (default {})", fd.law.first_look))
      ->check(CLI::Range(std::int64_t(1), std::int64_t(1) << 40));
  o.f->add_option("--alpha", fs.law.alpha, fmt::format("family-wise false-alarm rate of the run (default {:g})", fd.law.alpha))
      ->check(finite_in(0.0, 0.5, true));
  o.f->add_option("--power", fs.law.power,
                  fmt::format("the detection probability the power report states (default {:g})", fd.law.power))
      ->check(finite_in(0.5, 0.999999));
  o.f->add_option("--resolution", fs.law.resolution,
                  "stop once every row would see this binned total-variation distance (default 0: run every look)")
      ->check(finite_in(0.0, 0.5));
  o.f->add_option("--min-expected", fs.law.min_expected,
                  fmt::format("a bin's least expected count (default {:g})", fd.law.min_expected))
      ->check(finite_in(1.0, 1e9));
  add_output(o.paths, o.f, "--json", o.freq.json, "write the machine-readable report to this file");

  o.v = app_.add_subcommand("verify", "check any sampler's tokens (a safetensors file) against the oracle");
  add_input(o.paths, o.v, "file", o.ver.file, "safetensors file with logits, noise, temperatures, tokens")->required();
  add_output(o.paths, o.v, "--json", o.ver.json, "write the machine-readable report to this file");
  add_output(o.paths, o.v, "--junit", o.ver.junit, "write the file's verdict as JUnit XML for CI");
  add_output(o.paths, o.v, "--html", o.ver.html, "write the file's verdict as one self-contained HTML page");
  o.v->add_option("--show", o.ver.show, "failing rows to print")->check(CLI::Range(0, 1000000));
  o.v->add_flag("--allow-out-of-contract", o.ver.allow_out_of_contract,
                "rows whose temperature or noise lies outside SPEC's domain are named but do not fail the run "
                "(they are there on purpose: the sampler must still return an id in range)");

  o.vs = app_.add_subcommand("verify-step", "check a speculative-decoding verify step's ids (a safetensors file) against "
                                            "the oracle (SPEC §11)");
  add_input(o.paths, o.vs, "file", o.step.file, "safetensors file with target_logits, draft_ids, [draft_probs], uniforms, "
                                        "recovery_noise, bonus_noise, temperatures, tokens (analysis/verify_step.h)")
      ->required();
  add_output(o.paths, o.vs, "--json", o.step.json, "write the machine-readable report to this file");
  add_output(o.paths, o.vs, "--junit", o.step.junit, "write the file's verdict as JUnit XML for CI");
  add_output(o.paths, o.vs, "--html", o.step.html, "write the file's verdict as one self-contained HTML page");
  o.vs->add_option("--show", o.step.show, "failing requests to print")->check(CLI::Range(0, 1000000));
  o.vs->add_flag("--allow-out-of-contract", o.step.allow_out_of_contract,
                 "requests whose parameters lie outside SPEC's domain (a temperature, top_p, min_p, a draft count, "
                 "a uniform, a draft) are named but do not fail the run (there on purpose: the step must still "
                 "return ids in range)");

  o.vl = app_.add_subcommand("verify-lossless",
                             "the verify step's losslessness, statistically (SPEC §11): the first emitted token's "
                             "law is the target's, the second's too among runs that accepted the first; on a file of "
                             "runs any sampler made, or on a verify kernel with its randomness drawn");
  o.vl->footer(example("raceoracle verify-lossless --kernel verify-fused --noise uniform-from-draft --runs 4096"));
  auto& lo = o.lossless;
  const analysis::LosslessStudy ld;  // the defaults the help states
  add_input(o.paths, o.vl, "file", lo.file, "safetensors file with target_logits, draft_probs or draft_ids, temperatures, "
                                    "tokens [R, runs, k + 1] (analysis/verify_lossless.h)");
  o.vl->add_option("--kernel", lo.kernel, "instead: run this verify kernel or mutant (e.g. verify-fused, "
                                          "verify-fused~recover_from_target) on analysis/verify_lossless_study.h's requests");
  add_sampler_options(o.vl, lo.sampler, "instead: run this verify step (docs/SAMPLER_PROTOCOL.md; its hello says "
                                        "step = verify) on the same requests, its randomness drawn as --noise says");
  std::string noises;
  for (analysis::VerifyNoise n : analysis::kVerifyNoises) noises += std::string(noises.empty() ? "" : ", ") + analysis::to_string(n);
  o.vl->add_option("--noise", lo.noise, "how the kernel's randomness is drawn: " + noises + " (default independent; "
                                        "the others tie verify noise to the draft's, as the field has shipped it)");
  o.vl->add_option("--runs", lo.study.runs, fmt::format("runs a request, with --kernel or --sampler (default {})", ld.runs))
      ->check(CLI::Range(std::int64_t(1), std::int64_t(1) << 24));
  o.vl->add_option("--dtype", lo.dtype, "target logit dtype, with --kernel or --sampler (default f32)")->check(CLI::IsMember({"bf16", "f32"}));
  o.vl->add_option("--seed", lo.study.seed, "seed of the requests and the draws, with --kernel or --sampler (default: the CI seed)")->check(kSeed);
  o.vl->add_option("--alpha", lo.study.law.alpha, fmt::format("family-wise false-alarm rate (default {:g})", ld.law.alpha))
      ->check(finite_in(0.0, 0.5, true));
  o.vl->add_option("--power", lo.study.law.power,
                   fmt::format("the detection probability the power report states (default {:g})", ld.law.power))
      ->check(finite_in(0.5, 0.999999));
  o.vl->add_option("--max-tv", lo.study.law.max_tv,
                   fmt::format("the binned total-variation distance every request's first token must be visible at, "
                               "with probability --power; fewer runs than that is INCONCLUSIVE, exit 1 (default {:g})",
                               ld.law.max_tv))
      ->check(finite_in(0.0, 1.0, true));
  add_output(o.paths, o.vl, "--json", lo.json, "write the machine-readable report to this file");

  o.bn = app_.add_subcommand("bench", "device timings of the kernels vs copy bandwidth and empty launches");
  o.bn->add_option("--rows", o.bo.timing.rows, "row counts (default 1 4 8 16 32 64 128 256; cpu: 1 8)")->check(CLI::Range(1, 65535));
  o.bn->add_option("--vocab", o.bo.timing.vocab, "vocabulary size")->check(CLI::Range(1, 1 << 30));
  o.bn->add_option("--dtypes", o.bo.timing.dtypes, "logit dtypes")->check(CLI::IsMember({"bf16", "f32"}));
  o.bn->add_option("--kernels", o.bo.timing.kernels, "kernels to time (default: every real kernel)");
  o.bn->add_option("--samples", o.bo.timing.samples, "timed samples per cell")->check(CLI::Range(1, 100000));
  o.bn->add_option("--launches", o.bo.timing.per_sample, "launches per sample")->check(CLI::Range(1, 100000));
  std::vector<int> block_vs;  // the compiled tilings at the default thread count
  for (const kernels::FusedConfig& tiling : kernels::kFusedConfigs)
    if (tiling.threads == kernels::FusedConfig{}.threads) block_vs.push_back(tiling.block_v);
  o.bn->add_option("--block-v", o.bo.timing.block_v, "fused tile size (default: the kernels' choice by row count)")->check(CLI::IsMember(block_vs));
  add_output(o.paths, o.bn, "--json", o.bo.json, "write the results as JSON");
  o.bn->add_flag("--graph", o.bo.timing.graph,
                 "also time each cell replayed from CUDA/HIP graphs on a stream of its own, as engines run their "
                 "decode step (columns KERNEL+graph; GPU backends)");
  std::vector<std::string> rows_like;
  std::string rows_like_help = "the rows' logits (default llm):";
  for (const bench::RowsLikeName& n : bench::kRowsLikeNames) {
    rows_like.emplace_back(n.name);
    rows_like_help += fmt::format("{} {}: {}", rows_like.size() == 1 ? "" : ";", n.name, n.what);
  }
  auto* like = o.bn->add_option_function<std::string>(
                       "--rows-like",
                       [&o](const std::string& v) {
                         for (const bench::RowsLikeName& n : bench::kRowsLikeNames)
                           if (v == n.name) o.bo.timing.rows_like = n.like;
                       },
                       rows_like_help)
                   ->check(CLI::IsMember(rows_like));
  o.bn->add_flag_callback("--flat", [&o] { o.bo.timing.rows_like = bench::RowsLike::flat; }, "--rows-like flat")
      ->excludes(like);
  o.bn->add_option("--top-k", o.bo.timing.filter.top_k, "every row's top-k, for the kernels that filter (default 0: off)")
      ->check(CLI::Range(0, 1 << 30));
  o.bn->add_option("--top-p", o.bo.timing.filter.top_p, "every row's top-p in (0, 1], for the kernels that filter (default 1: off)");
  o.bn->add_option("--min-p", o.bo.timing.filter.min_p, "every row's min-p, for the kernels that filter (default 0: off)")
      ->check(CLI::Range(0.0, 1.0));
  o.bn->add_option("--verify-drafts", o.bo.timing.verify_drafts,
                   "time the verify kernels (SPEC §11) instead: --rows requests of this many drafts each, every draft "
                   "accepted (the longest chain), then the bonus race")
      ->check(CLI::Range(std::int64_t(0), std::int64_t(race::kMaxDrafts)));

  o.l = app_.add_subcommand("list", "list kernels, mutants and laws");
  o.l->add_flag("--json", o.list_json, "print them as one JSON object");
}

CommandLine::~CommandLine() = default;

void CommandLine::parse(int argc, const char* const* argv) {
  app_.parse(argc, argv);
  Options& o = *o_;
  require_distinct_paths(o.paths);
  o.check.args.assign(argv, argv + argc);
  o.div.args = o.check.args;
  o.check.agreement.dtype = o.dtype == "f32" ? oracle::Dtype::f32 : oracle::Dtype::bf16;
  o.check.agreement.seed = o.check.run.seed;
  o.div.study.dtype = o.div_dtype == "f32" ? oracle::Dtype::f32 : oracle::Dtype::bf16;
  if (*o.c) require_fits("check", o.check.agreement.rows, o.check.agreement.vocab);
  if (*o.d) {
    // Without kernels a pool of logit rows is held, not the batches (analysis/rate_study.h).
    const analysis::DivergenceOptions& d = o.div.study;
    if (d.kernels) require_fits("divergence", d.rows, d.vocab);
    else require_fits("divergence", std::min(d.rows * d.batches, d.logit_rows), d.vocab, "--logit-rows", "logit rows and their order");
    o.div.out_given = o.d->count("--out") > 0;
  }
  if (*o.mg) o.merge.out_given = o.mg->count("--out") > 0;
  if (*o.f) {
    o.freq.study.dtype = o.freq_dtype == "f32" ? oracle::Dtype::f32 : oracle::Dtype::bf16;
    require_fits("frequency", o.freq.study.rows, o.freq.study.vocab);
  }
  if (*o.bn) {
    for (std::int64_t rows : o.bo.timing.rows)
      require_fits("bench", rows * (o.bo.timing.verifying() ? o.bo.timing.verify_drafts + 1 : 1), o.bo.timing.vocab);
    // CLI11's Range lets NaN through; a NaN filter is out of SPEC §9's contract.
    if (!race::filter_valid(o.bo.timing.filter))
      throw CLI::ValidationError("bench", "--top-p must be in (0, 1] and --min-p in [0, 1] (SPEC §9)");
  }
}

int CommandLine::run() {
  const Options& o = *o_;
  try {
    if (*o.c && !o.backend.empty() && o.backend != kernels::backend_name())
      throw std::invalid_argument("this raceoracle was built for the " + std::string(kernels::backend_name()) +
                                  " backend; for " + o.backend + " build with `cmake --preset " + o.backend +
                                  "` (or RACEORACLE_BACKEND=" + o.backend + " bash ci/check.sh)");
    if (*o.c) return check(o.check);
    if (*o.m) return mutants(o.mut);
    if (*o.r) return replay(o.rep);
    if (*o.l) return list(o.list_json);
    if (*o.d) return divergence(o.div);
    if (*o.bn) return bench(o.bo);
    if (*o.v) return verify(o.ver);
    if (*o.vs) return verify_step(o.step);
    if (*o.vl) return verify_lossless(o.lossless);
    if (*o.mg) return merge(o.merge);
    if (*o.f) return frequency(o.freq);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "raceoracle: error: %s\n", e.what());
    return 2;
  }
  return 0;
}

}  // namespace raceoracle::cli

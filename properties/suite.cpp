#include "properties/suite.h"

#include "fixtures/filters.h"
#include "fixtures/reach.h"

#include <fmt/format.h>
#include <rapidcheck/detail/Configuration.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>

#include "io/files.h"
#include "properties/data_dir.h"
#include "properties/rapidcheck_run.h"
#include "io/report_keys.h"

namespace raceoracle::properties {
namespace {

using fixtures::RowKind;
namespace fs = std::filesystem;

fixtures::gen::CaseOptions any_rows() { return {}; }
fixtures::gen::CaseOptions rows_of(std::vector<RowKind> k, std::vector<int> temps = {}) {
  fixtures::gen::CaseOptions o;
  o.kinds = std::move(k);
  o.temperatures = std::move(temps);
  return o;
}

std::vector<fixtures::MatrixEdge> all_edges() {
  std::vector<fixtures::MatrixEdge> e;
  for (int i = 0; i < fixtures::kMatrixEdges; ++i) e.push_back(fixtures::MatrixEdge(i));
  return e;
}
std::vector<fixtures::MatrixRow> all_matrix_rows() {
  std::vector<fixtures::MatrixRow> r;
  for (int i = 0; i < fixtures::kMatrixRows; ++i) r.push_back(fixtures::MatrixRow(i));
  return r;
}
/// Rows x every edge; the out-of-contract cells only when asked.
fixtures::MatrixRequirement crossed(std::vector<fixtures::MatrixRow> rows, bool out_of_contract = false) {
  return {std::move(rows), all_edges(), out_of_contract};
}

/// The built cases of AgreesWithOracle (fixtures/reach.h): the tile counts
/// only for a compiled-in kernel (a sampler has no tiles; rows of up to 2.1
/// million ids would only slow it), the key plateaus only for a subject that
/// draws its noise (under tensor noise they are the near_tie rows the random
/// search and the matrix already hold).
std::vector<fixtures::CaseSpec> reach_cases(const subject::Subject& s) {
  std::vector<fixtures::CaseSpec> out = fixtures::constants_cases();
  for (auto* family : {fixtures::tie_cases, fixtures::far_edge_cases, fixtures::scale_tie_cases})
    for (fixtures::CaseSpec& c : family()) out.push_back(std::move(c));
  if (s.noise_stream())
    for (fixtures::CaseSpec& c : fixtures::key_plateau_cases()) out.push_back(std::move(c));
  if (s.kernel())
    for (fixtures::CaseSpec& c : fixtures::tile_count_cases()) out.push_back(std::move(c));
  return out;
}
std::vector<fixtures::CaseSpec> tie_cases(const subject::Subject&) { return fixtures::tie_cases(); }
std::vector<fixtures::CaseSpec> id_sweep_cases(const subject::Subject&) { return fixtures::id_sweep_cases(); }

std::vector<Law> make_laws() {
  using K = RowKind;
  using T = fixtures::TemperatureIndex;
  using C = fixtures::Cover;
  using R = fixtures::MatrixRow;
  const std::vector<R> every_row = all_matrix_rows();
  const std::vector<R> greedy_rows{R::greedy_t_zero, R::greedy_t_minus_zero, R::greedy_t_negative, R::greedy_t_at_eps};
  std::vector<R> sampling_rows;
  for (R r : every_row)
    if (!fixtures::is_greedy(r)) sampling_rows.push_back(r);
  const std::vector<K> in_contract{K::realistic, K::greedy_ties, K::masked_tiles, K::scattered_inf, K::forced,
                                   K::fully_masked, K::dominating_final, K::near_tie, K::exact_tie, K::noise_edges};
  fixtures::gen::CaseOptions large_stride = rows_of({K::realistic, K::dominating_final, K::greedy_ties});
  large_stride.min_rows = large_stride.max_rows = 3;  // row 2 starts past 2^32 elements: every case has it
  large_stride.production_vocab = false;
  return {
      {.name = "AgreesWithOracle",
       .statement = "every token is the oracle's or inside its ambiguity set",
       .check = agrees_with_oracle,
       .inputs = rows_of(in_contract),
       .must_cover = {C::multi_tile_row, C::vocab_tail, C::whole_masked_tile, C::exact_tie_at_max, C::near_tie,
                      C::t_above_greedy_eps, C::t_below_clamp, C::noise_zero, C::noise_2_pow_minus_24, C::bf16_logits,
                      C::padded_logit_stride, C::distinct_noise_stride, C::final_tile_winner, C::drawn_seed_high_bits,
                      C::drawn_offset_high_bits, C::drawn_largest_e_wins, C::drawn_far_winner, C::eps_moved,
                      C::greedy_eps_moved, C::near_tie_across_tiles_at_scale, C::filter_lure},
       .matrix = crossed(every_row),
       .built = reach_cases},
      {.name = "GreedyIsExact",
       .statement = "greedy rows give the lowest id of the raw max, bit-exact, whatever the noise",
       .check = greedy_is_exact,
       .inputs = rows_of({K::greedy_ties, K::realistic, K::masked_tiles, K::exact_tie},
                         {T::zero, T::greedy_eps, T::negative, T::zero}),
       .must_cover = {C::greedy_tie_within_tile, C::greedy_tie_across_tiles, C::t_is_greedy_eps, C::negative_t},
       .matrix = crossed(greedy_rows),
       .built = tie_cases},
      {.name = "MaskedIdsNeverWin",
       .statement = "a -inf id never wins while any id is unmasked",
       .check = masked_ids_never_win,
       .inputs = rows_of({K::masked_tiles, K::scattered_inf, K::forced}),
       .must_cover = {C::whole_masked_tile, C::noise_zero},
       .matrix = crossed({R::partially_masked, R::masked_whole_tile, R::forced})},
      {.name = "ForcedRowGivesForcedId",
       .statement = "a row with one unmasked id gives it, for every T",
       .check = forced_row_gives_forced_id,
       .inputs = rows_of({K::forced}),
       .must_cover = {C::forced_row, C::forced_id_in_last_tile},
       .matrix = crossed({R::forced}),
       .built = id_sweep_cases},
      {.name = "FullyMaskedRowIsZero",
       .statement = "an all -inf row gives id 0",
       .check = fully_masked_row_is_zero,
       .inputs = rows_of({K::fully_masked, K::masked_tiles}),
       .must_cover = {C::fully_masked_row},
       .matrix = crossed({R::fully_masked}),
       .needs = Needs::masked_row_zero},
      {.name = "TokensInRange",
       .statement = "every token is in [0, V), out-of-contract rows included",
       .check = tokens_in_range,
       .inputs = any_rows(),
       .must_cover = {C::out_of_contract_row, C::vocab_tail, C::vocab_1},
       .matrix = crossed(every_row, true)},
      {.name = "PartialsAreFinite",
       .statement = "stage 1 never writes a NaN key, nor a max other than the tile's largest logit (in contract), nor an "
                    "id outside its tile (any row)",
       .check = partials_are_finite,
       .inputs = rows_of({K::masked_tiles, K::fully_masked, K::scattered_inf, K::realistic}),
       .must_cover = {C::whole_masked_tile, C::fully_masked_row},
       .matrix = crossed({R::partially_masked, R::masked_whole_tile, R::fully_masked, R::sampling_t_ordinary,
                          R::greedy_t_zero},
                         true),
       .needs = Needs::partials},
      {.name = "FusedMatchesBaseline",
       .statement = "fused and baseline agree on the same noise, modulo explained divergence",
       .check = fused_matches_baseline,
       .inputs = rows_of(in_contract),
       .must_cover = {C::multi_tile_row, C::near_tie},
       .matrix = crossed(every_row),
       .case_divisor = 2},
      {.name = "Deterministic",
       .statement = "same inputs give the same tokens across launches and (modulo explained divergence) tile sizes",
       .check = deterministic,
       .inputs = rows_of(in_contract),
       .must_cover = {C::multi_tile_row},
       .matrix = crossed(every_row),
       .case_divisor = 4},
      {.name = "KeyErrorWithinBound",
       .statement = "every stage-1 key lies inside its certified error interval",
       .check = key_error_within_bound,
       .inputs = rows_of({K::realistic, K::near_tie, K::noise_edges, K::dominating_final}),
       .must_cover = {C::multi_tile_row, C::bf16_logits},
       .matrix = crossed(sampling_rows),
       .needs = Needs::partials},
      {.name = "NanIsolation",
       .statement = "a NaN logit acts as a masked id: it changes nothing else",
       .check = nan_isolation,
       .inputs = rows_of({K::nan_logits}),
       .must_cover = {C::nan_logit},
       .matrix = {every_row, {fixtures::MatrixEdge::logit_nan}, true},
       .needs = Needs::nan_as_masked},
      {.name = "SentinelEscapesVisibly",
       .statement = "stage 2 passes an escaped sentinel through (no result clamp)",
       .check = sentinel_escapes_visibly,
       .inputs = rows_of({K::realistic, K::fully_masked}),
       .must_cover = {C::multi_tile_row},
       .needs = Needs::partials},
      {.name = "LargeStrideRows",
       .statement = "rows stored more than 2^32 elements apart are read at the right offsets",
       .check = large_stride_rows,
       .inputs = large_stride,
       .needs = Needs::kernel,
       .case_divisor = 10},
      {.name = "RowsAreIndependent",
       .statement = "a row's token, its filters with it, does not depend on the other rows of the batch or their order",
       .check = rows_are_independent,
       .inputs = [&] {
         fixtures::gen::CaseOptions o = rows_of(in_contract);
         o.min_rows = o.max_rows = 4;  // every case has rows to reverse
         o.production_vocab = false;
         return o;
       }(),
       .needs = Needs::filters,
       .case_divisor = 4},
      {.name = "BatchmateInvariance",
       .statement = "a row's token alone and among batchmates (batches of 2 to 257 rows, first, last and between) is "
                    "the same (batch_invariance = exact), or another only where both are explained",
       .check = batchmate_invariance,
       .inputs = [&] {
         std::vector<K> kinds = in_contract;  // poisoned batchmates too: a row's fault must not reach the others
         kinds.push_back(K::nan_logits);
         kinds.push_back(K::out_of_contract);
         // Near ties weighted four times: where a path chosen by the batch may pick another id within the
         // contract, which only an exact promise forbids.
         kinds.insert(kinds.end(), 3, K::near_tie);
         fixtures::gen::CaseOptions o = rows_of(kinds);
         o.min_rows = o.max_rows = 5;
         o.production_vocab = false;
         return o;
       }(),
       .case_divisor = 25},
  };
}

/// What a reproduce string is keyed by: the law and the kernel; for a
/// sampler in another process, the law alone (renaming the sampler's function
/// keeps its replay strings working).
std::string property_id(const Law& p, const subject::Subject& k) {
  return p.name + "/" + (k.kernel() ? k.name() : std::string("sampler"));
}

}  // namespace

std::string reproduce_problem(const Law& p, const subject::Subject& k, const std::string& reproduce) {
  std::unordered_map<std::string, rc::detail::Reproduce> parsed;
  try {
    parsed = rc::detail::configFromString("reproduce=" + reproduce).reproduce;
  } catch (const std::exception& e) {
    return std::string("malformed reproduce string (") + e.what() + "): give the string a failure printed, whole";
  }
  const std::string id = property_id(p, k);
  if (parsed.count(id)) return {};
  std::string for_;
  for (const auto& [key, value] : parsed) for_ += (for_.empty() ? "" : ", ") + key;
  return "the reproduce string is for " + for_ + ", not " + id + " (law/kernel; 'sampler' for any sampler)";
}

const std::vector<Law>& laws() {
  static const std::vector<Law> p = make_laws();
  return p;
}

const char* needs_note(Needs n) {
  switch (n) {
    case Needs::tokens: return "";
    case Needs::kernel: return "lays out device memory itself: compiled-in kernels only";
    case Needs::partials: return "reads stage-1 partials: fused kernels only";
    case Needs::nan_as_masked: return "the sampler declares rows with a NaN logit out of its contract";
    case Needs::filters: return "applies no row filters";
    case Needs::masked_row_zero: return "the sampler declares that a fully masked row may give any id";
  }
  return "?";
}

bool Law::applies_to(const subject::Subject& s) const {
  switch (needs) {
    case Needs::tokens: return true;
    case Needs::kernel: return s.kernel() != nullptr;
    case Needs::partials: return s.kernel() && s.kernel()->has_partials();
    case Needs::nan_as_masked: return s.contract().conventions.nan_is_masked;
    case Needs::filters: return s.contract().filters.applied;
    case Needs::masked_row_zero: return s.contract().conventions.fully_masked == race::FullyMasked::zero;
  }
  return false;
}

std::vector<fixtures::Cover> Law::required_coverage(const subject::Subject& s) const {
  std::vector<fixtures::Cover> out;
  for (const fixtures::Cover c : must_cover)
    if ((s.kernel() || !fixtures::describes_memory_layout(c)) && (s.contract().filters.applied || !fixtures::needs_filters(c)) &&
        fixtures::applies(c, subject::noise_of(s), subject::noise_stream_of(s), s.contract().conventions))
      out.push_back(c);
  return out;
}

const Law* find_law(const std::string& name) {
  for (const Law& p : laws())
    if (p.name == name) return &p;
  return nullptr;
}

std::function<bool(const Law&)> law_selection(const std::vector<std::string>& names) {
  for (const std::string& name : names)
    if (!find_law(name)) throw std::invalid_argument("unknown law '" + name + "'");
  return [names](const Law& p) { return names.empty() || std::find(names.begin(), names.end(), p.name) != names.end(); };
}

const char* to_string(LawResult::Verdict v) {
  switch (v) {
    case LawResult::Verdict::passed: return "passed";
    case LawResult::Verdict::failed: return "FAILED";
    case LawResult::Verdict::gave_up: return "GAVE UP";
    case LawResult::Verdict::error: return "ERROR";
  }
  return "?";
}

std::string LawResult::summary() const {
  std::string s = fmt::format("{} after {} cases in {:.1f} s", to_string(verdict), cases, seconds);
  if (!uncovered.empty()) {
    s += fmt::format("; input classes never met: {}", fmt::join(uncovered, ", "));
    if (const int usual = RunSettings{}.cases; cases < usual)
      s += fmt::format(" (after {} cases, fewer than the {} the tests require every class at: raise --cases, or "
                       "--random-only to drop the matrix's cells)",
                       cases, usual);
  }
  return s;
}

std::string run_case(const Law& p, const subject::Subject& k, const fixtures::CaseSpec& spec) {
  const subject::Batch b = fixtures::materialize_for(spec, k);
  return p.check(LawContext{k, b, fixtures::config_of(spec)});
}

namespace {
/// The corpus of one directory, read once per process.
const std::vector<CorpusEntry>& cached_corpus(const std::string& dir) {
  static std::mutex m;
  static std::map<std::string, std::vector<CorpusEntry>> cache;
  std::lock_guard lock(m);
  auto it = cache.find(dir);
  if (it == cache.end()) it = cache.emplace(dir, load_corpus(dir)).first;
  return it->second;
}
}  // namespace

fixtures::CaseSpec fewest_failing_rows(const Law& p, const subject::Subject& k, fixtures::CaseSpec spec) {
  // ddmin (Zeller) over the row list, order kept: try each of n chunks alone,
  // then each complement; a failing one becomes the case; else n doubles.
  auto fails = [&](const fixtures::CaseSpec& c) {
    const bool f = !run_case(p, k, c).empty();
    return k.take_breakdown().empty() && f;
  };
  std::size_t n = 2;
  while (spec.rows.size() >= 2) {
    const std::size_t size = spec.rows.size(), chunk = (size + n - 1) / n;
    bool reduced = false;
    for (int complement = 0; complement < 2 && !reduced; ++complement)
      for (std::size_t at = 0; at < size && !reduced; at += chunk) {
        fixtures::CaseSpec c = spec;
        c.rows.clear();
        for (std::size_t i = 0; i < size; ++i)
          if ((i >= at && i < at + chunk) != bool(complement)) c.rows.push_back(spec.rows[i]);
        if (c.rows.empty() || c.rows.size() == size || !fails(c)) continue;
        spec = std::move(c);
        n = complement ? std::max<std::size_t>(n - 1, 2) : 2;
        reduced = true;
      }
    if (!reduced) {
      if (n >= size) break;
      n = std::min(2 * n, size);
    }
  }
  return spec;
}

LawResult run_law(const Law& p, const subject::Subject& k, const RunSettings& s) {
  const auto start = std::chrono::steady_clock::now();
  LawResult out;
  // A saved or built case that failed (or broke the subject down): the result, replayable by its case.
  auto failed_case = [&](const fixtures::CaseSpec& spec, const std::string& where, const std::string& failure,
                         const std::string& breakdown) {
    out.verdict = breakdown.empty() ? LawResult::Verdict::failed : LawResult::Verdict::error;
    out.counterexample = fmt::format("{} on {} ({})\n  case: {}\n  {}", p.name, k.name(), where, fixtures::describe(spec, k.contract().conventions),
                                     breakdown.empty() ? failure : breakdown);
    out.case_json = fixtures::to_json(spec);
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
  };
  // Failing cases found once are replayed first (SPEC: regression corpus).
  for (const std::string& dir : {s.corpus_dir, s.subject_corpus_dir}) {
    if (dir.empty() || !s.reproduce.empty()) continue;
    for (const CorpusEntry& e : cached_corpus(dir)) {
      if (e.law != p.name) continue;
      ++out.cases;
      const std::string failure = run_case(p, k, e.spec);
      const std::string breakdown = k.take_breakdown();
      if (!failure.empty()) return failed_case(e.spec, "saved corpus case: " + e.note, failure, breakdown);
    }
  }
  // The coverage matrix, by construction: one case per (edge, dtype); then the law's other built cases.
  fixtures::CellSet cells;
  fixtures::CoverSet covered;  // the classes met, by built cases and by the random search
  if (s.reproduce.empty() && s.matrix) {
    std::vector<std::pair<fixtures::CaseSpec, const char*>> built;
    for (fixtures::CaseSpec& spec : fixtures::matrix_cases(p.matrix)) built.emplace_back(std::move(spec), "coverage-matrix case");
    // A subject's own greedy rule: rows at its boundary (docs/CONVENTIONS.md).
    if (k.contract().conventions.greedy != race::GreedyRule::definition)
      for (fixtures::CaseSpec& spec : fixtures::boundary_cases()) built.emplace_back(std::move(spec), "declared-boundary case");
    // A subject that filters: rows at every filter boundary (SPEC §9).
    if (k.contract().filters.applied)
      for (fixtures::CaseSpec& spec : fixtures::filter_cases()) built.emplace_back(std::move(spec), "filter-boundary case");
    if (p.built)
      for (fixtures::CaseSpec& spec : p.built(k)) built.emplace_back(std::move(spec), "built case");
    for (const auto& [spec, what] : built) {
      const subject::Batch b = fixtures::materialize_for(spec, k);
      cells |= fixtures::cells_met(b, fixtures::config_of(spec).block_v);
      covered |= fixtures::coverage(b, fixtures::config_of(spec).block_v);
      ++out.cases;
      const std::string failure = p.check(LawContext{k, b, fixtures::config_of(spec)});
      const std::string breakdown = k.take_breakdown();
      if (!breakdown.empty()) return failed_case(spec, what, failure, breakdown);
      if (!failure.empty()) {
        const fixtures::CaseSpec fewest = fewest_failing_rows(p, k, spec);
        return failed_case(fewest, fmt::format("{}, {} of its {} rows", what, fewest.rows.size(), spec.rows.size()),
                           run_case(p, k, fewest), k.take_breakdown());
      }
    }
  }
  std::string last_failure, last_json, breakdown;
  fixtures::gen::CaseOptions inputs = p.inputs;
  inputs.filter_boundaries = k.contract().filters.applied;
  const auto gen = fixtures::gen::batch(inputs);
  int cases = 0;
  // A shrink past its budget: every later candidate passes unjudged, so
  // RapidCheck ends with the smallest failing case it has.
  std::optional<std::chrono::steady_clock::time_point> first_failure;
  bool shrink_stopped = false;
  auto testable = [&] {
    const fixtures::CaseSpec spec = *gen;
    if (!breakdown.empty()) return;  // the subject broke down: the rest is not judged (verdict error below)
    if (first_failure && std::chrono::duration<double>(std::chrono::steady_clock::now() - *first_failure).count() >
                             s.shrink_seconds) {
      shrink_stopped = true;
      return;
    }
    const subject::Batch b = fixtures::materialize_for(spec, k);
    const kernels::FusedConfig cfg = fixtures::config_of(spec);
    covered |= fixtures::coverage(b, cfg.block_v);
    cells |= fixtures::cells_met(b, cfg.block_v);
    ++cases;
    const std::string failure = p.check(LawContext{k, b, cfg});
    if (std::string why = k.take_breakdown(); !why.empty()) {
      breakdown = fmt::format("{} on {}\n  case: {}\n  {}", p.name, k.name(), fixtures::describe(spec, k.contract().conventions), why);
      last_json = fixtures::to_json(spec);
      return;
    }
    if (!failure.empty()) {
      if (!first_failure) first_failure = std::chrono::steady_clock::now();
      last_failure = fmt::format("{} on {}\n  case: {}\n  {}", p.name, k.name(), fixtures::describe(spec, k.contract().conventions), failure);
      last_json = fixtures::to_json(spec);
      RC_FAIL(failure);
    }
  };
  rc::detail::TestParams params;
  params.seed = s.seed;
  params.maxSuccess = std::max(1, s.cases / p.case_divisor);
  params.maxSize = 100;  // Debian's RapidCheck: sizes above 100 are undefined behaviour
  rc::detail::TestMetadata meta{property_id(p, k), p.statement};
  std::unordered_map<std::string, rc::detail::Reproduce> reproduce;
  if (!s.reproduce.empty()) {
    if (const std::string problem = reproduce_problem(p, k, s.reproduce); !problem.empty()) {
      out.verdict = LawResult::Verdict::error;
      out.counterexample = problem;
      return out;
    }
    reproduce = rc::detail::configFromString("reproduce=" + s.reproduce).reproduce;
  }
  QuietListener listener;
  const rc::detail::TestResult result =
      rc::detail::checkProperty(rc::detail::toProperty(testable), meta, params, listener, reproduce);
  out.cases += cases;
  rc::detail::FailureResult failure;
  if (!breakdown.empty()) {
    out.verdict = LawResult::Verdict::error;
    out.counterexample = breakdown;
    out.case_json = last_json;
  } else if (result.match(failure)) {
    out.verdict = LawResult::Verdict::failed;
    out.counterexample = last_failure.empty() ? failure.description : last_failure;
    if (shrink_stopped)
      out.counterexample += fmt::format("\n  (shrinking stopped after {:g} s: this case may not be the smallest; "
                                        "--shrink-seconds raises the limit)", s.shrink_seconds);
    out.case_json = last_json;
    rc::detail::Configuration cfg;
    cfg.reproduce[meta.id] = failure.reproduce;
    const std::string text = rc::detail::configToMinimalString(cfg);
    const auto at = text.find("reproduce=");
    out.reproduce = at == std::string::npos ? text : text.substr(at + 10);
  } else if (gave_up_or_error(result, out)) {
  } else if (s.reproduce.empty()) {
    const auto require = [&out](bool met, std::string name) {
      if (!met) out.uncovered.push_back(name);
      out.required.push_back(std::move(name));
    };
    for (const fixtures::Cover c : p.required_coverage(k)) require(fixtures::has(covered, c), fixtures::to_string(c));
    for (const fixtures::MatrixCell& c :
         fixtures::required_cells(s.matrix ? p.matrix : fixtures::MatrixRequirement{}, subject::noise_of(k)))
      require(cells.test(fixtures::index(c)), c.str());
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

std::string replay_command(const Law& p, const subject::Subject& k, const LawResult& r) {
  if (r.reproduce.empty() && !r.case_json.empty())
    return fmt::format("raceoracle replay --law {} {} --case '{}'", p.name, k.replay_args(), r.case_json);
  return fmt::format("raceoracle replay --law {} {} --reproduce '{}'", p.name, k.replay_args(), r.reproduce);
}

std::string default_corpus_dir() { return data_dir() + "/properties/corpus"; }

std::vector<CorpusEntry> load_corpus(const std::string& dir) {
  std::vector<CorpusEntry> out;
  if (!fs::is_directory(dir)) return out;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  // A damaged entry refuses the run, with the command that repairs it: an
  // entry is a regression test, so skipping it could pass a run that it
  // would fail. Entries are written whole or not at all (io::AtomicFile), so
  // only a hand or a disk can damage one.
  for (const auto& f : files) {
    try {
      const auto j = nlohmann::json::parse(io::read_file(f.string(), io::kSmallFileLimit));
      const std::string law = io::law_of(j);
      if (law.empty()) throw std::runtime_error("it names no law");
      out.push_back({law, j.value("note", ""), fixtures::case_from_json(j.at("case").dump())});
    } catch (const std::exception& e) {
      throw std::runtime_error("corpus file " + f.string() + ": " + e.what() + " (restore it with `git checkout -- " +
                               f.string() + "`, or remove it)");
    }
  }
  return out;
}

std::string save_to_corpus(const std::string& dir, const std::string& property, const std::string& note,
                           const std::string& case_json) {
  fs::create_directories(dir);
  const std::size_t h = std::hash<std::string>{}(property + case_json);
  const fs::path path = fs::path(dir) / fmt::format("{}-{:016x}.json", property, h);
  nlohmann::json j;
  j[io::kLawKey] = property;
  j["note"] = note;
  j["case"] = nlohmann::json::parse(case_json);
  io::write_file(path.string(), j.dump(2) + "\n");
  return path.string();
}

}  // namespace raceoracle::properties

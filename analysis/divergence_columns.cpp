// The divergence study's results as tables: every column of divergence.csv,
// divergence.json and sampler.csv/.json, once (docs/DIVERGENCE.md says what
// each means).
#include <cmath>

#include "analysis/divergence.h"

namespace raceoracle::analysis {
namespace {

using io::Cell;

Cell if_ran(const DivergenceRow& r, Cell c) { return r.kernels_ran ? c : Cell{}; }

Cell if_apart(const DivergenceRow& r, Cell c) { return r.apart_measured ? c : Cell{}; }

Cell if_base_apart(const DivergenceRow& r, Cell c) { return r.base_apart_measured ? c : Cell{}; }

std::int64_t ambiguous_rows(const DivergenceRow& r) { return std::llround(r.ambiguous_fraction * double(r.rows)); }

}  // namespace

const std::vector<io::Column<DivergenceRow>>& divergence_columns() {
  static const std::vector<io::Column<DivergenceRow>> columns{
    {{"temperature", "T", "{:g}", "{}"}, [](const DivergenceRow& r) -> Cell { return r.temperature; }},
    {{"order"}, [](const DivergenceRow& r) -> Cell { return race::to_string(r.order); }},
    {{"rows"}, [](const DivergenceRow& r) -> Cell { return r.rows; }},
    {{"keys"}, [](const DivergenceRow& r) -> Cell { return r.keys; }},
    {{"max_actual_rel_error", "max error", "{:.3e}", "{:.6e}"}, [](const DivergenceRow& r) -> Cell { return r.max_actual; }},
    {{"rms_actual_rel_error", "rms error", "{:.3e}", "{:.6e}"}, [](const DivergenceRow& r) -> Cell { return r.rms_actual; }},
    {{"off_max_keys", "off max"}, [](const DivergenceRow& r) -> Cell { return r.off_max_keys; }},
    {{"rms_off_max_rel_error", "rms off", "{:.3e}", "{:.6e}"}, [](const DivergenceRow& r) -> Cell { return r.rms_off_max; }},
    {{"max_bound", "max bound", "{:.3e}", "{:.6e}"}, [](const DivergenceRow& r) -> Cell { return r.max_bound; }},
    {{"worst_ratio", "ratio", "{:.3f}", "{:.4f}"}, [](const DivergenceRow& r) -> Cell { return r.worst_ratio; }},
    {{"median_winner_bound", "win bound", "{:.3e}", "{:.6e}"},
     [](const DivergenceRow& r) -> Cell { return r.median_full_bound; }},
    {{"kernel_stage1_ratio", "kernel s1", "{:.3f}", "{:.4f}"},
     [](const DivergenceRow& r) { return if_ran(r, r.kernel_stage1_ratio); }},
    {{"fused_explained", "fused expl"}, [](const DivergenceRow& r) { return if_ran(r, r.explained); }},
    {{"fused_unexplained", "fused UNEX"}, [](const DivergenceRow& r) { return if_ran(r, r.unexplained); }},
    {{"baseline_explained", "base expl"}, [](const DivergenceRow& r) { return if_ran(r, r.base_explained); }},
    {{"baseline_unexplained", "base UNEX"}, [](const DivergenceRow& r) { return if_ran(r, r.base_unexplained); }},
    {{"rate_exp_ulp", "exp ulp", "{:g}", "{}"}, [](const DivergenceRow& r) -> Cell { return r.rate_contract.exp_ulp; }},
    {{"rate_div_ulp", "div ulp", "{:g}", "{}"}, [](const DivergenceRow& r) -> Cell { return r.rate_contract.div_ulp; }},
    {{"rate", "estimate", "{:.3g}", "{:.6e}"}, [](const DivergenceRow& r) -> Cell { return r.rate.rate; }},
    {{"rate_lo", "95% lo", "{:.3g}", "{:.6e}"}, [](const DivergenceRow& r) -> Cell { return r.rate.lo; }},
    {{"rate_hi", "95% hi", "{:.3g}", "{:.6e}"}, [](const DivergenceRow& r) -> Cell { return r.rate.hi; }},
    {{"ambiguous_fraction", "", "{:.3g}", "{:.6e}"}, [](const DivergenceRow& r) -> Cell { return r.ambiguous_fraction; }},
    {{"ambiguous_rows", "counted"}, [](const DivergenceRow& r) -> Cell { return ambiguous_rows(r); }},
    {{"count_agrees", "count agrees"},
     [](const DivergenceRow& r) -> Cell {
       if (r.rows == 0) return {};
       return r.rate.agrees_with_count(ambiguous_rows(r)) ? "yes" : "NO";
     }},
    {{"count_lo", "", "{:.3g}", "{:.6e}"},
     [](const DivergenceRow& r) -> Cell { return counted_interval(ambiguous_rows(r), r.rows).lo; }},
    {{"count_hi", "", "{:.3g}", "{:.6e}"},
     [](const DivergenceRow& r) -> Cell { return counted_interval(ambiguous_rows(r), r.rows).hi; }},
    {{"rate_window", "window", "{:.3g}", "{:.4g}"}, [](const DivergenceRow& r) -> Cell { return r.rate.window; }},
    {{"rate_in_window", "in window"}, [](const DivergenceRow& r) -> Cell { return r.rate.in_window; }},
    {{"rate_flatness_p", "flat p", "{:.3f}", "{:.4f}"}, [](const DivergenceRow& r) -> Cell { return r.rate.flatness_p; }},
    {{"rate_mean_threshold", "", "{:.3e}", "{:.6e}"}, [](const DivergenceRow& r) -> Cell { return r.rate.mean_threshold; }},
    {{"apart_rate", "predicted", "{:.3g}", "{:.6e}"}, [](const DivergenceRow& r) { return if_apart(r, r.apart.rate); }},
    {{"apart_lo", "95% lo", "{:.3g}", "{:.6e}"}, [](const DivergenceRow& r) { return if_apart(r, r.apart.lo); }},
    {{"apart_hi", "95% hi", "{:.3g}", "{:.6e}"}, [](const DivergenceRow& r) { return if_apart(r, r.apart.hi); }},
    {{"apart_in_window", "in window"}, [](const DivergenceRow& r) { return if_apart(r, r.apart.in_window); }},
    {{"apart_mean_width", "mean width", "{:.3g}", "{:.6e}"},
     [](const DivergenceRow& r) { return if_apart(r, r.apart.mean_threshold); }},
    {{"apart_counted", "counted"}, [](const DivergenceRow& r) { return if_apart(r, r.apart_counted); }},
    {{"apart_count_agrees", "count agrees"},
     [](const DivergenceRow& r) { return if_apart(r, r.apart.agrees_with_count(r.apart_counted) ? "yes" : "NO"); }},
    {{"baseline_apart_rate", "predicted", "{:.3g}", "{:.6e}"},
     [](const DivergenceRow& r) { return if_base_apart(r, r.base_apart.rate); }},
    {{"baseline_apart_lo", "95% lo", "{:.3g}", "{:.6e}"}, [](const DivergenceRow& r) { return if_base_apart(r, r.base_apart.lo); }},
    {{"baseline_apart_hi", "95% hi", "{:.3g}", "{:.6e}"}, [](const DivergenceRow& r) { return if_base_apart(r, r.base_apart.hi); }},
    {{"baseline_apart_in_window", "in window"},
     [](const DivergenceRow& r) { return if_base_apart(r, r.base_apart.in_window); }},
    {{"baseline_apart_mean_width", "mean width", "{:.3g}", "{:.6e}"},
     [](const DivergenceRow& r) { return if_base_apart(r, r.base_apart.mean_threshold); }},
    {{"baseline_apart_counted", "counted"}, [](const DivergenceRow& r) { return if_base_apart(r, r.base_apart_counted); }},
    {{"baseline_apart_count_agrees", "count agrees"},
     [](const DivergenceRow& r) {
       return if_base_apart(r, r.base_apart.agrees_with_count(r.base_apart_counted) ? "yes" : "NO");
     }},
  };
  return columns;
}

const std::vector<io::Column<SamplerDivergence>>& sampler_columns() {
  static const std::vector<io::Column<SamplerDivergence>> columns{
    {{"temperature", "T", "{:g}", "{}"}, [](const SamplerDivergence& d) -> Cell { return d.temperature; }},
    {{"rows"}, [](const SamplerDivergence& d) -> Cell { return d.rows; }},
    {{"differ"}, [](const SamplerDivergence& d) -> Cell { return d.differ; }},
    {{"explained"}, [](const SamplerDivergence& d) -> Cell { return d.explained; }},
    {{"unexplained", "UNEXPLAINED"}, [](const SamplerDivergence& d) -> Cell { return d.unexplained; }},
    {{"ambiguous_fraction", "ambiguous", "{:.4f}", "{:.6f}"},
     [](const SamplerDivergence& d) -> Cell { return d.ambiguous_fraction; }},
  };
  return columns;
}

}  // namespace raceoracle::analysis

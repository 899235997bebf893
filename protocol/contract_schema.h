#pragma once
/// The schema of what a sampler states about itself: one row per field of
/// the contract, the conventions, the filters, the drawn-noise stream and the
/// protocol's own hello, with its kind, its allowed words (in the order of
/// the enum it selects) and a one-line doc. Parsing (contract_fields.cpp)
/// reads the words from here, `raceoracle list --json` exports the table, and
/// the Python package's words are that export (python/raceoracle/_schema.json,
/// checked equal to the binary's by CTest `Schema.PythonPackageMatchesTheBinary`).
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "race/definition.h"

namespace raceoracle::protocol {

/// Each word field's words, in its enum's order (race/definition.h, race/filters.h).
namespace words {
inline constexpr const char* normalise[] = {"none", "sum"};
inline constexpr const char* key_domain[] = {"ratio", "log"};
inline constexpr const char* scale_op[] = {"multiply", "divide"};
inline constexpr const char* key_op[] = {"divide", "reciprocal"};
inline constexpr const char* dtype[] = {"f32", "bf16"};  // race::Dtype's order
inline constexpr const char* greedy_rule[] = {"definition", "zero", "below"};
inline constexpr const char* eps_rule[] = {"request", "none", "fixed"};
inline constexpr const char* nan_logits[] = {"masked", "out_of_contract"};
inline constexpr const char* tie_rule[] = {"lowest_id", "highest_id"};
inline constexpr const char* batch_invariance[] = {"within_contract", "exact"};
inline constexpr const char* fully_masked[] = {"zero", "any"};
inline constexpr const char* filters[] = {"none", "top_k,top_p,min_p"};
inline constexpr const char* top_k_ties[] = {"keep_all", "exactly_k"};
inline constexpr const char* top_p_mass[] = {"top_k_first", "joint"};
inline constexpr const char* filter_ties[] = {"lowest_id", "any"};
inline constexpr const char* stream_layout[] = {"tensor", "rows"};
inline constexpr const char* randomness[] = {"given", "own"};
inline constexpr const char* step[] = {"sample", "verify"};
inline constexpr const char* uniform_compare[] = {"f64", "f32"};
inline constexpr const char* inputs[] = {"kept", "consumed"};
}  // namespace words

/// What a field holds: one of its words; a decimal number; a whole number;
/// the name of a noise stream (race::kStreams).
enum class FieldKind { word, number, count, stream_name };
inline constexpr const char* kFieldKindNames[] = {"word", "number", "count", "stream_name"};
/// Where a field belongs: the numerics contract and conventions
/// (parse_contract), the drawn-noise stream (parse_stream), the hello alone.
enum class FieldGroup { contract, stream, hello };
inline constexpr const char* kFieldGroupNames[] = {"contract", "stream", "hello"};

/// The index of `w` among `words` (its enum value); -1 if it is none of them.
constexpr int word_index(std::span<const char* const> words, std::string_view w) {
  for (std::size_t i = 0; i < words.size(); ++i)
    if (w == words[i]) return int(i);
  return -1;
}

struct SchemaField {
  const char* name;
  FieldKind kind;
  FieldGroup group;
  std::span<const char* const> words;  ///< the allowed words of a word field, the first the default
  const char* doc;
};

inline constexpr SchemaField kSchema[] = {
    {"scaling_order", FieldKind::word, FieldGroup::contract, race::kScalingOrderNames, "x * (1/t) after the row max (post) or before it (pre)"},
    {"exp_ulp", FieldKind::number, FieldGroup::contract, {}, "ulps of the sampler's exp (and of its rescale)"},
    {"div_ulp", FieldKind::number, FieldGroup::contract, {}, "ulps of its division"},
    {"noise_ulp", FieldKind::number, FieldGroup::contract, {}, "drawn noise: its E against the oracle's, in ulps"},
    {"stages", FieldKind::count, FieldGroup::contract, {}, "2: a fused sampler's rescale; 1: unfused"},
    {"rescales", FieldKind::count, FieldGroup::contract, {}, "how many times a key is rescaled (in place of stages)"},
    {"online_ids", FieldKind::count, FieldGroup::contract, {}, "an online max: one more rescale per that many ids"},
    {"normalise", FieldKind::word, FieldGroup::contract, words::normalise, "keys divided by the softmax sum (sum) or not"},
    {"key_domain", FieldKind::word, FieldGroup::contract, words::key_domain, "p / (E + eps) (ratio) or x / t - log(E + eps) (log)"},
    {"log_ulp", FieldKind::number, FieldGroup::contract, {}, "ulps of its log, in the log domain"},
    {"scale_op", FieldKind::word, FieldGroup::contract, words::scale_op, "x * (1/t) or x / t"},
    {"key_op", FieldKind::word, FieldGroup::contract, words::key_op, "w / (E + eps) or w * (1 / (E + eps))"},
    {"key_dtype", FieldKind::word, FieldGroup::contract, words::dtype, "the dtype keys are compared in"},
    {"greedy_rule", FieldKind::word, FieldGroup::contract, words::greedy_rule, "greedy when T <= greedy_eps, T == 0, or T < greedy_below"},
    {"greedy_below", FieldKind::number, FieldGroup::contract, {}, "the threshold of greedy_rule = below"},
    {"eps_rule", FieldKind::word, FieldGroup::contract, words::eps_rule, "the request's eps, none (p / E), or eps_fixed of its own"},
    {"eps_fixed", FieldKind::number, FieldGroup::contract, {}, "the eps of eps_rule = fixed"},
    {"nan_logits", FieldKind::word, FieldGroup::contract, words::nan_logits, "a NaN logit acts as a masked id, or its row is out of contract"},
    {"tie_rule", FieldKind::word, FieldGroup::contract, words::tie_rule,
     "exact ties (equal maxima, equal keys, a filter boundary) go to the lowest id (SPEC §1) or the highest"},
    {"filters", FieldKind::word, FieldGroup::contract, words::filters, "the sampler applies each row's top-k, top-p and min-p (SPEC §9)"},
    {"top_k_ties", FieldKind::word, FieldGroup::contract, words::top_k_ties, "every id tied at the k-th value kept, or exactly k"},
    {"top_p_mass", FieldKind::word, FieldGroup::contract, words::top_p_mass, "top-p measured after top-k renormalises, or on the row's mass"},
    {"filter_ties", FieldKind::word, FieldGroup::contract, words::filter_ties, "ties at a filter boundary taken lowest id first, or in any order"},
    {"filter_sum_depth", FieldKind::count, FieldGroup::contract, {}, "additions on any sum's path (0: V)"},
    {"fully_masked", FieldKind::word, FieldGroup::contract, words::fully_masked,
     "a row with no unmasked id gives id 0 (SPEC §1), or any id in [0, V)"},
    {"batch_invariance", FieldKind::word, FieldGroup::contract, words::batch_invariance,
     "a row's token among batchmates: its own but where the contract allows another (within_contract), or bitwise its own"},
    {"noise_stream", FieldKind::stream_name, FieldGroup::stream, {}, "the stream the sampler draws its own noise from (docs/NOISE_STREAMS.md)"},
    {"stream_layout", FieldKind::word, FieldGroup::stream, words::stream_layout, "torch: one draw over the batch (tensor) or a generator per row"},
    {"stream_dtype", FieldKind::word, FieldGroup::stream, words::dtype, "the dtype E is drawn into"},
    {"stream_sm_count", FieldKind::count, FieldGroup::stream, {}, "torch's grid: the device's multiprocessors (default 132)"},
    {"stream_threads_per_sm", FieldKind::count, FieldGroup::stream, {}, "torch's grid: threads per multiprocessor (default 2048)"},
    {"stream_version", FieldKind::count, FieldGroup::stream, {}, "the release of the library followed (default: the newest raceoracle replays)"},
    {"randomness", FieldKind::word, FieldGroup::hello, words::randomness, "noise given by raceoracle, or the sampler's own RNG (judged by frequency)"},
    {"step", FieldKind::word, FieldGroup::hello, words::step, "a sampler, or a speculative-decoding verify step (SPEC §11)"},
    {"uniform_compare", FieldKind::word, FieldGroup::hello, words::uniform_compare, "the verify step compares its ratio with u in f64 or f32"},
    {"inputs", FieldKind::word, FieldGroup::hello, words::inputs,
     "the arrays handed to the sampler are left as they were (kept: the Python package checks after each call), or it may overwrite them"},
};

/// The row of `name`; nullptr for a name the schema has not.
constexpr const SchemaField* schema_field(std::string_view name) {
  for (const SchemaField& f : kSchema)
    if (name == f.name) return &f;
  return nullptr;
}

/// The names of the fields of `group`, in the schema's order.
inline std::vector<std::string> schema_names(FieldGroup group) {
  std::vector<std::string> out;
  for (const SchemaField& f : kSchema)
    if (f.group == group) out.push_back(f.name);
  return out;
}

}  // namespace raceoracle::protocol

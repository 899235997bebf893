#include "protocol/contract_fields.h"

#include "oracle/noise_streams.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace raceoracle::protocol {
namespace {

double parse_double(const std::string& key, const std::string& text) {
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    if (used != text.size()) throw std::invalid_argument("trailing text");
    return v;
  } catch (const std::exception&) {
    throw std::invalid_argument(fmt::format("'{}' = '{}' is not a decimal number", key, text));
  }
}


double ulp_field(const Fields& f, const std::string& key, double fallback) {
  auto it = f.find(key);
  if (it == f.end()) return fallback;
  const double v = parse_double(key, it->second);
  if (!(v >= 0 && v <= kMaxUlp))
    throw std::invalid_argument(fmt::format("'{}' = '{}': ulps must be in [0, {}]", key, it->second, kMaxUlp));
  return v;
}

}  // namespace

const char* override_flag(const std::string& field) {
  for (const OverridableTerm& t : kOverridableTerms)
    if (field == t.field) return t.flag;
  throw std::invalid_argument("'" + field + "' is not a contract term the command line overrides");
}

Fields to_fields(const ContractOverrides& o) {
  Fields f;
  if (o.scaling_order) f["scaling_order"] = oracle::to_string(*o.scaling_order);
  if (o.exp_ulp) f["exp_ulp"] = fmt::format("{}", *o.exp_ulp);  // shortest form: reads back exactly
  if (o.div_ulp) f["div_ulp"] = fmt::format("{}", *o.div_ulp);
  if (o.stages) f["stages"] = std::to_string(*o.stages);
  if (o.rescales) f["rescales"] = std::to_string(*o.rescales);
  if (o.normalises) f["normalise"] = words::normalise[*o.normalises];
  if (o.key_domain) f["key_domain"] = words::key_domain[int(*o.key_domain)];
  if (o.key_bf16) f["key_dtype"] = words::dtype[*o.key_bf16];
  return f;
}

ContractOverrides overrides_from_fields(const Fields& f) {
  for (const auto& [key, value] : f) override_flag(key);  // refuses a term the command line does not override
  const oracle::NumericsContract c = parse_contract(f);   // refuses a malformed value, naming it
  ContractOverrides o;
  if (f.count("scaling_order")) o.scaling_order = c.order;
  if (f.count("exp_ulp")) o.exp_ulp = c.exp_ulp;
  if (f.count("div_ulp")) o.div_ulp = c.div_ulp;
  if (f.count("stages")) o.stages = c.rescales > 0 ? 2 : 1;
  if (f.count("rescales")) o.rescales = c.rescales;
  if (f.count("normalise")) o.normalises = c.normalises;
  if (f.count("key_domain")) o.key_domain = c.domain;
  if (f.count("key_dtype")) o.key_bf16 = c.key_bf16;
  return o;
}

oracle::NumericsContract apply(const ContractOverrides& o, const oracle::NumericsContract& c) {
  return parse_contract(to_fields(o), c);
}

std::string override_flags(const ContractOverrides& o) {
  std::string s;
  for (const auto& [field, value] : to_fields(o)) s += std::string(" ") + override_flag(field) + " " + value;
  return s;
}

oracle::NumericsContract default_sampler_contract() {
  oracle::NumericsContract c;  // the definition's defaults (race/definition.h), but for one term:
  c.div_ulp = 2.0;             // a sampler may divide with __fdividef (2 ulp), not IEEE '/'
  return c;
}

namespace {

/// A word field of the schema (contract_schema.h): the index of its word, or `fallback` when absent.
int word_field(const Fields& f, const std::string& key, int fallback) {
  const SchemaField* field = schema_field(key);
  if (!field || field->kind != FieldKind::word) throw std::logic_error("word_field: '" + key + "' is no word field of the schema");
  auto it = f.find(key);
  if (it == f.end()) return fallback;
  if (const int i = word_index(field->words, it->second); i >= 0) return i;
  std::string allowed;
  for (const char* w : field->words) allowed += (allowed.empty() ? "'" : ", '") + std::string(w) + "'";
  throw std::invalid_argument(fmt::format("'{}' = '{}': must be one of {}", key, it->second, allowed));
}

/// A count field: a whole number in [0, kMaxCount], or `fallback` when absent.
int count_field(const Fields& f, const std::string& key, int fallback) {
  auto it = f.find(key);
  if (it == f.end()) return fallback;
  const double v = parse_double(key, it->second);
  if (!(v >= 0 && v <= kMaxCount && v == std::floor(v)))
    throw std::invalid_argument(fmt::format("'{}' = '{}': must be a whole number in [0, {}]", key, it->second, kMaxCount));
  return int(v);
}

race::FilterSemantics parse_filters(const Fields& f, race::FilterSemantics s) {
  s.applied = word_field(f, "filters", s.applied) == 1;
  if (!s.applied)
    for (const char* k : {"top_k_ties", "top_p_mass", "filter_ties", "filter_sum_depth"})
      if (f.count(k)) throw std::invalid_argument(fmt::format("'{}' is given but 'filters' is not '{}'", k, words::filters[1]));
  s.top_k_ties = race::TopKTies(word_field(f, "top_k_ties", int(s.top_k_ties)));
  s.top_p_mass = race::TopPMass(word_field(f, "top_p_mass", int(s.top_p_mass)));
  s.tie_order = race::TieOrder(word_field(f, "filter_ties", int(s.tie_order)));
  s.sum_depth = count_field(f, "filter_sum_depth", s.sum_depth);
  return s;
}

race::Conventions parse_conventions(const Fields& f, race::Conventions c) {
  // A rule and its constant are given together (fields that state neither keep `c`'s).
  c.greedy = race::GreedyRule(word_field(f, "greedy_rule", int(c.greedy)));
  if (f.count("greedy_rule") && c.greedy == race::GreedyRule::below && !f.count("greedy_below"))
    throw std::invalid_argument("'greedy_rule' = 'below' needs 'greedy_below' (the c of T < c)");
  if (f.count("greedy_below")) {
    if (c.greedy != race::GreedyRule::below) throw std::invalid_argument("'greedy_below' is given but 'greedy_rule' is not 'below'");
    c.greedy_below = parse_float_field(f, "greedy_below", 0);
  }
  c.eps = race::EpsRule(word_field(f, "eps_rule", int(c.eps)));
  if (f.count("eps_rule") && c.eps == race::EpsRule::fixed && !f.count("eps_fixed"))
    throw std::invalid_argument("'eps_rule' = 'fixed' needs 'eps_fixed' (the eps the sampler adds)");
  if (f.count("eps_fixed")) {
    if (c.eps != race::EpsRule::fixed) throw std::invalid_argument("'eps_fixed' is given but 'eps_rule' is not 'fixed'");
    c.eps_fixed = parse_float_field(f, "eps_fixed", 0);
    if (c.eps_fixed < 0) throw std::invalid_argument(fmt::format("'eps_fixed' = '{}': must be >= 0", f.at("eps_fixed")));
  }
  c.nan_is_masked = word_field(f, "nan_logits", c.nan_is_masked ? 0 : 1) == 0;
  c.ties = race::TieRule(word_field(f, "tie_rule", int(c.ties)));
  c.fully_masked = race::FullyMasked(word_field(f, "fully_masked", int(c.fully_masked)));
  return c;
}

}  // namespace

void refuse_unknown_fields(const Fields& f, const std::vector<std::string>& other) {
  for (const auto& entry : f) {
    const std::string& key = entry.first;  // a named variable: clang 14 cannot capture a structured binding
    if (std::find(other.begin(), other.end(), key) != other.end()) continue;
    const SchemaField* field = schema_field(key);
    if (field && field->group == FieldGroup::contract) continue;
    throw std::invalid_argument(fmt::format("'{}' is no field raceoracle reads (contract fields: {}; and {})", key,
                                            fmt::join(schema_names(FieldGroup::contract), ", "), fmt::join(other, ", ")));
  }
}

oracle::NumericsContract parse_contract(const Fields& f, oracle::NumericsContract c) {
  c.conventions = parse_conventions(f, c.conventions);
  c.filters = parse_filters(f, c.filters);
  c.batch_invariance = race::BatchInvariance(word_field(f, "batch_invariance", int(c.batch_invariance)));
  c.scale_divides = word_field(f, "scale_op", c.scale_divides) == 1;
  c.key_reciprocal = word_field(f, "key_op", c.key_reciprocal) == 1;
  c.key_bf16 = word_field(f, "key_dtype", c.key_bf16) == 1;
  c.order = oracle::ScalingOrder(word_field(f, "scaling_order", int(c.order)));
  c.exp_ulp = c.rescale_ulp = ulp_field(f, "exp_ulp", c.exp_ulp);
  c.div_ulp = ulp_field(f, "div_ulp", c.div_ulp);
  c.noise_ulp = ulp_field(f, "noise_ulp", c.noise_ulp);
  c.log_ulp = ulp_field(f, "log_ulp", c.log_ulp);
  if (f.count("stages") && f.count("rescales"))
    throw std::invalid_argument("'stages' and 'rescales' are both given: 'stages' = '2' is 'rescales' = '1', give one");
  if (auto it = f.find("stages"); it != f.end()) {
    if (it->second != "1" && it->second != "2")
      throw std::invalid_argument("'stages' = '" + it->second + "': must be '1' (unfused) or '2' (fused, a rescale)");
    c.rescales = it->second == "2" ? 1 : 0;
  }
  c.rescales = count_field(f, "rescales", c.rescales);
  c.online_ids = count_field(f, "online_ids", c.online_ids);
  c.normalises = word_field(f, "normalise", c.normalises) == 1;
  c.domain = race::KeyDomain(word_field(f, "key_domain", int(c.domain)));
  // A log-domain race rescales nothing: the default fused rescale is dropped unless stated.
  if (f.count("key_domain") && c.domain == race::KeyDomain::log && !f.count("stages") && !f.count("rescales")) c.rescales = 0;
  if (c.domain == race::KeyDomain::log && (c.key_reciprocal || c.normalises || c.rescales > 0 || c.online_ids > 0))
    throw std::invalid_argument("'key_domain' = 'log' ranks x / t - log(E + eps): 'key_op', 'normalise', 'rescales' "
                                "(or 'stages' = '2') and 'online_ids' describe a ratio race and cannot be given with it");
  return c;
}

void require_tensor_noise_exact(const oracle::NumericsContract& c) {
  if (c.noise_ulp > 0)
    throw std::invalid_argument(fmt::format("'noise_ulp' = '{}': only a sampler that draws its noise (seeds and offsets) "
                                            "states one; E read from a noise tensor is judged exactly",
                                            c.noise_ulp));
}

Fields contract_fields(const oracle::NumericsContract& c) {
  Fields f{{"scaling_order", oracle::to_string(c.order)},
           {"exp_ulp", fmt::format("{}", c.exp_ulp)},
           {"div_ulp", fmt::format("{}", c.div_ulp)},
           {"stages", c.rescales > 0 ? "2" : "1"}};
  if (c.rescales > 1) {  // more than one rescale: the count itself
    f.erase("stages");
    f["rescales"] = std::to_string(c.rescales);
  }
  if (c.online_ids > 0) f["online_ids"] = std::to_string(c.online_ids);
  if (c.normalises) f["normalise"] = words::normalise[1];
  if (c.domain == race::KeyDomain::log) {
    f["key_domain"] = words::key_domain[1];
    f["log_ulp"] = fmt::format("{}", c.log_ulp);
  }
  // The newer terms and the conventions where they differ from the
  // definition's (so that a sampler of the definition's has the fields it had).
  if (c.scale_divides) f["scale_op"] = words::scale_op[1];
  if (c.key_reciprocal) f["key_op"] = words::key_op[1];
  if (c.key_bf16) f["key_dtype"] = words::dtype[1];
  const race::Conventions& k = c.conventions;
  if (k.greedy != race::GreedyRule::definition) f["greedy_rule"] = words::greedy_rule[int(k.greedy)];
  if (k.greedy == race::GreedyRule::below) f["greedy_below"] = fmt::format("{}", k.greedy_below);
  if (k.eps != race::EpsRule::request) f["eps_rule"] = words::eps_rule[int(k.eps)];
  if (k.eps == race::EpsRule::fixed) f["eps_fixed"] = fmt::format("{}", k.eps_fixed);
  if (!k.nan_is_masked) f["nan_logits"] = words::nan_logits[1];
  if (k.ties != race::TieRule::lowest_id) f["tie_rule"] = words::tie_rule[int(k.ties)];
  if (k.fully_masked != race::FullyMasked::zero) f["fully_masked"] = words::fully_masked[int(k.fully_masked)];
  if (c.batch_invariance != race::BatchInvariance::within_contract)
    f["batch_invariance"] = words::batch_invariance[int(c.batch_invariance)];
  if (const race::FilterSemantics& s = c.filters; s.applied) {
    f["filters"] = words::filters[1];
    f["top_k_ties"] = words::top_k_ties[int(s.top_k_ties)];
    f["top_p_mass"] = words::top_p_mass[int(s.top_p_mass)];
    f["filter_ties"] = words::filter_ties[int(s.tie_order)];
    if (s.sum_depth > 0) f["filter_sum_depth"] = std::to_string(s.sum_depth);
  }
  return f;
}

std::vector<TermWidening> missing_terms(const oracle::NumericsContract& declared) {
  std::vector<oracle::NumericsContract> wider;
  const bool ratio = declared.domain == race::KeyDomain::ratio;
  auto with = [&](auto set) {
    oracle::NumericsContract c = declared;
    set(c);
    wider.push_back(c);
  };
  if (!declared.key_bf16) with([](auto& c) { c.key_bf16 = true; });
  if (ratio) {
    with([](auto& c) { c.domain = race::KeyDomain::log, c.rescales = 0, c.online_ids = 0, c.normalises = c.key_reciprocal = false; });
    if (!declared.normalises) with([](auto& c) { c.normalises = true; });
    if (!declared.key_reciprocal) with([](auto& c) { c.key_reciprocal = true; });
    with([](auto& c) { ++c.rescales; });
  }
  if (declared.order == oracle::ScalingOrder::post) with([](auto& c) { c.order = oracle::ScalingOrder::pre; });
  // The filters' other semantics (SPEC §9): which one the sampler may follow instead.
  if (declared.filters.applied) {
    with([](auto& c) { c.filters.top_p_mass = race::TopPMass(1 - int(c.filters.top_p_mass)); });
    with([](auto& c) { c.filters.top_k_ties = race::TopKTies(1 - int(c.filters.top_k_ties)); });
    if (declared.filters.tie_order == race::TieOrder::lowest_id) with([](auto& c) { c.filters.tie_order = race::TieOrder::any; });
  }
  // Each labelled by the fields it changes, in their one spelling.
  const Fields before = contract_fields(declared);
  std::vector<TermWidening> out;
  for (const oracle::NumericsContract& c : wider) {
    std::string label;
    for (const auto& [key, value] : contract_fields(c)) {
      auto it = before.find(key);
      if (it == before.end() || it->second != value) label += fmt::format("{}{} = {}", label.empty() ? "" : ", ", key, value);
    }
    out.push_back({label, c});
  }
  return out;
}

std::string Deviation::describe() const {
  return fmt::format("{}: {} (SPEC §1: {}): {}", term, declared, definition, consequence);
}

std::vector<Deviation> deviations(const race::Conventions& c) {
  std::vector<Deviation> out;
  if (c.greedy == race::GreedyRule::zero)
    out.push_back({"greedy rule", "T == 0", "T <= greedy_eps",
                   "rows with 0 < T <= greedy_eps are sampled at t = 1e-5, not greedy; T < 0 is sampled at t = 1e-5"});
  if (c.greedy == race::GreedyRule::below)
    out.push_back({"greedy rule", fmt::format("T < {}", c.greedy_below), "T <= greedy_eps",
                   fmt::format("rows with T < {} are greedy whatever greedy_eps is; T = {} and rows from there up to "
                               "greedy_eps are sampled",
                               c.greedy_below, c.greedy_below)});
  if (c.eps == race::EpsRule::none)
    out.push_back({"race eps", "none (key = p / E)", "p / (E + eps)",
                   "the request's eps is ignored; a sampling row with a zero noise draw is out of the sampler's "
                   "contract (p / 0), so its noise must exclude 0"});
  if (c.eps == race::EpsRule::fixed)
    out.push_back({"race eps", fmt::format("{} of its own", c.eps_fixed), "the request's eps",
                   fmt::format("keys are p / (E + {}) whatever eps the request carries", c.eps_fixed)});
  if (!c.nan_is_masked)
    out.push_back({"NaN logits", "out of contract", "a NaN logit acts as a masked id",
                   "rows with a NaN logit are not judged; law NanIsolation does not apply"});
  if (c.ties == race::TieRule::highest_id)
    out.push_back({"ties", "to the highest id", "to the lowest id",
                   "equal maxima of a greedy row, equal keys and equal values at a filter boundary go to the highest "
                   "id; a fully masked row still gives id 0"});
  if (c.fully_masked == race::FullyMasked::any)
    out.push_back({"fully masked rows", "any id in [0, V)", "id 0",
                   "a row with no unmasked id is judged only to give an id in range; law FullyMaskedRowIsZero does "
                   "not apply"});
  return out;
}

std::vector<std::string> describe_deviations(const race::Conventions& c) {
  std::vector<std::string> out;
  for (const Deviation& d : deviations(c)) out.push_back(d.describe());
  return out;
}

std::string describe_contract(const oracle::NumericsContract& c) {
  const std::string stages = c.rescales == 0 ? "one-stage" : c.rescales == 1 ? "two-stage" : fmt::format("{} rescales", c.rescales);
  const bool log = c.domain == race::KeyDomain::log;  // exponentiates nothing: its exp does not matter
  std::string s = fmt::format("{}-scale{}, {}div {} ulp, {}{}{}{}{}", oracle::to_string(c.order),
                              c.scale_divides ? " (x / t)" : "", log ? "" : fmt::format("exp {} ulp, ", c.exp_ulp), c.div_ulp,
                              log ? fmt::format("log-domain race (logf {} ulp)", c.log_ulp) : stages,
                              c.online_ids > 0 ? fmt::format(", online max (a rescale per {} ids)", c.online_ids) : "",
                              c.normalises ? ", normalised by the softmax sum" : "",
                              c.key_reciprocal ? ", key w * (1 / (E + eps))" : "", c.key_bf16 ? ", bf16 keys" : "");
  for (const Deviation& d : deviations(c.conventions)) s += fmt::format("; {} {}", d.term, d.declared);
  if (const race::FilterSemantics& f = c.filters; f.applied)
    s += fmt::format("; filters: top-k {}, top-p {}, ties {}{}", words::top_k_ties[int(f.top_k_ties)], words::top_p_mass[int(f.top_p_mass)],
                     words::filter_ties[int(f.tie_order)], f.sum_depth > 0 ? fmt::format(", sums of depth {}", f.sum_depth) : "");
  if (c.batch_invariance == race::BatchInvariance::exact) s += "; batch-invariant (exact)";
  return s;
}


std::optional<race::NoiseStream> parse_stream(const Fields& f) {
  auto it = f.find("noise_stream");
  if (it == f.end()) {
    for (const std::string& k : schema_names(FieldGroup::stream))
      if (f.count(k)) throw std::invalid_argument(fmt::format("'{}' is given but no 'noise_stream'", k));
    return std::nullopt;
  }
  race::NoiseStream s;
  const std::optional<race::StreamKind> kind = oracle::stream_named(it->second);
  if (!kind) {
    std::string allowed;
    for (const race::StreamInfo& i : race::kStreams) allowed += (allowed.empty() ? "'" : ", '") + std::string(i.name) + "'";
    throw std::invalid_argument(fmt::format("'noise_stream' = '{}': must be one of {}", it->second, allowed));
  }
  s.kind = *kind;
  s.version = count_field(f, "stream_version", race::info(s.kind).latest);
  if (!race::stream_version_describes(s.kind, s.version)) {
    std::string known;
    for (const race::StreamVersion& v : race::kStreamVersions)
      if (v.kind == s.kind) known += fmt::format("{}{} ({})", known.empty() ? "" : "; ", v.version, v.describes);
    throw std::invalid_argument(fmt::format("'stream_version' = '{}': {} has no such version; it has {}", f.at("stream_version"),
                                            it->second, known));
  }
  const bool torch = s.kind == race::StreamKind::torch_exponential;
  for (const char* k : {"stream_layout", "stream_sm_count", "stream_threads_per_sm"})
    if (!torch && f.count(k))
      throw std::invalid_argument(fmt::format("'{}' is given but only torch-cuda-exponential has a layout to choose", k));
  s.per_row = word_field(f, "stream_layout", 0) == 1;
  s.dtype = race::Dtype(word_field(f, "stream_dtype", 0));
  s.sm_count = count_field(f, "stream_sm_count", s.sm_count);
  s.threads_per_sm = count_field(f, "stream_threads_per_sm", s.threads_per_sm);
  if (s.sm_count < 1 || s.threads_per_sm < race::kTorchBlock)
    throw std::invalid_argument(fmt::format("a torch grid of {} SMs x {} threads cannot run a block of {}", s.sm_count,
                                            s.threads_per_sm, race::kTorchBlock));
  return s;
}

Fields stream_fields(const race::NoiseStream& s) {
  Fields f{{"noise_stream", race::to_string(s.kind)},
           {"stream_dtype", words::dtype[int(s.dtype)]},
           {"stream_version", std::to_string(s.effective_version())}};
  if (s.kind == race::StreamKind::torch_exponential) {
    f["stream_layout"] = words::stream_layout[s.per_row ? 1 : 0];
    f["stream_sm_count"] = std::to_string(s.sm_count);
    f["stream_threads_per_sm"] = std::to_string(s.threads_per_sm);
  }
  return f;
}

oracle::NumericsContract with_stream_noise(oracle::NumericsContract c, const race::NoiseStream& s) {
  const oracle::NoiseBound b = oracle::noise_bound(s);
  c.noise_ulp = b.ulp;
  c.noise_abs = b.abs;
  c.noise_abs_above = b.abs_above;
  c.noise_abs_below = b.abs_below;
  return c;
}

float parse_float_field(const Fields& f, const std::string& key, float fallback) {
  auto it = f.find(key);
  if (it == f.end()) return fallback;
  const double v = parse_double(key, it->second);
  if (!std::isfinite(v) || std::abs(v) > 3.4e38)
    throw std::invalid_argument(fmt::format("'{}' = '{}' is not a finite fp32 number", key, it->second));
  return float(v);
}

oracle::RaceConstants parse_race_constants(const Fields& f) {
  oracle::RaceConstants k;
  k.eps = parse_float_field(f, "eps", k.eps);
  k.greedy_eps = parse_float_field(f, "greedy_eps", k.greedy_eps);
  for (const auto& [key, value] : {std::pair{"eps", k.eps}, std::pair{"greedy_eps", k.greedy_eps}})
    if (value < 0) throw std::invalid_argument(fmt::format("'{}' = '{}': must be >= 0", key, f.at(key)));
  return k;
}

race::VerifyRules parse_verify_rules(const Fields& fields) {
  race::VerifyRules rules;
  rules.uniform_f32 = word_field(fields, kUniformCompareField, 0) == 1;
  return rules;
}

}  // namespace raceoracle::protocol

#include "protocol/contract_fields.h"

#include <fmt/format.h>

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
  return f;
}

ContractOverrides overrides_from_fields(const Fields& f) {
  for (const auto& [key, value] : f) override_flag(key);  // refuses a term the command line does not override
  const oracle::NumericsContract c = parse_contract(f);   // refuses a malformed value, naming it
  ContractOverrides o;
  if (f.count("scaling_order")) o.scaling_order = c.order;
  if (f.count("exp_ulp")) o.exp_ulp = c.exp_ulp;
  if (f.count("div_ulp")) o.div_ulp = c.div_ulp;
  if (f.count("stages")) o.stages = c.two_stage ? 2 : 1;
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

oracle::NumericsContract parse_contract(const Fields& f, oracle::NumericsContract c) {
  if (auto it = f.find("scaling_order"); it != f.end()) {
    if (it->second != "post" && it->second != "pre")
      throw std::invalid_argument("'scaling_order' = '" + it->second + "': must be 'post' or 'pre'");
    c.order = it->second == "pre" ? oracle::ScalingOrder::pre : oracle::ScalingOrder::post;
  }
  c.exp_ulp = c.rescale_ulp = ulp_field(f, "exp_ulp", c.exp_ulp);
  c.div_ulp = ulp_field(f, "div_ulp", c.div_ulp);
  c.noise_ulp = ulp_field(f, "noise_ulp", c.noise_ulp);
  if (auto it = f.find("stages"); it != f.end()) {
    if (it->second != "1" && it->second != "2")
      throw std::invalid_argument("'stages' = '" + it->second + "': must be '1' (unfused) or '2' (fused, a rescale)");
    c.two_stage = it->second == "2";
  }
  return c;
}

void require_tensor_noise_exact(const oracle::NumericsContract& c) {
  if (c.noise_ulp > 0)
    throw std::invalid_argument(fmt::format("'noise_ulp' = '{}': only a sampler that draws its noise (seeds and offsets) "
                                            "states one; E read from a noise tensor is judged exactly",
                                            c.noise_ulp));
}

Fields contract_fields(const oracle::NumericsContract& c) {
  return {{"scaling_order", oracle::to_string(c.order)},
          {"exp_ulp", fmt::format("{}", c.exp_ulp)},
          {"div_ulp", fmt::format("{}", c.div_ulp)},
          {"stages", c.two_stage ? "2" : "1"}};
}

std::string describe_contract(const oracle::NumericsContract& c) {
  return fmt::format("{}-scale, exp {} ulp, div {} ulp, {}", oracle::to_string(c.order), c.exp_ulp, c.div_ulp,
                     c.two_stage ? "two-stage" : "one-stage");
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

}  // namespace raceoracle::protocol

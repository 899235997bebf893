#include "analysis/divergence_state.h"

#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

#include "io/files.h"
#include "protocol/contract_fields.h"
#include "protocol/safetensors.h"

namespace raceoracle::analysis {
namespace {

constexpr const char* kFormat = "raceoracle divergence state";
constexpr int kFormatVersion = 2;  // 2: the baseline beside fused-post

static_assert(sizeof(RowGap) == 2 * sizeof(double), "RowGap is written from memory as F64 [n, 2]");

/// A double that may be inf or NaN: JSON has neither, so those go as strings.
nlohmann::json number(double v) {
  if (std::isfinite(v)) return v;
  return std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf";
}
double number_of(const nlohmann::json& j) {
  if (j.is_number()) return j.get<double>();
  const std::string s = j.get<std::string>();
  if (s == "inf") return std::numeric_limits<double>::infinity();
  if (s == "-inf") return -std::numeric_limits<double>::infinity();
  if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
  throw std::invalid_argument("'" + s + "' is not a number");
}

nlohmann::json to_json(const KeyErrors& k) {
  return {{"keys", k.keys},
          {"off_max", k.off_max},
          {"squares", number(k.squares)},
          {"off_max_squares", number(k.off_max_squares)},
          {"max_actual", number(k.max_actual)},
          {"max_bound", number(k.max_bound)},
          {"worst_ratio", number(k.worst_ratio)}};
}
KeyErrors key_errors_from_json(const nlohmann::json& j) {
  KeyErrors k;
  k.keys = j.at("keys").get<std::int64_t>();
  k.off_max = j.at("off_max").get<std::int64_t>();
  k.squares = number_of(j.at("squares"));
  k.off_max_squares = number_of(j.at("off_max_squares"));
  k.max_actual = number_of(j.at("max_actual"));
  k.max_bound = number_of(j.at("max_bound"));
  k.worst_ratio = number_of(j.at("worst_ratio"));
  return k;
}

/// An order's counts as the run judges rows, and its tally's scalars (its lists are tensors).
nlohmann::json order_json(const DivergenceRow& d, const OrderTally& t) {
  return {{"rate_contract", protocol::contract_fields(d.rate_contract)},
          {"kernels_ran", d.kernels_ran},
          {"explained", d.explained},
          {"unexplained", d.unexplained},
          {"baseline_explained", d.base_explained},
          {"baseline_unexplained", d.base_unexplained},
          {"kernel_stage1_ratio", number(d.kernel_stage1_ratio)},
          {"rows", t.rows},
          {"ambiguous", t.ambiguous},
          {"apart_counted", t.apart_counted},
          {"baseline_rows", t.base_rows},
          {"baseline_apart_counted", t.base_apart_counted},
          {"keys", to_json(t.keys)}};
}
void read_order(const nlohmann::json& j, float T, race::ScalingOrder order, DivergenceRow& d, OrderTally& t) {
  d.temperature = T;
  d.order = order;
  d.rate_contract = protocol::parse_contract(j.at("rate_contract").get<protocol::Fields>());
  d.kernels_ran = j.at("kernels_ran").get<bool>();
  d.explained = j.at("explained").get<std::int64_t>();
  d.unexplained = j.at("unexplained").get<std::int64_t>();
  d.base_explained = j.at("baseline_explained").get<std::int64_t>();
  d.base_unexplained = j.at("baseline_unexplained").get<std::int64_t>();
  d.kernel_stage1_ratio = number_of(j.at("kernel_stage1_ratio"));
  t.rows = j.at("rows").get<std::int64_t>();
  t.ambiguous = j.at("ambiguous").get<std::int64_t>();
  t.apart_counted = j.at("apart_counted").get<std::int64_t>();
  t.base_rows = j.at("baseline_rows").get<std::int64_t>();
  t.base_apart_counted = j.at("baseline_apart_counted").get<std::int64_t>();
  t.keys = key_errors_from_json(j.at("keys"));
}

nlohmann::json to_json(const SamplerDivergence& s) {
  return {{"rows", s.rows},           {"differ", s.differ}, {"explained", s.explained}, {"unexplained", s.unexplained},
          {"unexplained_rows", s.unexplained_rows}};
}
SamplerDivergence sampler_from_json(const nlohmann::json& j, float T) {
  SamplerDivergence s{T};
  s.rows = j.at("rows").get<std::int64_t>();
  s.differ = j.at("differ").get<std::int64_t>();
  s.explained = j.at("explained").get<std::int64_t>();
  s.unexplained = j.at("unexplained").get<std::int64_t>();
  s.unexplained_rows = j.at("unexplained_rows").get<std::vector<std::string>>();
  return s;
}

/// The three lists of an order's tally, named by temperature index and order.
std::string list_name(std::size_t ti, int oi, const char* list) {
  return fmt::format("t{}.{}.{}", ti, oi == 0 ? "post" : "pre", list);
}

std::vector<RowGap> gaps_of(const protocol::TensorView& t, const std::string& name) {
  if (t.dtype != "F64" || t.shape.size() != 2 || t.shape[1] != 2)
    throw std::invalid_argument(name + ": expected F64 [n, 2], found " + t.dtype + " " + protocol::shape_string(t.shape));
  const std::vector<double> v = t.as_f64();
  std::vector<RowGap> out(v.size() / 2);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = {v[2 * i], v[2 * i + 1]};
  return out;
}

/// The options two shards of one run share: all but the shard.
nlohmann::json run_identity(const DivergenceState& s) {
  nlohmann::json j = to_json(s.options);
  j.erase("shard");
  return {{"options", j}, {"backend", s.backend}, {"sampler", s.sampler}};
}

}  // namespace

nlohmann::json to_json(const DivergenceOptions& o) {
  return {{"temperatures", o.temperatures},
          {"rows", o.rows},
          {"vocab", o.vocab},
          {"batches", o.batches},
          {"dtype", race::to_string(o.dtype)},
          {"seed", o.seed},
          {"logits_file", o.logits_file},
          {"normal_sigma", o.normal_sigma},
          {"normal_centre", o.normal_centre},
          {"competitive", o.competitive},
          {"top_k", o.top_k},
          {"exp_ulp", o.exp_ulp ? nlohmann::json(*o.exp_ulp) : nlohmann::json()},
          {"div_ulp", o.div_ulp ? nlohmann::json(*o.div_ulp) : nlohmann::json()},
          {"window", o.window},
          {"kernels", o.kernels},
          {"logit_rows", o.logit_rows},
          {"shard", o.shard.str()}};
}

DivergenceOptions divergence_options_from_json(const nlohmann::json& j) {
  DivergenceOptions o;
  try {
    o.temperatures = j.at("temperatures").get<std::vector<float>>();
    o.rows = j.at("rows").get<std::int64_t>();
    o.vocab = j.at("vocab").get<std::int64_t>();
    o.batches = j.at("batches").get<int>();
    const std::string dtype = j.at("dtype").get<std::string>();
    if (dtype != "bf16" && dtype != "f32") throw std::invalid_argument("dtype '" + dtype + "'");
    o.dtype = dtype == "f32" ? oracle::Dtype::f32 : oracle::Dtype::bf16;
    o.seed = j.at("seed").get<std::uint64_t>();
    o.logits_file = j.at("logits_file").get<std::string>();
    o.normal_sigma = j.at("normal_sigma").get<float>();
    o.normal_centre = j.at("normal_centre").get<float>();
    o.competitive = j.at("competitive").get<double>();
    o.top_k = j.at("top_k").get<int>();
    if (!j.at("exp_ulp").is_null()) o.exp_ulp = j.at("exp_ulp").get<double>();
    if (!j.at("div_ulp").is_null()) o.div_ulp = j.at("div_ulp").get<double>();
    o.window = j.at("window").get<double>();
    o.kernels = j.at("kernels").get<bool>();
    o.logit_rows = j.at("logit_rows").get<std::int64_t>();
    o.shard = io::parse_shard(j.at("shard").get<std::string>());
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("divergence options: ") + e.what());
  }
  // The ranges the command line allows (cli/command_line.cpp): a state is read, not trusted.
  const auto bad = [](const char* what) { return std::invalid_argument(std::string("divergence options: ") + what); };
  for (float T : o.temperatures)
    if (!(T > 0 && std::isfinite(T))) throw bad("a temperature is not positive and finite");
  if (o.rows < 1 || o.vocab < 1 || o.batches < 1 || o.logit_rows < 1 || o.top_k < 0) throw bad("a count below 1");
  if (!(o.window > 0 && o.window <= 0.5)) throw bad("window outside (0, 0.5]");
  if (!(o.competitive > 0 && o.competitive <= 1)) throw bad("competitive outside (0, 1]");
  return o;
}

DivergenceResult finish(const DivergenceState& s) {
  DivergenceResult out;
  for (const TemperatureState& ts : s.temperatures) {
    if (!s.sampler.empty()) {
      SamplerDivergence sd = ts.beside;
      sd.ambiguous_fraction = sd.rows ? double(ts.sampler_ambiguous) / double(sd.rows) : 0;
      out.beside.push_back(sd);
    }
    for (int oi = 0; oi < 2; ++oi) {
      DivergenceRow d = ts.rows[oi];
      ts.tally[oi].finish(d, s.options.window);
      out.rows.push_back(d);
    }
  }
  out.noise = s.noise.finish();
  if (s.pool_rows > 0)
    out.method = fmt::format(
        "{} logit row{} reused in turn with fresh noise, drawn only where it can matter (docs/DIVERGENCE.md); "
        "the first {} row{} of each temperature drawn in full, decided over every id (identical verdicts where "
        "also drawn lazily), and read by the noise report; {} other row{} drawn in full (the oracle decides {} over "
        "every id)",
        s.pool_rows, s.pool_rows == 1 ? "" : "s", s.checked_rows, s.checked_rows == 1 ? "" : "s", s.fallback_rows,
        s.fallback_rows == 1 ? "" : "s", s.fallback_rows == 1 ? "it" : "them");
  if (s.options.shard.count > 1)
    out.method += (out.method.empty() ? "" : "; ") + fmt::format("shard {} of the run", s.options.shard.str());
  return out;
}

void write_state(const std::string& path, const DivergenceState& s) {
  nlohmann::json temps = nlohmann::json::array();
  std::vector<protocol::TensorRef> refs;
  const auto f64 = [&](std::string name, const void* data, std::size_t n, std::vector<std::int64_t> shape) {
    refs.push_back({std::move(name), "F64", std::move(shape), data, n * sizeof(double)});
  };
  for (std::size_t ti = 0; ti < s.temperatures.size(); ++ti) {
    const TemperatureState& ts = s.temperatures[ti];
    nlohmann::json t = {{"temperature", ts.temperature},
                        {"orders", {order_json(ts.rows[0], ts.tally[0]), order_json(ts.rows[1], ts.tally[1])}}};  // post, pre
    if (!s.sampler.empty()) t["beside"] = to_json(ts.beside), t["sampler_ambiguous"] = ts.sampler_ambiguous;
    temps.push_back(t);
    for (int oi = 0; oi < 2; ++oi) {
      const OrderTally& tally = ts.tally[oi];
      f64(list_name(ti, oi, "full_bounds"), tally.full_bounds.data(), tally.full_bounds.size(),
          {std::int64_t(tally.full_bounds.size())});
      f64(list_name(ti, oi, "gaps"), tally.gaps.data(), 2 * tally.gaps.size(), {std::int64_t(tally.gaps.size()), 2});
      f64(list_name(ti, oi, "apart"), tally.apart.data(), 2 * tally.apart.size(), {std::int64_t(tally.apart.size()), 2});
      f64(list_name(ti, oi, "baseline_apart"), tally.base_apart.data(), 2 * tally.base_apart.size(),
          {std::int64_t(tally.base_apart.size()), 2});
    }
  }
  const nlohmann::json state = {{"format_version", kFormatVersion},
                                {"options", to_json(s.options)},
                                {"backend", s.backend},
                                {"sampler", s.sampler},
                                {"temperatures", temps},
                                {"noise", s.noise.state()},
                                {"pool_rows", s.pool_rows},
                                {"checked_rows", s.checked_rows},
                                {"fallback_rows", s.fallback_rows}};
  io::AtomicFile f(path);  // whole or not at all
  f.write(protocol::encode_header(refs, {{"format", kFormat}, {"state", state.dump()}}));
  for (const auto& r : refs) f.write(r.data, r.bytes);
  f.commit();
}

bool is_state_file(const std::string& path) {
  try {
    const protocol::SafetensorsFile f(path);
    const auto it = f.metadata().find("format");
    return it != f.metadata().end() && it->second == kFormat;
  } catch (const std::exception&) {
    return false;
  }
}

namespace {

/// A state from a document's metadata and its tensors by name; errors name `where`.
DivergenceState state_of(const std::map<std::string, std::string>& meta,
                         const std::function<protocol::TensorView(const std::string&)>& tensor, const std::string& where) {
  const auto format = meta.find("format");
  if (format == meta.end() || format->second != kFormat)
    throw std::invalid_argument(where + ": not a divergence shard's state (`divergence --shard I/N --state FILE` writes one)");
  DivergenceState s;
  try {
    const auto state = meta.find("state");
    if (state == meta.end()) throw std::invalid_argument("no `state` in its metadata");
    const nlohmann::json j = nlohmann::json::parse(state->second);
    if (j.at("format_version").get<int>() != kFormatVersion)
      throw std::invalid_argument(fmt::format("format version {}, where this raceoracle reads {}",
                                              j.at("format_version").dump(), kFormatVersion));
    s.options = divergence_options_from_json(j.at("options"));
    s.backend = j.at("backend").get<std::string>();
    s.sampler = j.at("sampler").get<std::string>();
    s.noise = NoiseTally::from_state(j.at("noise"));
    s.pool_rows = j.at("pool_rows").get<std::int64_t>();
    s.checked_rows = j.at("checked_rows").get<std::int64_t>();
    s.fallback_rows = j.at("fallback_rows").get<std::int64_t>();
    const nlohmann::json& temps = j.at("temperatures");
    if (!temps.is_array() || temps.size() != s.options.temperatures.size())
      throw std::invalid_argument(fmt::format("{} temperatures tallied, {} in its options", temps.size(),
                                              s.options.temperatures.size()));
    for (std::size_t ti = 0; ti < temps.size(); ++ti) {
      TemperatureState& ts = s.temperatures.emplace_back();
      ts.temperature = temps[ti].at("temperature").get<float>();
      if (ts.temperature != s.options.temperatures[ti])
        throw std::invalid_argument(fmt::format("temperature {} is {:g}, {:g} in its options", ti, ts.temperature,
                                                s.options.temperatures[ti]));
      if (!s.sampler.empty()) {
        ts.beside = sampler_from_json(temps[ti].at("beside"), ts.temperature);
        ts.sampler_ambiguous = temps[ti].at("sampler_ambiguous").get<std::int64_t>();
      }
      const nlohmann::json& orders = temps[ti].at("orders");
      if (!orders.is_array() || orders.size() != 2) throw std::invalid_argument("a temperature holds post and pre, two orders");
      for (int oi = 0; oi < 2; ++oi) {
        OrderTally& t = ts.tally[oi];
        read_order(orders[std::size_t(oi)], ts.temperature, oi == 0 ? race::ScalingOrder::post : race::ScalingOrder::pre,
                   ts.rows[oi], t);
        const std::string bounds = list_name(ti, oi, "full_bounds");
        const protocol::TensorView b = tensor(bounds);
        if (b.dtype != "F64" || b.shape.size() != 1)
          throw std::invalid_argument(bounds + ": expected F64 [n], found " + b.dtype + " " + protocol::shape_string(b.shape));
        t.full_bounds = b.as_f64();
        t.gaps = gaps_of(tensor(list_name(ti, oi, "gaps")), list_name(ti, oi, "gaps"));
        t.apart = gaps_of(tensor(list_name(ti, oi, "apart")), list_name(ti, oi, "apart"));
        t.base_apart = gaps_of(tensor(list_name(ti, oi, "baseline_apart")), list_name(ti, oi, "baseline_apart"));
        if (t.rows < 0 || std::int64_t(t.full_bounds.size()) != t.rows || std::int64_t(t.gaps.size()) > t.rows ||
            std::int64_t(t.apart.size()) > t.rows || t.base_rows < 0 || t.base_rows > t.rows ||
            std::int64_t(t.base_apart.size()) > t.base_rows)
          throw std::invalid_argument(fmt::format("{}: {} rows tallied but {} bounds, {} gaps, {} pairs, {} baseline rows "
                                                  "and {} of their pairs",
                                                  bounds, t.rows, t.full_bounds.size(), t.gaps.size(), t.apart.size(),
                                                  t.base_rows, t.base_apart.size()));
      }
    }
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(where + ": " + e.what());
  } catch (const protocol::SafetensorsError& e) {
    throw std::invalid_argument(where + ": " + e.what());
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(where + ": " + e.what());
  }
  return s;
}

}  // namespace

DivergenceState read_state(const std::string& path) {
  const protocol::SafetensorsFile f(path);
  return state_of(f.metadata(), [&](const std::string& name) { return f.require(name); }, path);
}

DivergenceState parse_state(const protocol::Safetensors& doc) {
  return state_of(doc.metadata, [&](const std::string& name) { return doc.require(name).view(); }, "the state");
}

DivergenceState merge_states(const std::vector<std::string>& paths) {
  if (paths.empty()) throw std::invalid_argument("merge: no shard states given");
  DivergenceState all = read_state(paths[0]);
  const nlohmann::json identity = run_identity(all);
  const int n = all.options.shard.count;
  std::map<int, std::string> seen{{all.options.shard.index, paths[0]}};
  for (std::size_t p = 1; p < paths.size(); ++p) {
    DivergenceState s = read_state(paths[p]);
    if (const nlohmann::json other = run_identity(s); other != identity) {
      std::string what;  // the settings that differ, each as both runs have it
      const nlohmann::json a = identity.flatten(), b = other.flatten();
      for (auto it = a.begin(); it != a.end(); ++it)
        if (!b.contains(it.key()) || b.at(it.key()) != it.value())
          what += fmt::format("{}{} {} there, {} here", what.empty() ? "" : "; ", it.key().substr(1), it.value().dump(),
                              b.contains(it.key()) ? b.at(it.key()).dump() : "none");
      throw std::invalid_argument(
          fmt::format("{} is not a shard of the run {} is a shard of: {}", paths[p], paths[0], what));
    }
    if (s.options.shard.count != n)
      throw std::invalid_argument(fmt::format("{} is shard {} but {} is shard {}: one run's shards share their N",
                                              paths[p], s.options.shard.str(), paths[0], all.options.shard.str()));
    if (const auto [it, fresh] = seen.emplace(s.options.shard.index, paths[p]); !fresh)
      throw std::invalid_argument(fmt::format("{} and {} are both shard {}", it->second, paths[p], s.options.shard.str()));
    all.noise.merge(s.noise);
    all.fallback_rows += s.fallback_rows;
    for (std::size_t ti = 0; ti < all.temperatures.size(); ++ti) {
      TemperatureState &a = all.temperatures[ti], &b = s.temperatures[ti];
      for (int oi = 0; oi < 2; ++oi) {
        DivergenceRow &da = a.rows[oi], &db = b.rows[oi];
        da.explained += db.explained;
        da.unexplained += db.unexplained;
        da.base_explained += db.base_explained;
        da.base_unexplained += db.base_unexplained;
        da.kernel_stage1_ratio = std::max(da.kernel_stage1_ratio, db.kernel_stage1_ratio);
        a.tally[oi].merge(std::move(b.tally[oi]));
      }
      a.beside.rows += b.beside.rows;
      a.beside.differ += b.beside.differ;
      a.beside.explained += b.beside.explained;
      a.beside.unexplained += b.beside.unexplained;
      for (auto& row : b.beside.unexplained_rows)
        if (a.beside.unexplained_rows.size() < 10) a.beside.unexplained_rows.push_back(std::move(row));
      a.sampler_ambiguous += b.sampler_ambiguous;
    }
  }
  std::string missing;
  for (int i = 0; i < n; ++i)
    if (!seen.count(i)) missing += (missing.empty() ? "" : ", ") + io::Shard{i, n}.str();
  if (!missing.empty()) throw std::invalid_argument("merge: shard " + missing + " missing: every shard of the run is needed");
  all.options.shard = {};
  return all;
}

}  // namespace raceoracle::analysis

#include "protocol/dump.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <climits>

#include <cstdint>
#include <functional>
#include <stdexcept>

#include "oracle/noise_streams.h"
#include "protocol/contract_fields.h"
#include "race/noise.h"

namespace raceoracle::protocol {
namespace {

TensorView check_logits(const TensorView& xl) {
  if (xl.shape.size() != 2 || xl.shape[0] < 1 || xl.shape[1] < 1)
    throw SafetensorsError("logits must be [rows, V] with rows, V >= 1, got " + shape_string(xl.shape));
  if (xl.dtype != "BF16" && xl.dtype != "F16" && xl.dtype != "F32")
    throw SafetensorsError("logits dtype must be BF16, F16 or F32, got " + xl.dtype);
  return xl;
}

/// `seeds` or `offsets` of drawn noise: [rows] of U64 or I64.
std::vector<std::uint64_t> check_seeds(const TensorView& t, const char* name, std::int64_t rows) {
  if (t.dtype != "U64" && t.dtype != "I64") throw SafetensorsError(fmt::format("{} dtype must be U64 or I64, got {}", name, t.dtype));
  if (t.shape.size() != 1 || t.shape[0] != rows)
    throw SafetensorsError(fmt::format("{} must be [{}], got {}", name, rows, shape_string(t.shape)));
  return t.as_u64();
}

DumpTensors check(const Lookup& require, const Has& has, const std::map<std::string, std::string>& metadata) {
  DumpTensors d;
  d.logits = check_logits(require("logits"));
  const std::int64_t rows = d.logits.shape[0], V = d.logits.shape[1];
  const bool drawn = !has("noise") && (has("seeds") || has("offsets"));
  if (has("noise") && (has("seeds") || has("offsets")))
    throw SafetensorsError(fmt::format("the file has both a 'noise' tensor and '{}': give the noise itself or the seeds "
                                       "and offsets it is drawn from, not both", has("seeds") ? "seeds" : "offsets"));
  if (drawn) {
    d.seeds = check_seeds(require("seeds"), "seeds", rows);
    d.offsets = check_seeds(require("offsets"), "offsets", rows);
    if (rows > std::int64_t(UINT32_MAX)) throw SafetensorsError("drawn noise numbers rows in 32 bits: too many rows");
  } else {
    d.noise = require("noise");
  }
  d.temperatures = require("temperatures");
  d.tokens = require("tokens");
  const TensorView &nz = d.noise, &tt = d.temperatures, &tk = d.tokens;
  if (!drawn && nz.dtype != "F32") throw SafetensorsError("noise dtype must be F32, got " + nz.dtype);
  if (!drawn && (nz.shape.size() != 2 || nz.shape[1] != V || (nz.shape[0] != rows && nz.shape[0] != 1)))
    throw SafetensorsError(fmt::format("noise must be [{}, {}] or [1, {}], got {}", rows, V, V, shape_string(nz.shape)));
  if (tt.dtype != "F32") throw SafetensorsError("temperatures dtype must be F32, got " + tt.dtype);
  if (tt.elements() != rows || tt.shape.size() != 1)
    throw SafetensorsError(fmt::format("temperatures must be [{}], got {}", rows, shape_string(tt.shape)));
  if (tk.dtype != "I32" && tk.dtype != "I64") throw SafetensorsError("tokens dtype must be I32 or I64, got " + tk.dtype);
  if (tk.elements() != rows || tk.shape.size() != 1)
    throw SafetensorsError(fmt::format("tokens must be [{}], got {}", rows, shape_string(tk.shape)));
  d.filters = read_row_filters(require, has, rows);
  d.rows = rows;
  d.vocab = V;
  d.logits_dtype = d.logits.dtype;
  d.filtered = !d.filters.empty();
  try {
    d.constants = parse_race_constants(metadata);
    oracle::NumericsContract defaults = default_sampler_contract();
    if (drawn) defaults.noise_ulp = race::kDrawnNoiseUlp;
    d.contract = parse_contract(metadata, defaults);
    require_declared_filters(d.contract.filters.applied, d.filtered);
    if (!drawn) require_tensor_noise_exact(d.contract);
    const std::optional<race::NoiseStream> stream = parse_stream(metadata);
    if (stream && !drawn) throw std::invalid_argument("'noise_stream' is given but the file has no seeds and offsets");
    if (stream) {
      if (metadata.count("noise_ulp"))  // the stream's bound is the noise term, never a declared one
        throw std::invalid_argument("'noise_ulp' cannot be stated with 'noise_stream': the stream's transform bound is its noise term");
      d.stream = *stream;
      d.contract = with_stream_noise(d.contract, d.stream);
    }
    if (d.stream.one_state_per_batch())
      for (std::int64_t r = 1; r < rows; ++r)
        if (d.seeds[std::size_t(r)] != d.seeds[0] || d.offsets[std::size_t(r)] != d.offsets[0])
          throw std::invalid_argument(fmt::format("row {} has another seed or offset than row 0, but {} takes one for the whole batch",
                                                  r, oracle::describe(d.stream)));
  } catch (const std::invalid_argument& e) {
    throw SafetensorsError(std::string("metadata ") + e.what());
  }
  return d;
}


}  // namespace

std::vector<race::RowFilter> read_row_filters(const Lookup& require, const Has& has, std::int64_t rows) {
  const int given = int(has("top_k")) + int(has("top_p")) + int(has("min_p"));
  if (given == 0) return {};
  if (given != 3) throw SafetensorsError(fmt::format("give top_k, top_p and min_p together (each [{}]), or none", rows));
  const TensorView tk = require("top_k"), tp = require("top_p"), mp = require("min_p");
  auto shaped = [rows](const TensorView& t, const char* name, std::initializer_list<const char*> dtypes) {
    bool dtype_ok = false;
    for (const char* d : dtypes) dtype_ok |= t.dtype == d;
    if (!dtype_ok) throw SafetensorsError(fmt::format("{} dtype must be {}, got {}", name, fmt::join(dtypes, " or "), t.dtype));
    if (t.shape != std::vector<std::int64_t>{rows})
      throw SafetensorsError(fmt::format("{} must be [{}], got {}", name, rows, shape_string(t.shape)));
  };
  shaped(tk, "top_k", {"I32", "I64"});
  shaped(tp, "top_p", {"F32"});
  shaped(mp, "min_p", {"F32"});
  const std::vector<std::int64_t> k = tk.as_i64();
  const std::vector<float> p = tp.as_f32(), m = mp.as_f32();
  std::vector<race::RowFilter> out;
  for (std::size_t i = 0; i < std::size_t(rows); ++i)
    out.push_back({std::int32_t(std::clamp<std::int64_t>(k[i], INT32_MIN, INT32_MAX)), p[i], m[i]});
  return out;
}

void require_declared_filters(bool declared, bool given) {
  if (given && !declared)
    throw SafetensorsError("the file has top_k, top_p and min_p tensors but its metadata does not declare "
                           "filters = top_k,top_p,min_p: did the sampler apply them? Declare it (and the semantics "
                           "fields it follows)");
}

void DumpTensors::draw_rows(std::int64_t r0, std::int64_t n, float* out) const {
  for (std::int64_t i = 0; i < n; ++i)
    oracle::stream_noise_row(stream, {seeds[std::size_t(r0 + i)], offsets[std::size_t(r0 + i)], rows, vocab, r0 + i},
                             out + i * vocab);
}

DumpTensors check_dump(const SafetensorsFile& f) {
  return check([&](const std::string& name) { return f.require(name); }, [&](const std::string& name) { return f.has(name); },
               f.metadata());
}

DumpTensors check_dump(const Safetensors& s) {
  return check([&](const std::string& name) { return s.require(name).view(); },
               [&](const std::string& name) { return s.has(name); }, s.metadata);
}

oracle::BatchView Dump::view() const {
  return {logits.data(), oracle::Dtype::f32, rows, vocab, vocab, noise.data(), std::int64_t(noise.size()) == vocab ? 0 : vocab,
          temperatures.data(), filters.empty() ? nullptr : filters.data()};
}

TensorView require_logits(const SafetensorsFile& f) { return check_logits(f.require("logits")); }

Dump read_dump(const std::string& path) {
  return parse_file(path, [](const SafetensorsFile& f) {
    const DumpTensors t = check_dump(f);
    Dump d;
    static_cast<DumpFacts&>(d) = t;
    d.logits = t.logits.as_f32();
    if (t.drawn()) {
      d.noise.resize(std::size_t(t.rows * t.vocab));
      t.draw_rows(0, t.rows, d.noise.data());
    } else {
      d.noise = t.noise.as_f32();
    }
    d.temperatures = t.temperatures.as_f32();
    d.tokens = t.tokens.as_i64();
    d.filters = t.filters;
    return d;
  });
}

}  // namespace raceoracle::protocol

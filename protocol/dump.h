#pragma once
/// The dump format: a sampler's inputs and tokens in one safetensors file, as
/// `raceoracle verify` and `divergence A B` read it and the Python package
/// writes it (docs/SAMPLER_PROTOCOL.md). The file is safetensors with tensors `logits` [rows, V]
/// (BF16, F16 or F32), `noise` [rows, V] or [1, V] (F32), `temperatures`
/// [rows] (F32) and `tokens` [rows] (I32 or I64); a filtering sampler's
/// `top_k`, `top_p`, `min_p` [rows] with metadata `filters` declared (and its
/// semantics fields, protocol/contract_fields.h); optional string metadata
/// `eps`, `greedy_eps`, `scaling_order` (post|pre), `exp_ulp`, `div_ulp`,
/// `stages` (2: a fused sampler's rescale; 1: an unfused one), each absent one
/// taking its default (race::RaceConstants, protocol::default_sampler_contract).
/// A sampler that draws its noise (docs/NOISE_STREAMS.md) writes `seeds` and
/// `offsets` [rows] (U64 or I64) instead of `noise`, and names its stream in
/// the metadata (`noise_stream` and its layout fields, protocol/contract_fields.h;
/// default raceoracle-philox); the oracle replays the same E, and the error of
/// the sampler's own E is the stream's transform bound (raceoracle-philox:
/// `noise_ulp`, default 1.5: logf's 1 ulp + 0.5).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "oracle/oracle.h"
#include "protocol/safetensors.h"
#include "race/filters.h"
#include "race/noise_streams.h"

namespace raceoracle::protocol {

/// What a dump in verify's format says of itself.
struct DumpFacts {
  std::int64_t rows = 0, vocab = 0;
  std::string logits_dtype;
  bool filtered = false;  ///< its rows carry filters (`top_k`, `top_p`, `min_p`), declared `filters`
  oracle::NumericsContract contract;
  oracle::RaceConstants constants;
};

/// A file in verify's format, every tensor and field checked; its tensors
/// where they lie (a mapped file, a document in memory).
struct DumpTensors : DumpFacts {
  TensorView logits, noise, temperatures, tokens;  ///< noise [rows or 1, V]; none when drawn
  std::vector<std::uint64_t> seeds, offsets;                 ///< drawn noise: [rows] each; empty otherwise
  std::vector<race::RowFilter> filters;                      ///< [rows] when filtered; empty otherwise
  race::NoiseStream stream;                                  ///< the stream they are drawn in
  bool drawn() const { return !seeds.empty(); }
  /// Rows [r0, r0 + n) of drawn noise, as the oracle judges them, into `out` [n, V].
  void draw_rows(std::int64_t r0, std::int64_t n, float* out) const;
};
/// Checks a dump's tensors and metadata; throws SafetensorsError naming the problem.
DumpTensors check_dump(const SafetensorsFile& f);
DumpTensors check_dump(const Safetensors& s);

/// A dump widened into memory, for commands that need it whole.
struct Dump : DumpFacts {
  std::vector<float> logits, noise, temperatures;  ///< widened exactly; noise [rows or 1, V]
  std::vector<std::int64_t> tokens;
  std::vector<race::RowFilter> filters;  ///< [rows] when filtered; empty otherwise
  oracle::BatchView view() const;
};
Dump read_dump(const std::string& path);  ///< errors name the path

using Lookup = std::function<TensorView(const std::string&)>;  ///< a tensor by name; throws naming a missing one
using Has = std::function<bool(const std::string&)>;

/// Each row's (or request's) filters (SPEC §9) from the tensors `top_k` (I32
/// or I64), `top_p` and `min_p` (F32), each [rows]: all three, or none (then
/// empty). A top_k past int32 keeps every id, as one at V does. Throws
/// SafetensorsError naming what is wrong.
std::vector<race::RowFilter> read_row_filters(const Lookup& require, const Has& has, std::int64_t rows);
/// Refuses filter tensors without the declaration (`filters` in the
/// metadata: were they applied?). A declaration without tensors is a
/// filtering sampler whose rows had every filter off.
void require_declared_filters(bool declared, bool given);

/// The tensor `logits` [rows, V] (BF16, F16 or F32), checked: what every
/// command that reads logits from a file requires.
TensorView require_logits(const SafetensorsFile& f);

/// `parse` applied to the file at `path`, mapped; every SafetensorsError names the path.
template <class Parse>
auto parse_file(const std::string& path, Parse parse) {
  const SafetensorsFile f(path);  // its errors name the path
  try {
    return parse(f);
  } catch (const SafetensorsError& e) {
    throw SafetensorsError(path + ": " + e.what());
  }
}

}  // namespace raceoracle::protocol

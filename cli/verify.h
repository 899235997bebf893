#pragma once
/// `raceoracle verify FILE`: tokens any sampler produced, checked offline
/// against the oracle. The file is safetensors with tensors `logits` [rows, V]
/// (BF16, F16 or F32), `noise` [rows, V] or [1, V] (F32), `temperatures`
/// [rows] (F32) and `tokens` [rows] (I32 or I64); optional string metadata
/// `eps`, `greedy_eps`, `scaling_order` (post|pre), `exp_ulp`, `div_ulp`,
/// `stages` (2: a fused sampler's rescale; 1: an unfused one), each absent one
/// taking its default (race::RaceConstants, protocol::default_sampler_contract).
/// A sampler that draws its noise (docs/DRAWN_NOISE.md) writes `seeds` and
/// `offsets` [rows] (U64 or I64) instead of `noise`; the oracle draws the
/// same E with Random123, and `noise_ulp` (default 1.5: logf's 1 ulp + 0.5)
/// is the error of the sampler's own fp32 E.
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "analysis/noise_report.h"
#include "oracle/oracle.h"
#include "protocol/safetensors.h"

namespace raceoracle::cli {

/// What a dump in verify's format says of itself.
struct DumpFacts {
  std::int64_t rows = 0, vocab = 0;
  std::string logits_dtype;
  oracle::NumericsContract contract;
  oracle::RaceConstants constants;
};

/// A file in verify's format, every tensor and field checked; its tensors
/// where they lie (a mapped file, a document in memory).
struct DumpTensors : DumpFacts {
  protocol::TensorView logits, noise, temperatures, tokens;  ///< noise [rows or 1, V]; none when drawn
  std::vector<std::uint64_t> seeds, offsets;                 ///< drawn noise: [rows] each; empty otherwise
  bool drawn() const { return !seeds.empty(); }
  /// Rows [r0, r0 + n) of drawn noise, as the oracle judges them, into `out` [n, V].
  void draw_rows(std::int64_t r0, std::int64_t n, float* out) const;
};
/// Checks a dump's tensors and metadata; throws SafetensorsError naming the problem.
DumpTensors check_dump(const protocol::SafetensorsFile& f);
DumpTensors check_dump(const protocol::Safetensors& s);

/// A dump widened into memory, for commands that need it whole.
struct Dump : DumpFacts {
  std::vector<float> logits, noise, temperatures;  ///< widened exactly; noise [rows or 1, V]
  std::vector<std::int64_t> tokens;
  oracle::BatchView view() const;
};
Dump read_dump(const std::string& path);  ///< errors name the path

/// The tensor `logits` [rows, V] (BF16, F16 or F32), checked: what every
/// command that reads logits from a file requires.
protocol::TensorView require_logits(const protocol::SafetensorsFile& f);

/// `parse` applied to the file at `path`, mapped; every SafetensorsError names the path.
template <class Parse>
auto parse_file(const std::string& path, Parse parse) {
  const protocol::SafetensorsFile f(path);  // its errors name the path
  try {
    return parse(f);
  } catch (const protocol::SafetensorsError& e) {
    throw protocol::SafetensorsError(path + ": " + e.what());
  }
}

/// The noise report as JSON, for every command that reads noise.
nlohmann::json noise_json(const analysis::NoiseReport& n);

struct VerifyReport : DumpFacts {
  std::int64_t identical = 0, explained = 0, out_of_contract = 0, unexplained = 0, out_of_range = 0;
  std::vector<std::string> failures;  ///< readable, the first few
  analysis::NoiseReport noise;
  std::int64_t invalid_noise() const { return noise.infinite + noise.invalid; }  ///< negative, NaN or infinite draws
  std::int64_t zero_noise() const { return noise.zeros; }                       ///< legal, reported
  bool ok() const { return unexplained == 0 && out_of_range == 0 && invalid_noise() == 0; }
};

/// Throws SafetensorsError with a clear message on a bad file. The file is
/// mapped and decided a block of rows at a time; pages already decided are
/// released, so memory stays that of one block whatever the file's size.
/// `block_rows` 0: rows of about 64 MB a block.
VerifyReport verify_file(const std::string& path, int max_failures = 10, std::int64_t block_rows = 0);
/// The same for a document already in memory.
VerifyReport verify_document(const protocol::Safetensors& s, int max_failures = 10);

struct VerifyOptions {
  std::string file, json;
  int show = 10;
};
int verify(const VerifyOptions& o);

}  // namespace raceoracle::cli

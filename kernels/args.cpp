#include <limits>
#include <string>

#include "kernels/host_api.h"

namespace raceoracle::kernels {

const char* to_string(Defect d) {
  switch (d) {
#define RACEORACLE_DEFECT(name, what) \
  case Defect::name: return #name;
#include "kernels/defect_list.inc"
#undef RACEORACLE_DEFECT
  }
  return "?";
}

const char* describe(Defect d) {
  switch (d) {
#define RACEORACLE_DEFECT(name, what) \
  case Defect::name: return what;
#include "kernels/defect_list.inc"
#undef RACEORACLE_DEFECT
  }
  return "?";
}

bool is_supported(const FusedConfig& c) {
  for (const FusedConfig& k : kFusedConfigs)
    if (k == c) return true;
  return false;
}

std::string supported_configs() {
  std::string s = "block_v/threads";
  for (const FusedConfig& k : kFusedConfigs)
    s += (&k == kFusedConfigs ? " " : ", ") + std::to_string(k.block_v) + "/" + std::to_string(k.threads);
  return s;
}

std::int64_t tile_count(std::int64_t vocab, const FusedConfig& c) { return (vocab + c.block_v - 1) / c.block_v; }

FusedConfig tiling_for_rows(std::int64_t rows) { return rows <= 8 ? FusedConfig{1024, 256} : FusedConfig{}; }

std::string check_args(const SampleArgs& a, NoiseSource source) {
  const auto n = [](std::int64_t v) { return std::to_string(v); };
  if (a.rows <= 0 || a.rows > 65535) return "rows must be in [1, 65535] (got " + n(a.rows) + ")";
  if (a.vocab <= 0 || a.vocab > std::numeric_limits<std::int32_t>::max())
    return "vocab must be in [1, 2^31) (got " + n(a.vocab) + ")";
  if (a.logit_stride < a.vocab) return "logit row stride " + n(a.logit_stride) + " is smaller than vocab " + n(a.vocab);
  if (!a.logits) return "logits pointer is null";
  if (source == NoiseSource::tensor) {
    if (a.noise_stride < 0 || (a.noise_stride > 0 && a.noise_stride < a.vocab))
      return "noise row stride " + n(a.noise_stride) + " must be 0 (shared row) or at least vocab " + n(a.vocab);
    if (!a.noise) return "noise pointer is null";
  } else {
    if (!a.seeds) return "seeds pointer is null (this kernel draws its noise from each row's seed and offset)";
    if (!a.offsets) return "offsets pointer is null (this kernel draws its noise from each row's seed and offset)";
  }
  if (!a.temperatures) return "temperatures pointer is null";
  if (!a.tokens) return "tokens pointer is null";
  return {};
}

std::string check_verify_args(const VerifyArgs& a) {
  const auto n = [](std::int64_t v) { return std::to_string(v); };
  if (a.requests <= 0 || a.requests * (a.drafts + 1) > 65535)
    return "requests must be at least 1, with requests x (drafts + 1) at most 65535 (got " + n(a.requests) + " x " +
           n(a.drafts + 1) + ")";
  if (a.drafts < 0 || a.drafts > race::kMaxDrafts)
    return "drafts must be in [0, " + n(race::kMaxDrafts) + "] (got " + n(a.drafts) + ")";
  if (a.vocab <= 0 || a.vocab > std::numeric_limits<std::int32_t>::max())
    return "vocab must be in [1, 2^31) (got " + n(a.vocab) + ")";
  if (a.target_stride < a.vocab) return "target row stride " + n(a.target_stride) + " is smaller than vocab " + n(a.vocab);
  if (!a.target) return "target logits pointer is null";
  if (a.drafts > 0 && !a.draft_ids) return "draft ids pointer is null";
  if (a.drafts > 0 && !a.uniforms) return "uniforms pointer is null";
  if (!a.recovery_noise || !a.bonus_noise) return "recovery or bonus noise pointer is null";
  if (!a.temperatures) return "temperatures pointer is null";
  if (!a.tokens) return "tokens pointer is null";
  return {};
}

}  // namespace raceoracle::kernels

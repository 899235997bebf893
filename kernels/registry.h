#pragma once
/// Every kernel the suite can run, by name: the real kernels and their mutants,
/// each with its launcher and its numerics contract on this backend.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/host_api.h"

namespace raceoracle::kernels {

/// fused: two launches over tiles (stage-1 partials); baseline: five launches;
/// fused_filtered, sort_filtered: the filtered race (SPEC §9), one launch.
enum class Family : std::uint8_t { fused, baseline, fused_filtered, sort_filtered };

/// Host copies of the fused kernel's stage-1 partials, [rows, tiles].
struct HostPartials {
  std::vector<float> m, key;
  std::vector<std::int32_t> idx;
  std::int64_t tiles = 0;
};

struct RunOptions {
  FusedConfig config{};
  /// Fused only: filled after the launch (the properties read partials back).
  HostPartials* partials = nullptr;
  /// Fused only: called between the two stages with the device partials.
  std::function<void(const Partials&)> between_stages;
  /// Wait for the kernel before returning (benchmarks queue launches instead).
  bool synchronize = true;
};

struct Kernel {
  std::string name;  ///< "fused-post", "fused-pre", "baseline", "fused-philox", "fused-filtered", "fused-post~no_m_safe", ...
  Family family = Family::fused;
  ScalingOrder order = ScalingOrder::post;
  Defect defect = Defect::none;
  NoiseSource noise = NoiseSource::tensor;  ///< drawn: reads SampleArgs::seeds/offsets, never the noise tensor

  bool is_mutant() const { return defect != Defect::none; }
  bool has_partials() const { return family == Family::fused; }
  bool filters() const { return family == Family::fused_filtered || family == Family::sort_filtered; }
  race::NumericsContract contract() const;
  /// Launch and wait. Errors (bad arguments, HIP failures) come back in Status.
  Status run(const SampleArgs& a, const RunOptions& o = {}) const;
};

/// A kernel of the verify step (SPEC §11), by name: "verify-probs"
/// (kernels/verify.hip, as engines write it), "verify-fused" (kernels/verify_fused.hip).
struct VerifyKernel {
  std::string_view name;
  Status (*launch)(const VerifyArgs&, Defect, void* scratch);
  std::size_t (*scratch_bytes)(std::int64_t requests, std::int64_t drafts, std::int64_t vocab);
  race::NumericsContract contract() const;  ///< on this backend
};
const std::vector<VerifyKernel>& verify_kernels();
const VerifyKernel* find_verify_kernel(std::string_view name);  ///< nullptr if unknown

const std::vector<Kernel>& kernels();  ///< the real ones
const std::vector<Kernel>& mutants();
const Kernel* find_kernel(std::string_view name);  ///< either list; nullptr if unknown
/// The real fused kernel of this scaling order that reads the noise tensor ("fused-post", "fused-pre").
const Kernel& fused_kernel(ScalingOrder order);
/// The real kernel a mutant breaks ("fused-post" of "fused-post~no_m_safe"); a real kernel's own name.
std::string_view real_kernel_name(const Kernel& k);
std::string kernel_names();                         ///< comma-separated, real ones first
/// Refuses (std::invalid_argument) in a build without the named mutants
/// (RACEORACLE_MUTANTS=OFF; kernels/defect.h): a gate over none would pass
/// by default, and a mutant's launch there fails, which is no kill.
void require_mutants_built();
/// The kernels named (every real one, or every mutant, when none are);
/// std::invalid_argument on an unknown name, or on a name of the other list
/// (saying which command runs it).
std::vector<const Kernel*> resolve_kernels(const std::vector<std::string>& names, bool want_mutants);

}  // namespace raceoracle::kernels

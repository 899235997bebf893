#pragma once
/// Deliberate defects (SPEC §6). A mutant is the kernel compiled with one of
/// these as a template argument: the defect is a compile-time switch in the
/// kernel source, never a copy of the kernel. `none` is the real kernel. The
/// list, with what each defect does, is kernels/defect_list.inc.
#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <type_traits>
#include <utility>

namespace raceoracle::kernels {

enum class Defect : std::uint8_t {
#define RACEORACLE_DEFECT(name, what) name,
#include "kernels/defect_list.inc"
#undef RACEORACLE_DEFECT
};

const char* to_string(Defect d);
const char* describe(Defect d);  ///< what the defect does, one line

/// A set of defects known at compile time: the ones a kernel is built with.
template <Defect... Ds>
struct DefectSet {
  static constexpr Defect values[] = {Ds...};
  static constexpr bool contains(Defect d) { return ((d == Ds) || ...); }
};

/// Whether this build compiles the named mutants into its kernels (CMake's
/// RACEORACLE_MUTANTS: ON but in the sanitizer build, whose tests run none,
/// and the nvcc build check; each mutant is a template instantiation of its
/// kernel, most of the kernels' compile time). Not inline: each unit's own,
/// as the mutation engine's schemata units are built without them and the
/// rest of their program with.
#ifdef RACEORACLE_NO_MUTANTS
constexpr bool kMutantsBuilt = false;
#else
constexpr bool kMutantsBuilt = true;
#endif
/// The defects a kernel is built with: `none` (the real kernel) and, where
/// the mutants are built, Ds.
template <Defect... Ds>
using BuiltDefects = std::conditional_t<kMutantsBuilt, DefectSet<Defect::none, Ds...>, DefectSet<Defect::none>>;

inline constexpr Defect kAllDefects[] = {
#define RACEORACLE_DEFECT(name, what) Defect::name,
#include "kernels/defect_list.inc"
#undef RACEORACLE_DEFECT
};

/// The defects of drawn noise (race/noise.h) alone: a kernel that reads its
/// noise has no Philox counter, key or uniform to get wrong.
inline constexpr Defect kDrawnOnly[] = {Defect::philox_counter, Defect::philox_key, Defect::uniform_zero,
                                        Defect::draw_skip, Defect::floor_above_e};
constexpr bool drawn_only(Defect d) {
  for (Defect x : kDrawnOnly)
    if (x == d) return true;
  return false;
}
/// The defects a kernel that draws its noise is built with.
using DrawnDefects = BuiltDefects<kDrawnOnly[0], kDrawnOnly[1], kDrawnOnly[2], kDrawnOnly[3], kDrawnOnly[4]>;
static_assert(std::size(kDrawnOnly) == 5, "DrawnDefects lists every entry of kDrawnOnly");

/// The defects of the filtered race alone (SPEC §9): a kernel without filters
/// has no mass, crossing or per-row filter to get wrong.
inline constexpr Defect kFilterOnly[] = {Defect::joint_mass, Defect::crossing_dropped, Defect::topk_exactly_k,
                                         Defect::filters_row0, Defect::mass_bf16, Defect::untempered_filter};
constexpr bool filter_only(Defect d) {
  for (Defect x : kFilterOnly)
    if (x == d) return true;
  return false;
}

/// The defects of the verify step alone (SPEC §11): a sampling kernel has no
/// acceptance, residual or bonus to get wrong.
inline constexpr Defect kVerifyOnly[] = {Defect::accept_strict, Defect::residual_unclamped, Defect::recover_from_target,
                                         Defect::bonus_after_reject, Defect::draft_row0, Defect::eps_dropped,
                                         Defect::draft_counts_ignored, Defect::verify_filters_ignored};
constexpr bool verify_only(Defect d) {
  for (Defect x : kVerifyOnly)
    if (x == d) return true;
  return false;
}
/// The defects the verify kernel is built with.
using VerifyDefects = BuiltDefects<kVerifyOnly[0], kVerifyOnly[1], kVerifyOnly[2], kVerifyOnly[3], kVerifyOnly[4],
                                   kVerifyOnly[5], kVerifyOnly[6], kVerifyOnly[7]>;
static_assert(std::size(kVerifyOnly) == 8, "VerifyDefects lists every entry of kVerifyOnly");

inline constexpr std::size_t kTensorDefectCount =
    std::size(kAllDefects) - 1 - std::size(kDrawnOnly) - std::size(kFilterOnly) - std::size(kVerifyOnly);
constexpr std::array<Defect, kTensorDefectCount> tensor_defects() {
  std::array<Defect, kTensorDefectCount> out{};
  std::size_t n = 0;
  for (Defect d : kAllDefects)
    if (d != Defect::none && !drawn_only(d) && !filter_only(d) && !verify_only(d)) out[n++] = d;
  return out;
}
inline constexpr auto kTensorDefects = tensor_defects();
template <std::size_t... I>
BuiltDefects<kTensorDefects[I]...> tensor_set(std::index_sequence<I...>);
/// Every defect but the drawn-noise, filter and verify ones, `none` first: the fused kernel that reads its noise.
using TensorDefects = decltype(tensor_set(std::make_index_sequence<kTensorDefectCount>{}));

/// The one runtime-to-compile-time dispatch: calls f(std::integral_constant<
/// Defect, D>{}) for the D of `set` that equals `d` and returns its result;
/// `otherwise` when `d` is not in the set.
template <Defect... Ds, class F, class R>
R visit_defect(DefectSet<Ds...>, Defect d, F&& f, R otherwise) {
  R r = otherwise;
  (void)((d == Ds ? (r = f(std::integral_constant<Defect, Ds>{}), true) : false) || ...);
  return r;
}

}  // namespace raceoracle::kernels

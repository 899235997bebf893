#pragma once
/// Deliberate defects (SPEC §6). A mutant is the kernel compiled with one of
/// these as a template argument: the defect is a compile-time switch in the
/// kernel source, never a copy of the kernel. `none` is the real kernel. The
/// list, with what each defect does, is kernels/defect_list.inc.
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

inline constexpr Defect kAllDefects[] = {
#define RACEORACLE_DEFECT(name, what) Defect::name,
#include "kernels/defect_list.inc"
#undef RACEORACLE_DEFECT
};
template <std::size_t... I>
DefectSet<kAllDefects[I]...> all_defects(std::index_sequence<I...>);
/// Every defect of the list, `none` first.
using AllDefects = decltype(all_defects(std::make_index_sequence<std::size(kAllDefects)>{}));

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

#include "kernels/registry.h"

#include <algorithm>
#include <stdexcept>

#include "kernels/device_memory.h"

namespace raceoracle::kernels {
namespace {

/// Per-thread scratch, grown on demand, so repeated launches do not allocate.
struct Workspace {
  DeviceArray<float> m, key;
  DeviceArray<std::int32_t> idx;
  DeviceArray<unsigned char> scratch;
};
thread_local Workspace t_ws;

template <class T>
T* at_least(DeviceArray<T>& a, std::size_t n) {
  if (a.size() < n) a = DeviceArray<T>(n);
  return a.get();
}

Status run_fused(const Kernel& k, const SampleArgs& a, const RunOptions& o) {
  if (std::string e = check_args(a, k.noise); !e.empty()) return Status::error(e);
  if (!is_supported(o.config)) return Status::error("unsupported fused config; supported: " + supported_configs());
  Partials p;
  p.tiles = tile_count(a.vocab, o.config);
  const std::size_t n = std::size_t(a.rows * p.tiles);
  p.m = at_least(t_ws.m, n);
  p.key = at_least(t_ws.key, n);
  p.idx = at_least(t_ws.idx, n);
  if (Status s = fused_stage1(a, o.config, k.order, k.noise, k.defect, p); !s.ok) return s;
  if (o.between_stages) o.between_stages(p);
  if (Status s = fused_stage2(a, o.config, k.noise, k.defect, p); !s.ok) return s;
  if (o.partials) {
    o.partials->tiles = p.tiles;
    o.partials->m.resize(n);
    o.partials->key.resize(n);
    o.partials->idx.resize(n);
    copy_to_host(o.partials->m.data(), p.m, n * 4);
    copy_to_host(o.partials->key.data(), p.key, n * 4);
    copy_to_host(o.partials->idx.data(), p.idx, n * 4);
  }
  if (o.synchronize) device_synchronize();
  return {};
}

Status run_baseline(const Kernel& k, const SampleArgs& a, bool synchronize) {
  if (std::string e = check_args(a); !e.empty()) return Status::error(e);
  void* scratch = at_least(t_ws.scratch, baseline_scratch_bytes(a.rows, a.vocab));
  Status s = sample_baseline(a, k.defect, scratch);
  if (s.ok && synchronize) device_synchronize();
  return s;
}

Status run_filtered(const Kernel& k, const SampleArgs& a, bool synchronize) {
  Status s;
  if (k.family == Family::fused_filtered) {
    s = sample_filtered_select(a, k.defect);
  } else {
    if (std::string e = check_args(a); !e.empty()) return Status::error(e);
    s = sample_filtered_sort(a, at_least(t_ws.scratch, filtered_sort_scratch_bytes(a.rows, a.vocab)));
  }
  if (s.ok && synchronize) device_synchronize();
  return s;
}

Kernel make(std::string name, Family f, ScalingOrder o, Defect d, NoiseSource n = NoiseSource::tensor) {
  return Kernel{std::move(name), f, o, d, n};
}

constexpr char kMutantMark = '~';  ///< a mutant is named after its real kernel: "fused-post~no_m_safe"

/// The mutants of real kernel `real_name`, one per defect of `Defects`: that kernel with the defect.
template <class Defects>
void add_mutants(std::vector<Kernel>& v, std::string_view real_name) {
  const auto& ks = kernels();
  const auto real = std::find_if(ks.begin(), ks.end(), [&](const Kernel& k) { return k.name == real_name; });
  if (real == ks.end()) throw std::logic_error("mutants of an unregistered kernel: " + std::string(real_name));
  for (Defect d : Defects::values)
    if (d != Defect::none) {
      Kernel m = *real;
      m.name = real->name + kMutantMark + to_string(d);
      m.defect = d;
      v.push_back(std::move(m));
    }
}

}  // namespace

namespace {
/// This backend's division and expf, as its math library publishes them.
void set_platform_math(race::NumericsContract& c) {
  c.div_ulp = 0.5;  // IEEE '/' (nvcc's default -prec-div=true; never built with fast math)
#if defined(RACEORACLE_BACKEND_CPU)
  c.exp_ulp = c.rescale_ulp = 1.0;  // glibc expf: at most 1 ulp (x86_64 libm-test-ulps)
#elif defined(RACEORACLE_BACKEND_NVIDIA)
  c.exp_ulp = c.rescale_ulp = 2.0;  // CUDA Math API: expf 2 ulp
#else
  c.exp_ulp = c.rescale_ulp = 2.0;  // OCML expf: 1 ulp on [-10, 10]; 2 taken for the rest of the range
#endif
}
}  // namespace

race::NumericsContract VerifyKernel::contract() const {
  // fl(x / t), the row's max subtracted (pre-scale), expf, a sum in any order,
  // p = w / S; the races divide p by fl(E + eps). The fused kernel sums each
  // tile on its own max and rescales the tile's sum once to the row's.
  race::NumericsContract c;
  c.order = ScalingOrder::pre;
  c.scale_divides = true;
  c.rescales = name == "verify-fused" ? 1 : 0;
  c.normalises = true;
  // Filters as the fused filtered race selects them (kernels/verify_filters.h):
  // rank by the logit, every id tied at the k-th kept, top-p on the top-k
  // set, ties by id, sums in any order.
  c.filters.applied = true;
  c.filters.top_k_ties = race::TopKTies::keep_all;
  c.filters.top_p_mass = race::TopPMass::top_k_first;
  c.filters.tie_order = race::TieOrder::lowest_id;
  set_platform_math(c);
  return c;
}

const std::vector<VerifyKernel>& verify_kernels() {
  static const std::vector<VerifyKernel> v = {{"verify-probs", verify_probs, verify_scratch_bytes},
                                              {"verify-fused", verify_fused, verify_fused_scratch_bytes}};
  return v;
}

const VerifyKernel* find_verify_kernel(std::string_view name) {
  for (const VerifyKernel& k : verify_kernels())
    if (k.name == name) return &k;
  return nullptr;
}

race::NumericsContract Kernel::contract() const {
  race::NumericsContract c;
  c.order = order;
  // The fused kernel's stage 2 rescales each key once. The baseline's online
  // race (baseline.hip) rescales at most once per load of a thread, and a
  // thread loads at most once per kBaselineRaceThreads ids (one id at a time
  // in an unaligned row), plus the vector tail's load and the block's rescale;
  // then it divides by the row's sum.
  c.rescales = family == Family::fused ? 1 : family == Family::baseline ? 2 : 0;
  if (family == Family::baseline) {
    c.online_ids = kBaselineRaceThreads;
    c.normalises = true;
  }
  // The filtered kernels race on the row's max (no rescale), rank by the
  // logit, keep every id tied at the k-th (keep_all), measure top-p on the
  // top-k set (top_k_first), order ties by id, and sum in any order
  // (kernels/FILTERED.md).
  if (filters()) {
    c.filters.applied = true;
    c.filters.top_k_ties = race::TopKTies::keep_all;
    c.filters.top_p_mass = race::TopPMass::top_k_first;
    c.filters.tie_order = race::TieOrder::lowest_id;
  }
  set_platform_math(c);
  c.noise_ulp = noise == NoiseSource::drawn ? race::kDrawnNoiseUlp : 0.0;  // logf's 1 ulp + the oracle's rounding
  return c;
}

Status Kernel::run(const SampleArgs& a, const RunOptions& o) const {
  try {
    switch (family) {
      case Family::fused: return run_fused(*this, a, o);
      case Family::baseline: return run_baseline(*this, a, o.synchronize);
      case Family::fused_filtered:
      case Family::sort_filtered: return run_filtered(*this, a, o.synchronize);
    }
    return Status::error(name + ": unknown kernel family");
  } catch (const std::exception& e) {
    return Status::error(name + ": " + e.what());
  }
}

const std::vector<Kernel>& kernels() {
  static const std::vector<Kernel> k{
      make("fused-post", Family::fused, ScalingOrder::post, Defect::none),
      make("fused-pre", Family::fused, ScalingOrder::pre, Defect::none),
      make("baseline", Family::baseline, ScalingOrder::pre, Defect::none),
      make("fused-philox", Family::fused, ScalingOrder::post, Defect::none, NoiseSource::drawn),
      make("fused-filtered", Family::fused_filtered, ScalingOrder::post, Defect::none),
      make("sort-filtered", Family::sort_filtered, ScalingOrder::post, Defect::none),
  };
  return k;
}

const std::vector<Kernel>& mutants() {
  static const std::vector<Kernel> m = [] {
    std::vector<Kernel> v;
    add_mutants<TensorDefects>(v, "fused-post");
    add_mutants<DrawnDefects>(v, "fused-philox");
    add_mutants<BaselineDefects>(v, "baseline");
    add_mutants<FilteredDefects>(v, "fused-filtered");
    return v;
  }();
  return m;
}

std::string_view real_kernel_name(const Kernel& k) {
  return std::string_view(k.name).substr(0, k.name.find(kMutantMark));
}

const Kernel* find_kernel(std::string_view name) {
  for (const auto* list : {&kernels(), &mutants()})
    for (const Kernel& k : *list)
      if (k.name == name) return &k;
  return nullptr;
}

const Kernel& fused_kernel(ScalingOrder order) {
  for (const Kernel& k : kernels())
    if (k.family == Family::fused && k.order == order && k.noise == NoiseSource::tensor) return k;
  throw std::logic_error("no fused kernel of that scaling order on this backend");
}

std::string kernel_names() {
  std::string s;
  for (const auto* list : {&kernels(), &mutants()})
    for (const Kernel& k : *list) s += (s.empty() ? "" : ", ") + k.name;
  return s;
}

void require_mutants_built() {
  if (!kMutantsBuilt)
    throw std::invalid_argument("this build has no named mutants (configured with -DRACEORACLE_MUTANTS=OFF, as the "
                                "sanitizer build is): run the mutants from a build with them (`check --no-mutants` runs the laws alone)");
}

std::vector<const Kernel*> resolve_kernels(const std::vector<std::string>& names, bool want_mutants) {
  if (want_mutants) require_mutants_built();
  std::vector<const Kernel*> out;
  if (names.empty()) {
    for (const auto& k : want_mutants ? mutants() : kernels()) out.push_back(&k);
    return out;
  }
  for (const auto& n : names) {
    const Kernel* k = find_kernel(n);
    if (!k && n.find(kMutantMark) != std::string::npos) require_mutants_built();  // a mutant's name, none built
    if (!k) throw std::invalid_argument("unknown kernel '" + n + "'; known: " + kernel_names());
    if (k->is_mutant() && !want_mutants)
      throw std::invalid_argument("'" + n + "' is a mutant: run it with `raceoracle mutants --mutants " + n +
                                  "`, which runs each law in a process of its own (a defective kernel may crash the "
                                  "process it runs in), or replay one failure with `raceoracle replay`");
    if (!k->is_mutant() && want_mutants)
      throw std::invalid_argument("'" + n + "' is a real kernel, not a mutant: check it with `raceoracle check --kernels " +
                                  n + "`");
    out.push_back(k);
  }
  return out;
}

}  // namespace raceoracle::kernels

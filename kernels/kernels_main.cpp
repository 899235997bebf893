// raceoracle-kernels: the kernels and mutants this build holds and the devices
// its backend sees. It links every kernel and nothing of the judge: the GPU
// backends' build check (ci/build-backends.sh) compiles the device code and
// links it into this, without building the host libraries again.
#include <cstdio>

#include "kernels/device_memory.h"
#include "kernels/registry.h"

int main() {
  using namespace raceoracle::kernels;
  std::printf("backend %s: %d device(s)%s%s\n", backend_name(), device_count(), device_count() > 0 ? ", " : "",
              device_count() > 0 ? device_description().c_str() : "");
  for (const Kernel& k : kernels()) std::printf("kernel %s\n", k.name.c_str());
  for (const Kernel& k : mutants()) std::printf("mutant %s\n", k.name.c_str());
  if (!kMutantsBuilt) std::printf("no mutants: built with RACEORACLE_MUTANTS=OFF\n");
  return 0;
}

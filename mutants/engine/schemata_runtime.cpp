// The switch of the mutant schemata (schemata.h): which machine-made mutant
// this process runs, read once from RACEORACLE_MUTANT before main; and, when
// RACEORACLE_MUTANT_COVERAGE names a file, the ids of the sites that ran,
// written there at exit.
#include <cstdio>
#include <cstdlib>

#include "mutants/engine/schemata.h"

namespace {
int active_from_environment() {
  const char* s = std::getenv("RACEORACLE_MUTANT");
  if (!s || !*s) return 0;
  char* end = nullptr;
  const long id = std::strtol(s, &end, 10);
  if (*end != '\0' || id < 0 || id >= RACEORACLE_MUTANT_LIMIT) {
    std::fprintf(stderr, "raceoracle: RACEORACLE_MUTANT must be a mutant id, got '%s'\n", s);
    std::exit(2);
  }
  return int(id);
}

void write_coverage() {
  const char* path = std::getenv("RACEORACLE_MUTANT_COVERAGE");
  if (!path || !*path) return;
  if (std::FILE* f = std::fopen(path, "w")) {
    for (int id = 1; id < RACEORACLE_MUTANT_LIMIT; ++id)
      if (__atomic_load_n(&raceoracle_schemata_reached[id], __ATOMIC_RELAXED)) std::fprintf(f, "%d\n", id);
    std::fclose(f);
  }
}

int register_coverage() { return std::atexit(write_coverage); }
}  // namespace

extern "C" {
int raceoracle_schemata_active = active_from_environment();
unsigned char raceoracle_schemata_reached[RACEORACLE_MUTANT_LIMIT] = {};
}
static const int coverage_registered = register_coverage();

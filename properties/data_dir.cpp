#include "properties/data_dir.h"

#include <cstdlib>
#include <filesystem>

namespace raceoracle::properties {

std::string data_dir() {
  namespace fs = std::filesystem;
  if (const char* env = std::getenv("RACEORACLE_DATA_DIR"); env && *env) return env;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed = exe.parent_path().parent_path() / "share" / "raceoracle";
    if (fs::is_directory(installed / "properties" / "corpus", ec)) return installed.string();
  }
  return RACEORACLE_SOURCE_DIR;
}

}  // namespace raceoracle::properties

#pragma once
/// Where raceoracle's data lives (the regression corpus, the kernel sources
/// the mutation report quotes): RACEORACLE_DATA_DIR when set; else
/// <prefix>/share/raceoracle beside an installed <prefix>/bin/raceoracle;
/// else the source tree this build was configured from.
#include <string>

namespace raceoracle::properties {

std::string data_dir();

}  // namespace raceoracle::properties

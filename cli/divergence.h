#pragma once
/// `raceoracle divergence`: the divergence study (analysis/divergence.h)
/// printed as tables and written as CSV, JSON and a plot; or two dumps of
/// the same inputs compared.
#include <string>
#include <vector>

#include "analysis/divergence.h"
#include "protocol/external_sampler.h"

namespace raceoracle::cli {

struct DivergenceOptions {
  analysis::DivergenceOptions study;
  std::string out_dir = "divergence";  ///< CSV, JSON and SVG go here
  bool out_given = false;  ///< --out was given (comparing two dumps writes files only then)
  protocol::SamplerSpec sampler;  ///< given: that sampler's tokens on the same batches, against fused-post and the oracle
  std::vector<std::string> dumps;  ///< two dumps of the same inputs (verify's format): their tokens compared instead
  std::string html;  ///< the study's or the comparison's page (cli/html_report.h); empty: none
  /// Given: the run's tallies (study.shard's part) written here for `raceoracle merge`, no files in out_dir.
  std::string state;
  int devices = 0;  ///< > 0 (or -1: every device): that many shards in parallel, one a device, merged
  std::vector<std::string> args;  ///< the command line (argv[0] first): what --devices runs as shards
};

int divergence(const DivergenceOptions& o);
/// `raceoracle merge` of divergence shard states: the run's tables and files, as an unsharded run writes them.
int merge_divergence(const std::vector<std::string>& states, const std::string& out_dir, const std::string& html);

}  // namespace raceoracle::cli

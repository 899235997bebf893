// `raceoracle list`: kernels, mutants and laws.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "kernels/device_memory.h"
#include "properties/data_dir.h"
#include "properties/suite.h"
#include "properties/verify_laws.h"
#include "protocol/contract_schema.h"
#include "race/noise_streams.h"

namespace raceoracle::cli {

namespace {

/// The contract's schema (protocol/contract_schema.h), the words of its stream names and versions included:
/// what the Python package's words are (python/raceoracle/_schema.json).
nlohmann::json schema_json() {
  using nlohmann::json;
  json fields = json::array();
  for (const protocol::SchemaField& f : protocol::kSchema) {
    json words = json::array();
    for (const char* w : f.words) words.push_back(w);
    if (f.kind == protocol::FieldKind::stream_name)
      for (const race::StreamInfo& s : race::kStreams) words.push_back(s.name);
    fields.push_back({{"name", f.name}, {"kind", protocol::kFieldKindNames[int(f.kind)]},
                      {"group", protocol::kFieldGroupNames[int(f.group)]}, {"words", words},
                      {"doc", f.doc}});
  }
  json versions = json::object();
  for (const race::StreamVersion& v : race::kStreamVersions)
    versions[race::to_string(v.kind)].push_back({{"version", v.version}, {"describes", v.describes}});
  json latest = json::object();
  for (const race::StreamInfo& s : race::kStreams) latest[s.name] = s.latest;
  return {{"fields", fields}, {"stream_versions", versions}, {"latest_stream_versions", latest}};
}

int list_json() {
  using nlohmann::json;
  json out = {{"backend", kernels::backend_name()}, {"data", properties::data_dir()}, {"mutants_built", kernels::kMutantsBuilt},
              {"mutants", json::array()}, {"verify_mutants", json::array()}};
  for (const auto& k : kernels::kernels()) out["kernels"].push_back(k.name);
  for (const auto& k : kernels::mutants()) out["mutants"].push_back(k.name);
  for (const auto& p : properties::laws())
    out["laws"].push_back({{"name", p.name}, {"statement", p.statement}, {"needs", properties::needs_note(p.needs)}});
  for (const auto& k : kernels::verify_kernels()) out["verify_kernels"].push_back(std::string(k.name));
  for (const auto& m : properties::verify_mutants({})) out["verify_mutants"].push_back(m.name());
  for (const auto& p : properties::verify_laws()) out["verify_laws"].push_back({{"name", p.name}, {"statement", p.statement}});
  out["schema"] = schema_json();
  std::printf("%s\n", out.dump(2).c_str());
  return 0;
}

}  // namespace

int list(bool json) {
  if (json) return list_json();
  std::printf("data: %s\n", properties::data_dir().c_str());
  std::printf("kernels (%s backend):\n", kernels::backend_name());
  for (const auto& k : kernels::kernels()) {
    const auto c = k.contract();
    std::printf("  %-24s %s-scale, exp %.1f ulp, div %.1f ulp%s\n", k.name.c_str(), oracle::to_string(c.order), c.exp_ulp,
                c.div_ulp, c.rescales > 0 ? ", two-stage" : "");
  }
  std::printf("mutants:%s\n", kernels::kMutantsBuilt ? "" : " none (this build: RACEORACLE_MUTANTS=OFF)");
  for (const auto& k : kernels::mutants()) std::printf("  %s\n", k.name.c_str());
  std::printf("laws:\n");
  for (const auto& p : properties::laws()) {
    const std::string needs = properties::needs_note(p.needs);
    std::printf("  %-24s %s%s\n", p.name.c_str(), p.statement.c_str(), needs.empty() ? "" : (" (" + needs + ")").c_str());
  }
  std::printf("verify kernels (SPEC §11):\n");
  for (const auto& k : kernels::verify_kernels()) std::printf("  %s\n", std::string(k.name).c_str());
  std::printf("verify mutants:%s\n", kernels::kMutantsBuilt ? "" : " none");
  for (const auto& m : properties::verify_mutants({})) std::printf("  %s\n", m.name().c_str());
  std::printf("verify laws:\n");
  for (const auto& p : properties::verify_laws()) std::printf("  %-30s %s\n", p.name.c_str(), p.statement.c_str());
  return 0;
}

}  // namespace raceoracle::cli

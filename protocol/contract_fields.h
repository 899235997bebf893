#pragma once
/// A sampler's numerics contract as string fields (their schema: contract_schema.h), the one spelling shared by
/// `verify`'s file metadata, the protocol handshake and the command-line
/// overrides: `scaling_order` (post|pre), `exp_ulp`, `div_ulp` (ulps, in
/// [0, kMaxUlp]), `noise_ulp` (drawn noise only: the sampler's E against the
/// oracle's) and `stages` (2: a fused sampler's rescale, 1: unfused); the
/// field's arithmetic (oracle/ERROR_MODEL.md): `scale_op`, `key_op`,
/// `key_dtype`, `rescales`, `online_ids`, `normalise`, `key_domain`, `log_ulp`; and its
/// conventions (docs/CONVENTIONS.md): `greedy_rule` (definition|zero|below,
/// with `greedy_below`), `eps_rule` (request|none|fixed, with `eps_fixed`),
/// `nan_logits` (masked|out_of_contract); its filters (SPEC §9): `filters`
/// (none|top_k,top_p,min_p: it applies each row's), `top_k_ties`
/// (keep_all|exactly_k), `top_p_mass` (top_k_first|joint), `filter_ties`
/// (lowest_id|any), `filter_sum_depth` (additions on a sum's path; 0: V).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "oracle/contract.h"
#include "protocol/contract_schema.h"
#include "race/noise_streams.h"
#include "race/verify.h"

namespace raceoracle::protocol {

using Fields = std::map<std::string, std::string>;

/// The contract terms a user may override on the command line: the field's
/// name and its flag, written once (the CLI registers the flags by these
/// names; a replay command prints them back).
struct OverridableTerm {
  const char* field;
  const char* flag;
};
inline constexpr OverridableTerm kOverridableTerms[] = {
    {"scaling_order", "--scaling-order"}, {"exp_ulp", "--exp-ulp"},       {"div_ulp", "--div-ulp"},
    {"stages", "--stages"},               {"rescales", "--rescales"},     {"normalise", "--normalise"},
    {"key_domain", "--key-domain"},       {"key_dtype", "--key-dtype"}};
/// The flag of an overridable field; std::invalid_argument for any other.
const char* override_flag(const std::string& field);

/// The terms the command line sets over a sampler's declared contract: each
/// unset unless its flag was given.
struct ContractOverrides {
  std::optional<oracle::ScalingOrder> scaling_order;
  std::optional<double> exp_ulp, div_ulp;
  std::optional<int> stages;  ///< 1 or 2
  std::optional<int> rescales;
  std::optional<bool> normalises;
  std::optional<race::KeyDomain> key_domain;
  std::optional<bool> key_bf16;
  bool operator==(const ContractOverrides&) const = default;
};
/// The terms set, as contract fields (their one spelling: a report's
/// `sampler_overrides`, a replay command's flags); and back, every field an
/// overridable term (std::invalid_argument naming one that is not, or a
/// malformed value).
Fields to_fields(const ContractOverrides& o);
ContractOverrides overrides_from_fields(const Fields& f);
/// `c` with the terms set in `o` (an exp override is the rescale's too, as
/// parse_contract reads it).
oracle::NumericsContract apply(const ContractOverrides& o, const oracle::NumericsContract& c);
/// " --scaling-order pre --exp-ulp 3": the flags that set `o` again.
std::string override_flags(const ContractOverrides& o);

/// Beyond this an error bound says nothing: every key would be ambiguous.
inline constexpr double kMaxUlp = 1 << 20;
/// The largest `rescales` or `online_ids` a contract states.
inline constexpr int kMaxCount = 1 << 20;
/// Defaults for a sampler that states nothing: 2 ulps of exp and division
/// (CUDA expf and __fdividef, HIP's OCML, glibc) and a fused rescale.
oracle::NumericsContract default_sampler_contract();

/// Refuses (std::invalid_argument naming it and what is allowed) a key of
/// `f` that is neither a contract field nor one of `other`: a misspelt term
/// must not leave the sampler judged by a default it did not mean.
void refuse_unknown_fields(const Fields& f, const std::vector<std::string>& other);

/// The contract `fields` state over `defaults`; unknown keys are ignored.
/// Throws std::invalid_argument naming the field, the value and what is allowed.
oracle::NumericsContract parse_contract(const Fields& fields, oracle::NumericsContract defaults = default_sampler_contract());
Fields contract_fields(const oracle::NumericsContract& c);
/// A sampler that reads a noise tensor uses that E, judged exactly: a
/// `noise_ulp` above 0 would only widen its bound. Throws naming the field.
void require_tensor_noise_exact(const oracle::NumericsContract& c);
std::string describe_contract(const oracle::NumericsContract& c);  ///< "post-scale, exp 2 ulp, div 2 ulp, two-stage"

/// A contract with one arithmetic term more than a declared one, and that
/// term in the fields' spelling ("key_dtype = bf16").
struct TermWidening {
  std::string label;
  oracle::NumericsContract contract;
};
/// Each single term of oracle/ERROR_MODEL.md "The field's arithmetic" that
/// `declared` does not state (bf16 keys, the log domain, normalisation, the
/// reciprocal key, one more rescale, pre-scale): what a report tries when a
/// token is unexplained, to say which term the contract may be missing.
std::vector<TermWidening> missing_terms(const oracle::NumericsContract& declared);

/// A declared convention that differs from SPEC §1, named, with what it
/// changes: every report lists them.
struct Deviation {
  std::string term;         ///< "greedy rule"
  std::string declared;     ///< "T == 0"
  std::string definition;   ///< "T <= greedy_eps"
  std::string consequence;  ///< "rows with 0 < T <= greedy_eps are sampled at t = 1e-5; T < 0 is sampled"
  std::string describe() const;  ///< one line
};
std::vector<Deviation> deviations(const race::Conventions& c);
std::vector<std::string> describe_deviations(const race::Conventions& c);  ///< each one's describe()

/// A drawn-noise stream as fields (race/noise_streams.h): `noise_stream` (a
/// name of race::kStreams), `stream_layout` (torch: `tensor`, one draw over
/// the batch, the default, or `rows`, one generator per row), `stream_dtype`
/// (f32|bf16), `stream_sm_count` and `stream_threads_per_sm` (torch's grid;
/// default 132 x 2048, the H100/H200's), `stream_version` (the version of the
/// library the sampler follows, race::kStreamVersions; default the newest,
/// an unknown one refused). No `noise_stream`: nullopt (noise
/// tensors); a layout field without it is refused. Throws std::invalid_argument
/// naming the field, the value and what is allowed.
std::optional<race::NoiseStream> parse_stream(const Fields& fields);
Fields stream_fields(const race::NoiseStream& s);
/// The contract a sampler drawing from `s` is judged under: its noise terms
/// are the stream's transform bound (oracle::noise_bound).
oracle::NumericsContract with_stream_noise(oracle::NumericsContract c, const race::NoiseStream& s);

/// `uniform_compare` (f64, the default, or f32): how a verify step compares
/// a draft's ratio with its uniform (SPEC §11). Throws std::invalid_argument otherwise.
inline constexpr const char* kUniformCompareField = "uniform_compare";
race::VerifyRules parse_verify_rules(const Fields& fields);

/// A decimal float field: throws naming `key` unless it is a finite number.
float parse_float_field(const Fields& fields, const std::string& key, float fallback);
/// `eps` and `greedy_eps` (default 1e-10 each): finite and >= 0.
oracle::RaceConstants parse_race_constants(const Fields& fields);

}  // namespace raceoracle::protocol

// `raceoracle verify-step`'s judge (analysis/verify_step.h): a verify
// kernel's own ids written as a dump pass, with stochastic and deterministic
// drafts, fp32 and bf16 logits; a mutant's ids fail with the request named;
// malformed files and metadata are refused naming the tensor or field.
#include <gtest/gtest.h>

#include "analysis/verify_step.h"
#include "fixtures/verify_requests.h"
#include "kernels/registry.h"
#include "protocol/contract_fields.h"
#include "tests/protocol/safetensors_files.h"
#include "tests/support/mutants_built.h"

namespace raceoracle::analysis {
namespace {

using protocol::Safetensors;
using protocol::testing::tensor;

class VerifyStepFiles : public protocol::testing::SafetensorsFiles {
 protected:
  /// A batch's inputs and the ids verify kernel `kernel` (with `defect`) wrote, its contract in the metadata.
  Safetensors dump(const subject::VerifyBatch& b, const kernels::VerifyKernel& kernel,
                   kernels::Defect defect = kernels::Defect::none) {
    const std::vector<std::int32_t> tokens = subject::run_verify_kernel(kernel, b, defect);
    const std::int64_t R = b.requests, k = b.drafts, V = b.vocab;
    Safetensors s;
    if (b.dtype == race::Dtype::bf16) s.tensors["target_logits"] = tensor("BF16", {R, k + 1, V}, b.target_bf16);
    else s.tensors["target_logits"] = tensor("F32", {R, k + 1, V}, b.target_f32);
    s.tensors["draft_ids"] = tensor("I32", {R, k}, b.draft_ids);
    if (!b.draft_counts.empty()) s.tensors["draft_counts"] = tensor("I32", {R}, b.draft_counts);
    if (!b.draft_probs.empty()) s.tensors["draft_probs"] = tensor("F32", {R, k, V}, b.draft_probs);
    s.tensors["uniforms"] = tensor("F64", {R, k}, b.uniforms);
    s.tensors["recovery_noise"] = tensor("F32", {R, V}, b.recovery_noise);
    s.tensors["bonus_noise"] = tensor("F32", {R, V}, b.bonus_noise);
    s.tensors["temperatures"] = tensor("F32", {R}, b.temperatures);
    s.tensors["tokens"] = tensor("I32", {R, k + 1}, tokens);
    if (!b.filters.empty()) {
      std::vector<std::int32_t> top_k;
      std::vector<float> top_p, min_p;
      for (const race::RowFilter& f : b.filters) top_k.push_back(f.top_k), top_p.push_back(f.top_p), min_p.push_back(f.min_p);
      s.tensors["top_k"] = tensor("I32", {R}, top_k);
      s.tensors["top_p"] = tensor("F32", {R}, top_p);
      s.tensors["min_p"] = tensor("F32", {R}, min_p);
    }
    s.metadata = protocol::contract_fields(kernel.contract());
    return s;
  }
  void expect_error(const Safetensors& s, const std::string& needle) {
    try {
      verify_step_document(s);
      ADD_FAILURE() << "no error; expected one naming " << needle;
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  }
};

TEST_F(VerifyStepFiles, AKernelsOwnIdsPassAndAMutantsFail) {
  for (const kernels::VerifyKernel& kernel : kernels::verify_kernels()) {
    for (int seed = 0; seed < 6; ++seed) {
      fixtures::VerifyShape shape;
      shape.requests = 8, shape.drafts = 1 + seed % 3, shape.vocab = 600;
      shape.dtype = seed % 2 ? race::Dtype::bf16 : race::Dtype::f32;
      const subject::VerifyBatch b = fixtures::random_verify_batch(std::uint64_t(seed), shape, kernel.contract());
      const VerifyStepReport r = verify_step_document(dump(b, kernel));
      EXPECT_TRUE(r.ok()) << kernel.name << " seed " << seed << ": " << (r.failures.empty() ? "" : r.failures[0]);
      EXPECT_EQ(r.identical + r.explained, b.requests);
      EXPECT_EQ(r.draft_probs, !b.draft_probs.empty());
    }
  }
  // The bonus after a rejection: caught on the first batch with a rejection, the request named.
  RACEORACLE_SKIP_WITHOUT_MUTANTS();
  bool caught = false;
  for (int seed = 0; seed < 6 && !caught; ++seed) {
    fixtures::VerifyShape shape;
    shape.requests = 8, shape.drafts = 2, shape.vocab = 600;
    const kernels::VerifyKernel& kernel = kernels::verify_kernels().front();
    const subject::VerifyBatch b = fixtures::random_verify_batch(std::uint64_t(seed), shape, kernel.contract());
    const VerifyStepReport r = verify_step_document(dump(b, kernel, kernels::Defect::bonus_after_reject));
    if (!r.ok()) {
      caught = true;
      ASSERT_FALSE(r.failures.empty());
      EXPECT_NE(r.failures[0].find("request "), std::string::npos) << r.failures[0];
    }
  }
  EXPECT_TRUE(caught);
}

// Requests with filters (SPEC §9 on every target row): the oracle's own chains
// pass; an unfiltered kernel's ids fail once top_k = 1 leaves each row its
// argmax alone; filters given in part, or undeclared, are refused.
TEST_F(VerifyStepFiles, FilteredRequestsAreJudgedUnderTheirFilters) {
  fixtures::VerifyShape shape;
  shape.requests = 8, shape.drafts = 2, shape.vocab = 600;
  const kernels::VerifyKernel& kernel = kernels::verify_kernels().front();
  const subject::VerifyBatch b = fixtures::random_verify_batch(3, shape, kernel.contract());
  Safetensors s = dump(b, kernel);
  const std::int64_t R = b.requests, k = b.drafts;
  s.tensors["top_k"] = tensor("I32", {R}, std::vector<std::int32_t>(std::size_t(R), 1));
  s.tensors["top_p"] = tensor("F32", {R}, std::vector<float>(std::size_t(R), 1.0f));
  s.tensors["min_p"] = tensor("F32", {R}, std::vector<float>(std::size_t(R), 0.0f));
  const VerifyStepReport unfiltered_ids = verify_step_document(s);
  EXPECT_TRUE(unfiltered_ids.filtered);
  EXPECT_FALSE(unfiltered_ids.ok()) << "an unfiltered kernel's ids pass under top_k = 1";
  // The exact chains under the filters, written as a sampler would.
  const race::RowFilter one{1, 1.0f, 0.0f};
  std::vector<std::int32_t> exact(std::size_t(R * (k + 1)), race::kVerifyPlaceholder);
  for (std::int64_t r = 0; r < R; ++r) {
    oracle::VerifyView v = b.request(r);
    v.filter = &one;
    const oracle::VerifyVerdict verdict = oracle::decide_verify(v, kernel.contract(), b.constants);
    for (std::int64_t j = 0; j < verdict.accepted; ++j) exact[std::size_t(r * (k + 1) + j)] = b.draft_ids[std::size_t(r * k + j)];
    exact[std::size_t(r * (k + 1) + verdict.accepted)] = std::int32_t(verdict.token);
  }
  s.tensors["tokens"] = tensor("I32", {R, k + 1}, exact);
  const VerifyStepReport filtered_ids = verify_step_document(s);
  EXPECT_TRUE(filtered_ids.ok()) << (filtered_ids.failures.empty() ? "" : filtered_ids.failures[0]);
  EXPECT_EQ(filtered_ids.identical, R);
  const std::map<std::string, std::string> declared = s.metadata;
  for (const char* semantics : {"top_k_ties", "top_p_mass", "filter_ties", "filter_sum_depth"}) s.metadata.erase(semantics);
  s.metadata["filters"] = "none";  // the tensors without the declaration: were they applied?
  expect_error(s, "does not declare filters = top_k,top_p,min_p");
  s.metadata = declared;
  s.tensors.erase("min_p");
  expect_error(s, "give top_k, top_p and min_p together");
}

TEST_F(VerifyStepFiles, MalformedFilesAndMetadataAreRefusedNamingWhat) {
  fixtures::VerifyShape shape;
  shape.requests = 3, shape.drafts = 2, shape.vocab = 50;
  const kernels::VerifyKernel& kernel = kernels::verify_kernels().front();
  const subject::VerifyBatch b = fixtures::random_verify_batch(1, shape, kernel.contract());
  const Safetensors good = dump(b, kernel);
  EXPECT_TRUE(verify_step_document(good).ok());
  Safetensors s = good;
  s.tensors.erase("uniforms");
  expect_error(s, "uniforms");
  s = good;
  s.tensors["uniforms"] = tensor("F64", {3, 1}, std::vector<double>(3, 0.5));
  expect_error(s, "uniforms must be [3, 2]");
  s = good;
  s.tensors["tokens"] = tensor("F32", {3, 3}, std::vector<float>(9, 0.0f));
  expect_error(s, "tokens dtype must be I32 or I64");
  s = good;
  s.tensors["target_logits"] = tensor("F32", {3, 150}, std::vector<float>(450, 0.0f));
  expect_error(s, "target_logits must be [requests, drafts + 1, V]");
  s = good;
  s.metadata["uniform_compare"] = "f16";
  expect_error(s, "uniform_compare");
  s = good;
  s.metadata["exp_ulps"] = "2";  // a typo must not leave the default in force silently
  expect_error(s, "exp_ulps");
  s = good;
  s.tensors["draft_counts"] = tensor("I32", {2}, std::vector<std::int32_t>{1, 1});
  expect_error(s, "draft_counts must be [3]");
  // A count past the batch's k is out of contract: judged as such, never read past the request's rows.
  s = good;
  s.tensors["draft_counts"] = tensor("I32", {3}, std::vector<std::int32_t>{2, 5, -1});
  const VerifyStepReport bad_counts = verify_step_document(s);
  EXPECT_EQ(bad_counts.out_of_contract, 2) << (bad_counts.failures.empty() ? "" : bad_counts.failures[0]);
  // An id past int32 is out of range, and the failure names the value written.
  s = good;
  std::vector<std::int64_t> tokens(9, -1);
  tokens[0] = std::int64_t(1) << 40;
  s.tensors["tokens"] = tensor("I64", {3, 3}, tokens);
  const VerifyStepReport huge = verify_step_document(s);
  EXPECT_GE(huge.out_of_range, 1);
  ASSERT_FALSE(huge.failures.empty());
  EXPECT_NE(huge.failures[0].find("holds 1099511627776"), std::string::npos) << huge.failures[0];
  s = good;
  s.metadata["uniform_compare"] = "f32";
  EXPECT_TRUE(verify_step_document(s).rules.uniform_f32);
}

}  // namespace
}  // namespace raceoracle::analysis

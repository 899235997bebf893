"""The speculative-decoding verify step (SPEC 11) from pytest: vLLM's
rejection sampler as written passes `raceoracle.verify_step` on given noise,
with stochastic and deterministic drafts; each broken copy fails. Run with its
own randomness, it is lossless (`raceoracle.verify_lossless`); with its verify
uniform tied to the draft's noise, it is not."""
import functools

import pytest

import raceoracle
import verify_samplers as vs


@pytest.mark.parametrize("stochastic", [True, False])
def test_vllm_rejection_sampler_passes(stochastic):
    inputs = vs.requests(stochastic=stochastic)
    tokens = vs.rejection_sample(**inputs)
    report = raceoracle.verify_step(**inputs, tokens=tokens, **vs.CONTRACT)
    assert report["unexplained"] == 0 and report["identical"] > 0


@pytest.mark.parametrize("defect", vs.DEFECTS)
def test_each_broken_rejection_sampler_fails(defect):
    inputs = vs.requests()
    tokens = vs.rejection_sample(**inputs, defect=defect)
    with pytest.raises(AssertionError) as failure:
        raceoracle.verify_step(**inputs, tokens=tokens, **vs.CONTRACT)
    assert "verdict: FAIL" in str(failure.value)


def test_requests_with_counts_of_their_own():
    # Requests padded to the batch's k, each with its own count (vLLM's num_draft_tokens):
    # the sampler that honours the counts passes, one that walks every request's k fails.
    inputs = vs.requests(counts=True)
    assert (inputs["draft_counts"] < 4).any() and (inputs["draft_counts"] > 0).any()
    report = raceoracle.verify_step(**inputs, tokens=vs.rejection_sample(**inputs), **vs.CONTRACT)
    assert report["unexplained"] == 0 and report["identical"] > 0
    for defect in vs.COUNT_DEFECTS:
        with pytest.raises(AssertionError) as failure:
            raceoracle.verify_step(**inputs, tokens=vs.rejection_sample(**inputs, defect=defect), **vs.CONTRACT)
        assert "past the request's" in str(failure.value)


def test_vllm_rejection_sampler_passes_the_verify_laws():
    # Served from this process (step="verify"): the verify laws on raceoracle's random
    # batches of requests, shrunk on failure; every law holds.
    report = raceoracle.check(vs.rejection_sample, step="verify", tensors="torch", cases=40, **vs.SERVED)
    assert report.passed and {p["law"] for p in report["properties"]} == {
        law["name"] for law in raceoracle.laws(verify=True)}


# The same as one pytest item per verify law (pytest -k RecoveredTokenHasResidual).
test_vllm_rejection_sampler_law = raceoracle.law_tests(vs.rejection_sample, step="verify", tensors="torch", cases=20,
                                                       **vs.SERVED)


@pytest.mark.parametrize("defect", ["strict", "from_target"])
def test_a_broken_rejection_sampler_fails_the_verify_laws(defect):
    broken = functools.partial(vs.rejection_sample, defect=defect)
    with pytest.raises(AssertionError) as failure:
        raceoracle.check(broken, step="verify", tensors="torch", name="broken-" + defect, cases=100, **vs.SERVED)
    assert "VerifyAgreesWithOracle: FAILED" in str(failure.value)
    assert "replay: raceoracle.check(" in str(failure.value)


def test_filtered_requests():
    # vLLM filters the target's logits (top-k, top-p, min-p) before the verify step's softmax:
    # judged under the requests' filters, the sampler passes; one that ignores them fails.
    inputs = vs.requests(R=32, V=500)
    R = inputs["temperatures"].shape[0]
    top_k = vs.torch.tensor([(0, 50, 5, 1)[r % 4] for r in range(R)], dtype=vs.torch.int32)
    top_p = vs.torch.tensor([(1.0, 0.9, 0.5)[r % 3] for r in range(R)], dtype=vs.torch.float32)
    min_p = vs.torch.tensor([(0.0, 0.05)[r % 2] for r in range(R)], dtype=vs.torch.float32)
    filters = raceoracle.Filters(top_k, top_p, min_p)
    report = raceoracle.verify_step(**inputs, tokens=vs.rejection_sample(**inputs, filters=filters), filters=filters,
                                    **vs.CONTRACT)
    assert report["unexplained"] == 0 and report["identical"] > 0
    for defect in vs.FILTER_DEFECTS:
        with pytest.raises(AssertionError):
            raceoracle.verify_step(**inputs, tokens=vs.rejection_sample(**inputs, filters=filters, defect=defect),
                                   filters=filters, **vs.CONTRACT)


def test_a_malformed_file_is_refused_with_its_reason():
    inputs = vs.requests(R=2, k=1, V=8)
    inputs["uniforms"] = inputs["uniforms"][:, :0]  # [R, 0] where [R, 1] is due
    with pytest.raises(ValueError) as refusal:
        raceoracle.verify_step(**inputs, tokens=vs.rejection_sample(**vs.requests(R=2, k=1, V=8)), **vs.CONTRACT)
    assert "uniforms must be [2, 1]" in str(refusal.value)


def test_vllm_rejection_sampler_is_lossless():
    inputs = vs.lossless_requests()
    tokens = vs.speculate(**inputs, runs=1 << 14, seed=1)
    report = raceoracle.verify_lossless(**inputs, tokens=tokens, **vs.CONTRACT)
    assert report["verdict"] == "PASS" and report["runs"] == 1 << 14
    assert "could see" in report.text  # the power it had, per request


def test_verify_uniform_tied_to_the_draft_is_caught():
    inputs = vs.lossless_requests()
    tokens = vs.speculate(**inputs, runs=1 << 12, seed=1, shared="uniform")
    report = raceoracle.verify_lossless(**inputs, tokens=tokens, raise_on_failure=False, **vs.CONTRACT)
    assert report["verdict"] == "FAIL" and report["first_token"]["verdict"] == "FAIL"


# The same algorithm in Triton (examples/triton_verify_sampler.py), on a GPU.
needs_gpu = pytest.mark.skipif(not vs.torch.cuda.is_available(), reason="SKIPPED: the Triton verify step needs a CUDA GPU")


def _on_gpu(inputs):
    return {k: (v.cuda() if v is not None else None) for k, v in inputs.items()}


@needs_gpu
@pytest.mark.parametrize("stochastic", [True, False])
def test_triton_verify_step_passes(stochastic):
    import triton_verify_sampler as tv
    inputs = vs.requests(stochastic=stochastic)
    tokens = tv.verify_step(**_on_gpu(inputs))
    report = raceoracle.verify_step(**inputs, tokens=tokens.cpu(), **tv.CONTRACT)
    assert report["unexplained"] == 0 and report["identical"] > 0


@needs_gpu
def test_triton_verify_step_with_counts_of_their_own_passes():
    import triton_verify_sampler as tv
    inputs = vs.requests(counts=True)
    report = raceoracle.verify_step(**inputs, tokens=tv.verify_step(**_on_gpu(inputs)).cpu(), **tv.CONTRACT)
    assert report["unexplained"] == 0 and report["identical"] > 0


@needs_gpu
def test_vllm_rejection_sampler_on_the_gpu_passes_the_verify_laws():
    report = raceoracle.check(vs.rejection_sample, step="verify", tensors="torch", device="cuda", cases=40, **vs.SERVED)
    assert report.passed


@needs_gpu
def test_triton_verify_step_passes_the_verify_laws():
    # Served from this process with its inputs on the GPU: every verify law holds.
    import triton_verify_sampler as tv
    report = raceoracle.check(tv.verify_step, step="verify", tensors="torch", device="cuda", cases=40, **tv.CONTRACT)
    assert report.passed


@needs_gpu
def test_triton_verify_step_is_lossless_and_its_tied_uniform_is_caught():
    import triton_verify_sampler as tv
    inputs = vs.lossless_requests()
    tokens = vs.speculate(**_on_gpu(inputs), runs=1 << 16, seed=2, step=tv.verify_step)
    report = raceoracle.verify_lossless(**inputs, tokens=tokens.cpu(), **tv.CONTRACT)
    assert report["verdict"] == "PASS" and "could see" in report.text
    tokens = vs.speculate(**_on_gpu(inputs), runs=1 << 12, seed=2, shared="uniform", step=tv.verify_step)
    report = raceoracle.verify_lossless(**inputs, tokens=tokens.cpu(), raise_on_failure=False, **tv.CONTRACT)
    assert report["verdict"] == "FAIL"

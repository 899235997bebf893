"""The speculative-decoding verify step (SPEC 11) from pytest: vLLM's
rejection sampler as written passes `raceoracle.verify_step` on given noise,
with stochastic and deterministic drafts; each broken copy fails."""
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


def test_a_malformed_file_is_refused_with_its_reason():
    inputs = vs.requests(R=2, k=1, V=8)
    inputs["uniforms"] = inputs["uniforms"][:, :0]  # [R, 0] where [R, 1] is due
    with pytest.raises(ValueError) as refusal:
        raceoracle.verify_step(**inputs, tokens=vs.rejection_sample(**vs.requests(R=2, k=1, V=8)), **vs.CONTRACT)
    assert "uniforms must be [2, 1]" in str(refusal.value)

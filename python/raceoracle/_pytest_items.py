"""law_tests(): one sampler as one pytest item per law, and one for the agreement run."""
from . import _run


def law_tests(fn, *, agreement=True, **check_args):
    """A pytest test function that runs each law on `fn` as its own item:

        test_my_sampler = raceoracle.law_tests(my_sampler, tensors="torch", **CONTRACT)

    pytest collects test_my_sampler[AgreesWithOracle], test_my_sampler[GreedyIsExact], ...
    and test_my_sampler[agreement] (the production-shape run; agreement=False
    leaves it out), so `pytest -k GreedyIsExact` runs one law and pytest's
    --junitxml has a testcase per law. A law the sampler cannot serve (it reads
    stage-1 partials, ...) is skipped with the reason. check_args are check()'s
    (cases, seed, rows, vocab, tensors, contract terms, ...); each item starts its
    own run, so the laws' order and seeds are check()'s. step="verify" (a
    verify step, SPEC 11): an item per verify law.
    """
    import pytest

    for key in ("properties", "laws"):
        if key in check_args:
            raise TypeError("law_tests() picks the laws itself (one item each); %s= is check()'s" % key)
    if check_args.get("step") == "verify":  # a verify step: the verify laws, and no agreement run
        names = [law["name"] for law in _run.laws(verify=True)]
    else:
        names = [law["name"] for law in _run.laws()] + (["agreement"] if agreement else [])

    @pytest.mark.parametrize("law", names)
    def test(law):
        if law == "agreement":
            _run.check(fn, laws=False, **check_args)
            return
        report = _run.check(fn, properties=[law], agreement=False, **check_args)
        for n in report.get("not_applicable", []):
            if n["law"] == law:
                pytest.skip("n/a: " + n["why"])

    test.__name__ = "test_" + getattr(fn, "__name__", "sampler")
    return test

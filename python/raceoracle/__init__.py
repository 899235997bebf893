"""raceoracle from Python: check any exponential-race sampler with the whole suite.

    import raceoracle
    raceoracle.check(my_sampler)          # one line in a pytest test
    test_my_sampler = raceoracle.law_tests(my_sampler)   # or a pytest item per law (pytest -k GreedyIsExact)
    raceoracle.frequency(my_sampler)      # a sampler with its own RNG, judged by its token frequencies
    raceoracle.serve(my_sampler)          # a sampler process for `raceoracle check --sampler CMD`
    raceoracle.verify(logits, noise, temperatures, tokens)
    raceoracle.write_dump("run.safetensors", logits, noise, temperatures, tokens)   # for verify / divergence A B
    raceoracle.verify_step(target_logits, draft_ids, draft_probs, uniforms, recovery_noise, bonus_noise,
                           temperatures, tokens)   # a speculative-decoding verify step (SPEC 11)
    raceoracle.verify_lossless(target_logits, draft_probs, temperatures, tokens)   # its runs' law (SPEC 11)
    raceoracle.check(my_verify_step, step="verify")   # a verify step served: the verify laws, shrunk

A sampler is fn(logits, noise, temperatures, eps, greedy_eps) -> tokens [rows]
(docs/SAMPLER_PROTOCOL.md). Pure Python over numpy; torch is optional.
"""
from ._messages import PROTOCOL_VERSION, ProtocolError
from ._pytest_items import law_tests
from ._run import (Report, check, find_binary, frequency, laws, replay, save_safetensors, verify, verify_lossless,
                   verify_step, write_dump, write_lossless_runs, write_verify_dump)
from ._serve import Filters, OwnDraws, serve, serve_on
from ._version import __version__

__all__ = ["check", "law_tests", "laws", "frequency", "replay", "serve", "serve_on", "Filters", "OwnDraws", "verify", "verify_step", "verify_lossless", "write_dump", "write_verify_dump", "write_lossless_runs", "save_safetensors", "find_binary", "Report", "ProtocolError",
           "PROTOCOL_VERSION"]

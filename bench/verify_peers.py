#!/usr/bin/env python3
"""The verify step as users write it, timed as `raceoracle bench --verify-drafts K`
times raceoracle's verify kernels: vLLM's rejection sampler in eager PyTorch
(examples/verify_samplers.py `rejection_sample`) and the Triton verify step
(examples/triton_verify_sampler.py `verify_step`), on R requests x (k + 1) x V
bf16 target logits on the GPU, every draft accepted (u = 0: the longest chain,
then the bonus race). Per peer: 3 warm-up calls, then `--samples` samples of
20 calls between two CUDA events; the median, min and max microseconds a call.
With `--top-k`, `--top-p` or `--min-p`, every request carries those filters
(SPEC 9, applied to its target rows as vLLM's apply_top_k_top_p does), as
`raceoracle bench --verify-drafts K --top-k ...` gives them to every request;
the Triton verify step takes no filters and is then left out, said so.

    python3 bench/verify_peers.py [--requests 64] [--drafts 4] [--vocab 163840] [--samples 10]
                                  [--top-k 50] [--top-p 0.9] [--min-p 0]
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))
sys.path.insert(0, os.path.join(HERE, "..", "python"))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--requests", type=int, default=64)
    p.add_argument("--drafts", type=int, default=4)
    p.add_argument("--vocab", type=int, default=163840)
    p.add_argument("--samples", type=int, default=10)
    p.add_argument("--top-k", type=int, default=0, help="every request's top-k (0: off)")
    p.add_argument("--top-p", type=float, default=1.0, help="every request's top-p (1: off)")
    p.add_argument("--min-p", type=float, default=0.0, help="every request's min-p (0: off)")
    a = p.parse_args()
    if a.top_k < 0 or not 0 < a.top_p <= 1 or not 0 <= a.min_p <= 1:
        p.error("--top-k must be >= 0, --top-p in (0, 1], --min-p in [0, 1]")
    filtered = a.top_k > 0 or a.top_p < 1 or a.min_p > 0
    import torch
    if not torch.cuda.is_available():
        sys.exit("verify_peers.py: no CUDA device (the peers are timed on the GPU)")
    import triton_verify_sampler
    import verify_samplers
    inputs = verify_samplers.requests(R=a.requests, k=a.drafts, V=a.vocab)
    cuda = {k: None if v is None else v.cuda() for k, v in inputs.items()}
    cuda["target_logits"] = cuda["target_logits"].to(torch.bfloat16)
    cuda["uniforms"] = torch.zeros_like(cuda["uniforms"])
    peers = [("torch rejection_sample", verify_samplers.rejection_sample)]
    shape = f"{a.requests} x ({a.drafts}+1) x {a.vocab} bf16"
    if filtered:
        import raceoracle
        dev = cuda["target_logits"].device
        cuda["filters"] = raceoracle.Filters(torch.full((a.requests,), a.top_k, dtype=torch.int32, device=dev),
                                             torch.full((a.requests,), a.top_p, dtype=torch.float32, device=dev),
                                             torch.full((a.requests,), a.min_p, dtype=torch.float32, device=dev))
        shape += f", top_k {a.top_k} top_p {a.top_p:g} min_p {a.min_p:g}"
        print("triton verify_step: takes no filters, not timed")
    else:
        peers.append(("triton verify_step", triton_verify_sampler.verify_step))
    per_sample = 20
    for name, fn in peers:
        for _ in range(3):
            fn(**cuda)
        torch.cuda.synchronize()
        times = []
        for _ in range(a.samples):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(per_sample):
                fn(**cuda)
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end) * 1000 / per_sample)
        times.sort()
        print(f"{name} {shape}: median {times[len(times) // 2]:.1f} us "
              f"[{times[0]:.1f} .. {times[-1]:.1f}]")


if __name__ == "__main__":
    main()

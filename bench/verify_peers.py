#!/usr/bin/env python3
"""The verify step as users write it, timed as `raceoracle bench --verify-drafts K`
times raceoracle's verify kernels: vLLM's rejection sampler in eager PyTorch
(examples/verify_samplers.py `rejection_sample`) and the Triton verify step
(examples/triton_verify_sampler.py `verify_step`), on R requests x (k + 1) x V
bf16 target logits on the GPU, every draft accepted (u = 0: the longest chain,
then the bonus race). Per peer: 3 warm-up calls, then `--samples` samples of
20 calls between two CUDA events; the median, min and max microseconds a call.

    python3 bench/verify_peers.py [--requests 64] [--drafts 4] [--vocab 163840] [--samples 10]
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
    a = p.parse_args()
    import torch
    if not torch.cuda.is_available():
        sys.exit("verify_peers.py: no CUDA device (the peers are timed on the GPU)")
    import triton_verify_sampler
    import verify_samplers
    inputs = verify_samplers.requests(R=a.requests, k=a.drafts, V=a.vocab)
    cuda = {k: None if v is None else v.cuda() for k, v in inputs.items()}
    cuda["target_logits"] = cuda["target_logits"].to(torch.bfloat16)
    cuda["uniforms"] = torch.zeros_like(cuda["uniforms"])
    per_sample = 20
    for name, fn in (("torch rejection_sample", verify_samplers.rejection_sample),
                     ("triton verify_step", triton_verify_sampler.verify_step)):
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
        print(f"{name} {a.requests} x ({a.drafts}+1) x {a.vocab} bf16: median {times[len(times) // 2]:.1f} us "
              f"[{times[0]:.1f} .. {times[-1]:.1f}]")


if __name__ == "__main__":
    main()

// Known answers from cuRAND (run on a GPU by draw_known_answers.py): the
// Philox-4x32-10 words and curand_uniform4 of curand_init(seed, subsequence,
// offset), and the accuracy of __logf over every fp32 uniform in (0, 1].
#include <curand_kernel.h>
#include <cstdio>
#include <cstdint>
#include <string>
#include <cstdlib>
#include <cmath>
#include <vector>

__global__ void words(unsigned long long seed, const unsigned long long* subseq, unsigned long long offset, int n,
                      int calls, uint4* w, float4* u) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  curandStatePhilox4_32_10_t s, s2;
  curand_init(seed, subseq[i], offset, &s);
  curand_init(seed, subseq[i], offset, &s2);
  for (int c = 0; c < calls; ++c) {
    w[i * calls + c] = curand4(&s);
    u[i * calls + c] = curand_uniform4(&s2);
  }
}

// Every fp32 u in [lo, 1]: __logf(u) against log(u) in double.
__global__ void logf_error(unsigned lo_bits, unsigned hi_bits, double* abs_half, double* ulp_rest) {
  double a = 0, r = 0;
  for (unsigned b = lo_bits + blockIdx.x * blockDim.x + threadIdx.x; b <= hi_bits; b += gridDim.x * blockDim.x) {
    float u = __uint_as_float(b);
    double exact = log((double)u);
    double got = (double)__logf(u);
    double err = fabs(got - exact);
    if (u >= 0.5f) a = fmax(a, err);
    else {
      double ulp = ldexp(1.0, ilogb(exact) - 23);
      r = fmax(r, err / ulp);
    }
  }
  // block max via atomics on the bits (non-negative doubles order as integers)
  atomicMax((unsigned long long*)abs_half, __double_as_longlong(a));
  atomicMax((unsigned long long*)ulp_rest, __double_as_longlong(r));
}

int main(int argc, char** argv) {
  // usage: curand_words SEED OFFSET CALLS OUT.bin SUBSEQ...   (writes words then uniforms)
  if (argc == 2 && std::string(argv[1]) == "logf") {
    double *d; cudaMalloc(&d, 16); cudaMemset(d, 0, 16);
    logf_error<<<1024, 256>>>(1u, 0x3f800000u, d, d + 1);
    double h[2]; cudaMemcpy(h, d, 16, cudaMemcpyDeviceToHost);
    printf("__logf over every fp32 u in (0, 1]: max abs error on [0.5, 1] %.6g (2^%.3f); max ulps below 0.5 %.4f\n",
           h[0], log2(h[0]), h[1]);
    return 0;
  }
  unsigned long long seed = strtoull(argv[1], 0, 0), offset = strtoull(argv[2], 0, 0);
  int calls = atoi(argv[3]);
  std::vector<unsigned long long> sub;
  for (int i = 5; i < argc; ++i) sub.push_back(strtoull(argv[i], 0, 0));
  int n = (int)sub.size();
  unsigned long long* ds; uint4* dw; float4* du;
  cudaMalloc(&ds, n * 8); cudaMalloc(&dw, n * calls * 16); cudaMalloc(&du, n * calls * 16);
  cudaMemcpy(ds, sub.data(), n * 8, cudaMemcpyHostToDevice);
  words<<<(n + 127) / 128, 128>>>(seed, ds, offset, n, calls, dw, du);
  std::vector<uint4> w(n * calls); std::vector<float4> u(n * calls);
  cudaMemcpy(w.data(), dw, n * calls * 16, cudaMemcpyDeviceToHost);
  cudaMemcpy(u.data(), du, n * calls * 16, cudaMemcpyDeviceToHost);
  FILE* f = fopen(argv[4], "wb");
  fwrite(w.data(), 16, w.size(), f); fwrite(u.data(), 16, u.size(), f); fclose(f);
  return 0;
}

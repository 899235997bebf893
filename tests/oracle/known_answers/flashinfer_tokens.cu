// Known answers from FlashInfer itself (run on a GPU by draw_stream_versions.py):
// the tokens of its SamplingFromLogits on zero fp32 logits (as its Python
// binding races: logits.float()), so each token is the argmax of the Gumbel
// noise the kernel drew, and a replay of the wrong layout picks another id.
// Built against FlashInfer's headers from a path the user gives:
//   nvcc -O2 -arch=sm_90 -I FLASHINFER/include flashinfer_tokens.cu -o flashinfer_tokens
//   flashinfer_tokens SEED OFFSET ROWS VOCAB FIRST COUNT OUT.bin   (int32 tokens of rows FIRST .. FIRST+COUNT)
#include <flashinfer/sampling.cuh>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 8) {
    std::fprintf(stderr, "usage: %s SEED OFFSET ROWS VOCAB FIRST COUNT OUT.bin\n", argv[0]);
    return 2;
  }
  const std::uint64_t seed = std::strtoull(argv[1], nullptr, 0), offset = std::strtoull(argv[2], nullptr, 0);
  const std::uint32_t rows = std::uint32_t(std::strtoul(argv[3], nullptr, 0)), vocab = std::uint32_t(std::strtoul(argv[4], nullptr, 0));
  const std::uint32_t first = std::uint32_t(std::strtoul(argv[5], nullptr, 0)), count = std::uint32_t(std::strtoul(argv[6], nullptr, 0));
  if (first + count > rows) return std::fprintf(stderr, "rows %u .. %u past %u\n", first, first + count, rows), 2;
  float* logits = nullptr;
  int* out = nullptr;
  const std::size_t n = std::size_t(rows) * vocab;
  if (cudaMalloc(&logits, n * sizeof(float)) != cudaSuccess || cudaMalloc(&out, rows * sizeof(int)) != cudaSuccess)
    return std::fprintf(stderr, "cudaMalloc of %zu floats failed\n", n), 1;
  cudaMemset(logits, 0, n * sizeof(float));
  const cudaError_t e = flashinfer::sampling::SamplingFromLogits<float, int>(logits, out, nullptr, rows, vocab, true, nullptr,
                                                                             seed, nullptr, offset, 0);
  if (e != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess)
    return std::fprintf(stderr, "SamplingFromLogits: %s\n", cudaGetErrorString(cudaGetLastError())), 1;
  std::vector<int> tokens(count);
  cudaMemcpy(tokens.data(), out + first, count * sizeof(int), cudaMemcpyDeviceToHost);
  FILE* f = std::fopen(argv[7], "wb");
  if (!f || std::fwrite(tokens.data(), sizeof(int), count, f) != count) return std::fprintf(stderr, "cannot write %s\n", argv[7]), 1;
  std::fclose(f);
  return 0;
}

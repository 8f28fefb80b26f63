// Shared helpers for the hardware microbenchmarks (tests/hw/*.cu).
//
// Every benchmark times its region with clock64() inside the kernel (SM cycles, the unit the
// simulator reports), takes the median over blocks and repetitions, and writes one CSV per
// benchmark into the directory given as argv[1].
#pragma once
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define CK(call)                                                                          \
  do {                                                                                    \
    cudaError_t e_ = (call);                                                              \
    if (e_ != cudaSuccess) {                                                              \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      exit(1);                                                                            \
    }                                                                                     \
  } while (0)
// A launch error only shows at the next call: check both the launch and its completion.
#define CK_LAUNCH()                          \
  do {                                       \
    CK(cudaGetLastError());                  \
    CK(cudaDeviceSynchronize());             \
  } while (0)

template <typename T>
static double median(std::vector<T> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? double(v[n / 2]) : 0.5 * (double(v[n / 2 - 1]) + double(v[n / 2]));
}

static FILE* open_csv(int argc, char** argv, const char* name, const char* header) {
  std::string dir = argc > 1 ? argv[1] : ".";
  std::string path = dir + "/" + name;
  FILE* f = fopen(path.c_str(), "w");
  if (!f) { perror(path.c_str()); exit(1); }
  fprintf(f, "%s\n", header);
  printf("== %s\n%s\n", name, header);
  return f;
}

// Print a row to the CSV and to stdout (the device tool returns the tail of stdout).
#define ROW(f, ...)                 \
  do {                              \
    fprintf(f, __VA_ARGS__);        \
    printf(__VA_ARGS__);            \
  } while (0)

// L2 is 50 MB on H100: writing 256 MiB evicts everything an earlier launch left there, so
// the next launch's loads come from DRAM.
struct L2Flusher {
  char* buf = nullptr;
  size_t bytes = 256u << 20;
  L2Flusher() { CK(cudaMalloc(&buf, bytes)); }
  ~L2Flusher() { cudaFree(buf); }
  void flush() { CK(cudaMemsetAsync(buf, 0x5a, bytes)); CK(cudaDeviceSynchronize()); }
};

static int sm_count() {
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  return p.multiProcessorCount;
}

// Sattolo's algorithm: a random permutation that is one single cycle, so a pointer chase
// through it visits every node before it repeats (no short loops that would stay in cache).
static std::vector<uint32_t> random_cycle(uint32_t n, uint64_t seed) {
  std::vector<uint32_t> p(n);
  for (uint32_t i = 0; i < n; ++i) p[i] = i;
  uint64_t s = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (uint32_t i = n - 1; i > 0; --i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    uint32_t j = uint32_t((s >> 33) % i);  // j < i: Sattolo, not Fisher-Yates
    std::swap(p[i], p[j]);
  }
  // p as a list of visit order -> next[] (node p[i] points to p[i+1]).
  std::vector<uint32_t> next(n);
  for (uint32_t i = 0; i < n; ++i) next[p[i]] = p[(i + 1) % n];
  return next;
}

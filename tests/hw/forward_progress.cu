// Forward progress: how long a thread waits when it cannot go on, one warp alone on the GPU,
// clock64 around one instruction in every lane (median over lanes and repetitions):
//
//   forward_progress.csv  primitive,ns,cycles_median,cycles_min,cycles_max,samples
//     try_wait_parity     mbarrier.try_wait.parity on a phase nobody completes: the
//                         "system-dependent time limit" after which it returns false (PTX ISA,
//                         mbarrier.test_wait/try_wait); ns = its suspendTimeHint (0: none)
//     test_wait_parity    mbarrier.test_wait.parity on the same phase: never suspends
//     nanosleep           __nanosleep(ns), every lane asking for the same ns
//     nanosleep_spread    __nanosleep(lane * ns / 32): the lanes of one converged warp asking
//                         for different times
//
// Usage: forward_progress OUTDIR
#include <cstdint>
#include "common.cuh"

namespace {

constexpr int kReps = 8;  // per primitive; the first is a warm-up and is not kept

__device__ void try_wait(unsigned bar, unsigned hint, unsigned* ok) {
  if (hint)
    asm volatile("{.reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0, %2; selp.u32 %0, 1, 0, p;}"
                 : "=r"(*ok) : "r"(bar), "r"(hint) : "memory");
  else
    asm volatile("{.reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p;}"
                 : "=r"(*ok) : "r"(bar) : "memory");
}

__device__ void test_wait(unsigned bar, unsigned* ok) {
  asm volatile("{.reg .pred p; mbarrier.test_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p;}"
               : "=r"(*ok) : "r"(bar) : "memory");
}

// mode 0: try_wait (hint ns), 1: test_wait, 2: nanosleep(ns), 3: nanosleep(lane * ns / 32).
// cycles[r * 32 + lane]; ok[] is 1 where a wait said the phase had completed (never, here).
__global__ void probe(int mode, unsigned ns, long long* cycles, unsigned* okout) {
  __shared__ uint64_t bar;
  unsigned a = (unsigned)__cvta_generic_to_shared(&bar);
  if (threadIdx.x == 0) asm volatile("mbarrier.init.shared::cta.b64 [%0], 2;" ::"r"(a));
  __syncthreads();
  unsigned any = 0;
  for (int r = 0; r < kReps; ++r) {
    unsigned ok = 0, t = mode == 3 ? threadIdx.x * ns / 32 : ns;
    long long t0 = clock64();
    if (mode == 0) try_wait(a, ns, &ok);
    else if (mode == 1) test_wait(a, &ok);
    else __nanosleep(t);
    long long t1 = clock64();
    cycles[r * 32 + threadIdx.x] = t1 - t0;
    any |= ok;
  }
  okout[threadIdx.x] = any;
}

}  // namespace

int main(int argc, char** argv) {
  FILE* f = open_csv(argc, argv, "forward_progress.csv", "primitive,ns,cycles_median,cycles_min,cycles_max,samples");
  long long* dcyc;
  unsigned* dok;
  CK(cudaMalloc(&dcyc, kReps * 32 * sizeof(long long)));
  CK(cudaMalloc(&dok, 32 * sizeof(unsigned)));
  struct { const char* name; int mode; unsigned ns; } rows[] = {
      {"try_wait_parity", 0, 0},      {"try_wait_parity", 0, 1000},    {"try_wait_parity", 0, 1000000},
      {"test_wait_parity", 1, 0},     {"nanosleep", 2, 0},             {"nanosleep", 2, 200},
      {"nanosleep", 2, 500},          {"nanosleep", 2, 1000},          {"nanosleep", 2, 2000},
      {"nanosleep", 2, 5000},         {"nanosleep", 2, 10000},         {"nanosleep", 2, 50000},
      {"nanosleep_spread", 3, 1000},  {"nanosleep_spread", 3, 50000},
  };
  for (auto& row : rows) {
    probe<<<1, 32>>>(row.mode, row.ns, dcyc, dok);
    CK_LAUNCH();
    long long h[kReps * 32];
    unsigned ok[32];
    CK(cudaMemcpy(h, dcyc, sizeof h, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(ok, dok, sizeof ok, cudaMemcpyDeviceToHost));
    for (unsigned o : ok)
      if (o) { fprintf(stderr, "%s: a wait saw the phase complete\n", row.name); return 1; }
    std::vector<long long> v(h + 32, h + kReps * 32);  // repetition 0 is the warm-up
    ROW(f, "%s,%u,%.1f,%lld,%lld,%zu\n", row.name, row.ns, median(v), *std::min_element(v.begin(), v.end()),
            *std::max_element(v.begin(), v.end()), v.size());
  }
  fclose(f);
  return 0;
}

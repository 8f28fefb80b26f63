// One copy's round trip in the examples' streaming access pattern, by the path it takes, and
// how long an mbarrier phase completion takes to wake a warp that waits on it.
//
// The pointer chases of mem_latency.cu time one thread walking a random cycle: a dependent
// load that may miss the TLB and land in either L2 partition. The pipeline examples instead
// read a fresh, contiguous 4 B per thread every batch (block * block_size + grid_size * batch
// + tid), every SM at once. Here each batch's source index also adds the value the previous
// batch read (the input is all zeros, which the compiler cannot know), so batch b + 1 cannot
// start before batch b's data is in a register: cycles per batch = one round trip plus the
// loop's index arithmetic, which the `lds` mode (the same loop reading shared memory only)
// measures.
//
//   lds        v = shared[tid]                                  (the loop and one LDS)
//   ldg        v = global_in[i]  (ld.global.cg)                  (LDG round trip)
//   cp_async   __pipeline_memcpy_async 4 B, commit, wait_prior(0), v = shared[tid]
//   mbarrier   cuda::memcpy_async(thread, 4 B, bar), bar.arrive_and_wait(), v = shared[tid]
//              (cp.async tracked by a block-scope cuda::barrier: LDGSTS completion arrives on
//              the mbarrier, the warps wake from try_wait)
//
// Grid = one block per SM, input in L2 (warm-up launch first) or DRAM (L2 flushed first).
//
// The wake kernel: one block, warps 0 and 1 (lane 0 each) share a cuda::barrier of count 2.
// Warp 1 arrives and waits; warp 0 spins ~4000 cycles, stamps clock64() and arrives; warp 1
// stamps clock64() as soon as its wait returns. The difference (less one stamp, 12 cycles:
// anatomy.csv row `empty`) is arrival to waiter running again.
//
// Usage: roundtrip OUTDIR  ->  roundtrip.csv, mbarrier_wake.csv
#include <cooperative_groups.h>
#include <cuda/barrier>
#include <cuda_pipeline.h>
#include "chase.cuh"
#include "common.cuh"

#pragma nv_diag_suppress static_var_with_dynamic_init

namespace {

using namespace chase_bench;

constexpr int kReps = 5;
constexpr int kBatches = 64;

__global__ void wake(long long* arrive_at, long long* woke_at, int reps) {
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  if (threadIdx.x == 0) init(&bar, 2);
  __syncthreads();
  if (threadIdx.x % 32 != 0) return;
  const int warp = threadIdx.x / 32;
  for (int r = 0; r < reps; ++r) {
    if (warp == 1) {
      auto token = bar.arrive();
      bar.wait(std::move(token));
      woke_at[r] = clock64();
    } else {
      const long long s = clock64();
      while (clock64() - s < 4000) {
      }
      const long long t = clock64();
      auto token = bar.arrive();  // the arrival that completes the phase
      arrive_at[r] = t;
      bar.wait(std::move(token));
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int sms = sm_count();
  L2Flusher flusher;
  FILE* f = open_csv(argc, argv, "roundtrip.csv",
                     "mode,block_size,grid_blocks,source,batches,reps,cycles_per_batch_median,cycles_per_batch_min");
  const int max_bs = 256;
  const size_t size = size_t(kBatches) * sms * max_bs + max_bs;
  int *din, *dout;
  long long* dcyc;
  CK(cudaMalloc(&din, size * 4));
  CK(cudaMalloc(&dout, size_t(sms) * max_bs * 4));
  CK(cudaMemset(din, 0, size * 4));
  CK(cudaMalloc(&dcyc, size_t(sms) * (max_bs / 32) * sizeof(long long)));
  for (int m = 0; m < kModes; ++m)
    for (int bs : {128, 256})
      for (int l2 = 1; l2 >= 0; --l2) {
        if (m == kLds && !l2) continue;
        const Kernel fn = chase_for(m);
        const int nw = bs / 32;
        std::vector<double> per_batch;
        for (int r = 0; r < kReps; ++r) {
          if (l2) {
            fn<<<sms, bs, bs * sizeof(int)>>>(dout, din, kBatches, dcyc);
            CK_LAUNCH();
          } else {
            flusher.flush();
          }
          fn<<<sms, bs, bs * sizeof(int)>>>(dout, din, kBatches, dcyc);
          CK_LAUNCH();
          std::vector<long long> c(size_t(sms) * nw);
          CK(cudaMemcpy(c.data(), dcyc, c.size() * sizeof(long long), cudaMemcpyDeviceToHost));
          for (long long x : c) per_batch.push_back(double(x) / kBatches);
        }
        std::vector<int> out(size_t(sms) * bs);
        CK(cudaMemcpy(out.data(), dout, out.size() * 4, cudaMemcpyDeviceToHost));
        for (int x : out)
          if (x != 0) { fprintf(stderr, "roundtrip %s: wrong output %d\n", kModeName[m], x); return 1; }
        ROW(f, "%s,%d,%d,%s,%d,%d,%.1f,%.1f\n", kModeName[m], bs, sms, l2 ? "L2" : "DRAM", kBatches, kReps,
            median(per_batch), *std::min_element(per_batch.begin(), per_batch.end()));
      }
  fclose(f);

  FILE* g = open_csv(argc, argv, "mbarrier_wake.csv", "reps,arrive_to_wake_median,arrive_to_wake_min,arrive_to_wake_max");
  const int reps = 64;
  long long *da, *dw;
  CK(cudaMalloc(&da, reps * sizeof(long long)));
  CK(cudaMalloc(&dw, reps * sizeof(long long)));
  wake<<<1, 64>>>(da, dw, reps);
  CK_LAUNCH();
  std::vector<long long> a(reps), w(reps);
  CK(cudaMemcpy(a.data(), da, reps * sizeof(long long), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(w.data(), dw, reps * sizeof(long long), cudaMemcpyDeviceToHost));
  std::vector<long long> d(reps);
  for (int r = 0; r < reps; ++r) d[r] = w[r] - a[r];
  ROW(g, "%d,%.1f,%lld,%lld\n", reps, median(d), *std::min_element(d.begin(), d.end()),
      *std::max_element(d.begin(), d.end()));
  fclose(g);
  return 0;
}

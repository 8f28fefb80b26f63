// How long a local-array load (LDL) that misses in L1 takes, in the traffic of a pipeline that streams
// its input through L1, and how often it misses.
//
// The guide's pipelines keep `size_t shared_offset[stages]` in local memory and read one element a batch
// (tests/hw/l1_local.cu measures how often those loads miss: ncu's sector counts). Nsight Compute's
// samples of the unified pipeline at 2 blocks of 256 threads per SM (traces/h100/validation_pcsamp/
// *with_staging_unified_{4,8}_256_2_0*) put the 8-stage pipeline's extra ~100 cycles a batch at the
// instruction that waits for the consumer's LDL and at the next producer_acquire (the whole block waits
// for the warp whose LDL missed). What that costs depends on the miss's latency, which ncu does not give.
//
// local_latency<S>: l1_local's loop (per batch each thread copies 4 bytes, LDGSTS.E cached in L1, into
// stage i % S at the offset read from its local array, commits, waits for the batch S - 1 back, reads it
// and stores it to global memory, as the validation kernels do), with the consumer's LDL timed: lane 0
// of every warp reads clock64 before the load and after the shared load whose address it gives (which
// cannot issue before the LDL's data is back). A time of kSlow cycles or more is a miss: an L1 hit
// takes ~32 (global_latency.csv row 1). Dynamic shared memory S * block * 4 bytes, as the validation
// kernels ask, so the driver picks the same carveout.
//
//   local_latency OUTDIR -> OUTDIR/local_latency.csv
//   columns: stages,block_size,blocks_per_sm,source,batches,loads,miss_share,miss_mean,miss_sd,miss_max,
//            hit_mean,cycles_per_batch_median
//   (source L2: a first launch warms the input into L2 and the second is measured; DRAM: L2 flushed first;
//    loads: timed LDLs of all warps; miss_*: of those taking kSlow cycles or more; cycles_per_batch: each
//    block's loop time over its batches, the median over blocks)
#include <cuda_pipeline.h>
#include <cstdio>
#include <vector>
#include "common.cuh"

namespace {

constexpr long long kSlow = 150;
constexpr int kStats = 6;  // per warp: misses, miss cycles, miss cycles squared, max, hits, hit cycles

template <int S>
__global__ void local_latency(const int* global_in, int* global_out, int batches, unsigned long long* stats,
                              long long* block_cycles) {
  extern __shared__ __align__(16) int shared[];
  size_t shared_offset[S];
  for (int s = 0; s < S; ++s) shared_offset[s] = size_t(s) * blockDim.x;
  const int tid = threadIdx.x;
  const bool lane0 = (tid & 31) == 0;
  const size_t row = size_t(gridDim.x) * blockDim.x;
  const int* src = global_in + size_t(blockIdx.x) * blockDim.x + tid;
  const unsigned shared_base = unsigned(__cvta_generic_to_shared(shared));
  unsigned long long misses = 0, miss_cycles = 0, miss_sq = 0, worst = 0, hits = 0, hit_cycles = 0;
  const long long start = clock64();
  for (int fetch = 0; fetch < batches + S - 1; ++fetch) {
    if (fetch < batches) __pipeline_memcpy_async(shared + shared_offset[fetch % S] + tid, src + size_t(fetch) * row, 4);
    __pipeline_commit();
    if (fetch >= S - 1) {
      const int batch = fetch - (S - 1);
      __pipeline_wait_prior(S - 1);
      const long long t0 = clock64();
      const size_t offset = shared_offset[batch % S];
      int v;
      asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(shared_base + unsigned(offset + tid) * 4u) : "memory");
      const long long t1 = clock64();
      global_out[(size_t(batch) * gridDim.x + blockIdx.x) * blockDim.x + tid] = v;
      if (lane0) {
        const unsigned long long dt = (unsigned long long)(t1 - t0);
        if (dt >= (unsigned long long)kSlow) {
          ++misses;
          miss_cycles += dt;
          miss_sq += dt * dt;
          worst = dt > worst ? dt : worst;
        } else {
          ++hits;
          hit_cycles += dt;
        }
      }
    }
  }
  const long long end = clock64();
  if (lane0) {
    unsigned long long* out = stats + (size_t(blockIdx.x) * (blockDim.x / 32) + tid / 32) * kStats;
    out[0] = misses, out[1] = miss_cycles, out[2] = miss_sq, out[3] = worst, out[4] = hits, out[5] = hit_cycles;
  }
  if (tid == 0) block_cycles[blockIdx.x] = end - start;
}

using Kernel = void (*)(const int*, int*, int, unsigned long long*, long long*);
Kernel pick(int s) { return s == 4 ? local_latency<4> : local_latency<8>; }

}  // namespace

int main(int argc, char** argv) {
  const int sms = sm_count();
  FILE* f = open_csv(argc, argv, "local_latency.csv",
                     "stages,block_size,blocks_per_sm,source,batches,loads,miss_share,miss_mean,miss_sd,miss_max,"
                     "hit_mean,cycles_per_batch_median");
  const int kLong = 1552;
  const size_t max_ints = size_t(sms) * 8 * 256 * 64 > size_t(sms) * 256 * kLong ? size_t(sms) * 8 * 256 * 64
                                                                                   : size_t(sms) * 256 * kLong;
  int *din = nullptr, *dout = nullptr;
  unsigned long long* dstats = nullptr;
  long long* dcycles = nullptr;
  CK(cudaMalloc(&din, max_ints * sizeof(int)));
  CK(cudaMalloc(&dout, max_ints * sizeof(int)));
  CK(cudaMemset(din, 1, max_ints * sizeof(int)));
  CK(cudaMalloc(&dstats, size_t(sms) * 8 * 8 * kStats * sizeof(unsigned long long)));
  CK(cudaMalloc(&dcycles, size_t(sms) * 8 * sizeof(long long)));
  L2Flusher flusher;
  struct Config { int s, bs, bps, batches; bool l2; };
  std::vector<Config> configs;
  for (int s : {4, 8})
    for (int bs : {128, 256})
      for (int bps : {1, 2, 4, 8})
        for (bool l2 : {false, true}) {
          // L2 rows only where input and output (4 bytes each a thread a batch) fit well inside L2's 50 MB
          if (l2 && 2.0 * sms * bps * bs * 64 * 4 > 30e6) continue;
          configs.push_back({s, bs, bps, 64, l2});
        }
  for (int s : {4, 8}) configs.push_back({s, 256, 1, kLong, false});
  for (const Config& c : configs) {
    const Kernel k = pick(c.s);
    const int grid = sms * c.bps, warps = grid * c.bs / 32;
    const size_t smem = size_t(c.s) * c.bs * sizeof(int);
    if (c.l2) {
      k<<<grid, c.bs, smem>>>(din, dout, c.batches, dstats, dcycles);
      CK_LAUNCH();
    } else {
      flusher.flush();
    }
    k<<<grid, c.bs, smem>>>(din, dout, c.batches, dstats, dcycles);
    CK_LAUNCH();
    std::vector<unsigned long long> st(size_t(warps) * kStats);
    std::vector<long long> cyc(grid);
    CK(cudaMemcpy(st.data(), dstats, st.size() * sizeof st[0], cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(cyc.data(), dcycles, cyc.size() * sizeof cyc[0], cudaMemcpyDeviceToHost));
    double misses = 0, mc = 0, msq = 0, worst = 0, hits = 0, hc = 0;
    for (int w = 0; w < warps; ++w) {
      const unsigned long long* r = &st[size_t(w) * kStats];
      misses += double(r[0]), mc += double(r[1]), msq += double(r[2]), hits += double(r[4]), hc += double(r[5]);
      worst = std::max(worst, double(r[3]));
    }
    const double loads = misses + hits, mean = misses ? mc / misses : 0.0;
    const double sd = misses > 1 ? sqrt(std::max(0.0, msq / misses - mean * mean)) : 0.0;
    ROW(f, "%d,%d,%d,%s,%d,%.0f,%.5f,%.1f,%.1f,%.0f,%.1f,%.1f\n", c.s, c.bs, c.bps, c.l2 ? "L2" : "DRAM", c.batches,
        loads, loads ? misses / loads : 0.0, mean, sd, worst, hits ? hc / hits : 0.0, median(cyc) / c.batches);
  }
  fclose(f);
  CK(cudaFree(din));
  CK(cudaFree(dout));
  CK(cudaFree(dstats));
  CK(cudaFree(dcycles));
  return 0;
}

// What a 16-byte LDGSTS costs the SM when its active lanes are spread out, as the groups of a
// divergent warp have them (primitive_copies' 'if (lane % D == g)'): lanes 0, D, 2D, ... of each
// warp issue copies, and where those lanes read (global: one 16-byte chunk each, D chunks apart,
// or packed side by side) and where they write (shared: D chunks apart, or packed) vary apart.
// A spread global read touches more 128-byte lines per instruction; a spread shared write puts
// its lanes on the same banks (D = 8: four lanes 128 bytes apart, a 4-way conflict). Which of
// the two sets the SM's rate tells the model whether it is the shared-memory fill's wavefronts
// or the lines an instruction asks of L2 that divergent primitive copies pay.
//
// One block of W warps per SM on every SM; every warp issues its active lanes' copies back to
// back (17 unrolled copies, then a commit), waits at the end. The source (kSourceName below):
// L2_hot, 64 KB every block reads; L2, 16 MB put in L2 by a launch before the timed ones; DRAM,
// a fresh row a copy, L2 flushed before each launch. Cycles per copy instruction of a warp: the
// slope of the block's cycles between n = 136 and 544 copies a lane; SM-wide: that over W.
//
// grouped_copies (source SOURCE_grouped) is primitive_copies' pattern without its math: every
// 512-byte row is read by the warp's D groups in turn, one instruction each; cycles per copy
// instruction is the slope over n x D.
//
// Last, the SM clock (20 ms spins before, between and after the rows; 200 ms of them first) and
// the achieved DRAM rate of grouped_copies at D = 1 and of a plain coalesced read of the same
// bytes, by the wall clock, go to stdout.
//
// Usage: ldgsts_spread OUTDIR          -> OUTDIR/ldgsts_spread.csv
//        ldgsts_spread OUTDIR --ncu    -> one launch per profiled configuration (see the bottom)
//   columns: source,global_spread,shared_spread,d,active_lanes,warps_per_sm,n_low,n_high,
//            cycles_low,cycles_high,cycles_per_copy_warp,cycles_per_copy_sm
#include <cuda_pipeline.h>
#include <cstring>
#include "common.cuh"

namespace {

constexpr int kReps = 5;
constexpr int kUnroll = 17;
// Where the copies read: L2_hot, 64 KB every block reads (the source index & 4095 in int4: the same
// 512 lines from every SM); L2, 16 MB (& 2^20 - 1), a launch before the timed ones puts it in L2,
// each SM's rows spread over it; DRAM, a fresh row a copy, L2 flushed before each launch.
enum Source { kL2Hot, kL2, kDram };
const size_t kMask[3] = {4095, (size_t(1) << 20) - 1, ~size_t(0)};
const char* const kSourceName[3] = {"L2_hot", "L2", "DRAM"};

template <bool kGlobalSpread, bool kSharedSpread>
__global__ void spread_copies(const int4* src, size_t mask, int n, int d, long long* cycles) {
  __shared__ alignas(16) int4 dst[kUnroll * 32];  // shared by the warps: only the banks matter
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  const int gi = kGlobalSpread ? lane : lane / d, si = kSharedSpread ? lane : lane / d;
  const size_t first = (size_t(blockIdx.x) * warps + warp) * size_t(n);
  __syncthreads();
  const long long t0 = clock64();
  if (lane % d == 0) {
    for (int i = 0; i < n; i += kUnroll) {
#pragma unroll
      for (int j = 0; j < kUnroll; ++j)
        __pipeline_memcpy_async(reinterpret_cast<char*>(&dst[j * 32 + si]),
                                reinterpret_cast<const char*>(&src[((first + i + j) * 32 + gi) & mask]), 16);
      __pipeline_commit();
    }
    __pipeline_wait_prior(0);
  }
  __syncthreads();
  if (threadIdx.x == 0) cycles[blockIdx.x] = clock64() - t0;
}

// primitive_copies' access without its math: per 17 rows of 512 bytes, the warp's D groups (lane % D == g)
// each copy their lanes' chunks of all 17 rows in turn, so every row is read by D instructions, the later
// ones while the first one's lines are still on their way from DRAM.
__global__ void grouped_copies(const int4* src, size_t mask, int n, int d, long long* cycles) {
  __shared__ alignas(16) int4 dst[kUnroll * 32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  const size_t first = (size_t(blockIdx.x) * warps + warp) * size_t(n);
  __syncthreads();
  const long long t0 = clock64();
  for (int i = 0; i < n; i += kUnroll) {
    for (int g = 0; g < d; ++g)
      if (lane % d == g) {
#pragma unroll
        for (int j = 0; j < kUnroll; ++j)
          __pipeline_memcpy_async(reinterpret_cast<char*>(&dst[j * 32 + lane]),
                                  reinterpret_cast<const char*>(&src[((first + i + j) * 32 + lane) & mask]), 16);
      }
    __pipeline_commit();
  }
  __pipeline_wait_prior(0);
  __syncthreads();
  if (threadIdx.x == 0) cycles[blockIdx.x] = clock64() - t0;
}

// Random words, as validation.cu's input has (an all-zero source gave the same rows).
__global__ void fill_random(int4* p, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    p[i] = make_int4(int(x), int(x >> 32), int(x * 3), int((x * 5) >> 32));
  }
}

__global__ void clock_spin(unsigned long long ns, long long* out) {  // SM clock: clock64 over %globaltimer
  unsigned long long g0, g;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g0));
  const long long c0 = clock64();
  do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g)); while (g - g0 < ns);
  out[0] = clock64() - c0;
  out[1] = (long long)(g - g0);
}

// The SM clock in MHz over a 20 ms spin (validation.cu's measure); spinning also keeps the clocks up.
double sm_clock_mhz(long long* d) {
  clock_spin<<<1, 1>>>(20000000ull, d);
  CK_LAUNCH();
  long long h[2];
  CK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
  return double(h[0]) / double(h[1]) * 1e3;
}

// A plain coalesced read of n int4 (summed, so that it is not dropped): the GPU's DRAM rate by the wall clock.
__global__ void read_all(const int4* p, size_t n, int* sink) {
  int acc = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const int4 v = p[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x12345678) sink[0] = acc;
}

using Kernel = void (*)(const int4*, size_t, int, int, long long*);
const Kernel kKernels[2][2] = {{spread_copies<false, false>, spread_copies<false, true>},
                               {spread_copies<true, false>, spread_copies<true, true>}};

}  // namespace

int main(int argc, char** argv) {
  const int sms = sm_count();
  const bool ncu = argc > 2 && !strcmp(argv[2], "--ncu");
  FILE* f = ncu ? nullptr
                : open_csv(argc, argv, "ldgsts_spread.csv",
                           "source,global_spread,shared_spread,d,active_lanes,warps_per_sm,n_low,n_high,cycles_low,"
                           "cycles_high,cycles_per_copy_warp,cycles_per_copy_sm");
  const int ns[2] = {kUnroll * 8, kUnroll * 32};
  const int max_warps = 16;
  // DRAM: every copy of every warp its own 512-byte row (a lane's chunk in it), ns[1] rows a warp
  const size_t dram_chunks = size_t(sms) * max_warps * ns[1] * 32;
  int4* dsrc;
  long long* dcyc;
  CK(cudaMalloc(&dsrc, dram_chunks * sizeof(int4)));
  fill_random<<<1024, 256>>>(dsrc, dram_chunks);
  CK_LAUNCH();
  CK(cudaMalloc(&dcyc, sms * sizeof(long long)));
  L2Flusher flusher;
  long long* dclk;
  CK(cudaMalloc(&dclk, 2 * sizeof(long long)));
  for (int i = 0; i < 10; ++i) sm_clock_mhz(dclk);  // 200 ms of spinning before anything is timed
  if (ncu) {
    // The configurations Nsight Compute reads (one launch each, in this order): 8 warps per SM,
    // D = 8, n = 544, from DRAM and from L2_hot, each spread variant.
    for (int dram : {1, 0})
      for (int gs : {0, 1})
        for (int ss : {0, 1}) {
          if (dram) flusher.flush();
          kKernels[gs][ss]<<<sms, 32 * 8>>>(dsrc, dram ? ~size_t(0) : size_t(4095), ns[1], 8, dcyc);
          CK_LAUNCH();
        }
    // then grouped_copies from DRAM at 8 warps per SM, D = 1, 4, 8, 16, 32
    for (int d : {1, 4, 8, 16, 32}) {
      flusher.flush();
      grouped_copies<<<sms, 32 * 8>>>(dsrc, ~size_t(0), ns[1], d, dcyc);
      CK_LAUNCH();
    }
    return 0;
  }
  // The median block's cycles over kReps launches of k at W warps an SM and n copies a lane: the 16 MB
  // source put in L2 by a launch before them, the DRAM one flushed before each.
  auto block_cycles = [&](Kernel k, int src, int w, int n, int d) {
    std::vector<long long> all;
    if (src == kL2) {
      k<<<sms, 32 * w>>>(dsrc, kMask[src], n, d, dcyc);
      CK_LAUNCH();
    }
    for (int r = 0; r < kReps; ++r) {
      if (src == kDram) flusher.flush();
      k<<<sms, 32 * w>>>(dsrc, kMask[src], n, d, dcyc);
      CK_LAUNCH();
      std::vector<long long> cc(sms);
      CK(cudaMemcpy(cc.data(), dcyc, sms * sizeof(long long), cudaMemcpyDeviceToHost));
      all.insert(all.end(), cc.begin(), cc.end());
    }
    return median(all);
  };
  printf("sm_clock_mhz before the spread rows: %.0f\n", sm_clock_mhz(dclk));
  for (int src : {kL2Hot, kL2, kDram})
    for (int gs : {0, 1})
      for (int ss : {0, 1})
        for (int d : {1, 2, 4, 8, 16, 32}) {
          if (d == 1 && (gs || ss)) continue;  // one lane apart is packed
          for (int w : {1, 2, 4, 8, 16}) {
            const double c0 = block_cycles(kKernels[gs][ss], src, w, ns[0], d);
            const double c1 = block_cycles(kKernels[gs][ss], src, w, ns[1], d);
            const double per = (c1 - c0) / (ns[1] - ns[0]);
            ROW(f, "%s,%d,%d,%d,%d,%d,%d,%d,%.1f,%.1f,%.3f,%.3f\n", kSourceName[src], gs, ss, d, 32 / d, w, ns[0],
                ns[1], c0, c1, per, per / w);
          }
        }
  printf("sm_clock_mhz before the grouped rows: %.0f\n", sm_clock_mhz(dclk));
  // grouped_copies: cycles per copy instruction (n rows x D instructions a warp)
  for (int src : {kL2Hot, kL2, kDram})
    for (int d : {1, 2, 4, 8, 16, 32})
      for (int w : {1, 2, 4, 8, 16}) {
        const double c0 = block_cycles(grouped_copies, src, w, ns[0], d);
        const double c1 = block_cycles(grouped_copies, src, w, ns[1], d);
        const double per = (c1 - c0) / (double(ns[1] - ns[0]) * d);
        ROW(f, "%s_grouped,1,1,%d,%d,%d,%d,%d,%.1f,%.1f,%.3f,%.3f\n", kSourceName[src], d, 32 / d, w, ns[0], ns[1],
            c0, c1, per, per / w);
      }
  printf("sm_clock_mhz after: %.0f\n", sm_clock_mhz(dclk));
  // The achieved DRAM rate, by the wall clock: grouped_copies at D = 1, 16 warps an SM, n = 544
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  flusher.flush();
  CK(cudaEventRecord(e0));
  grouped_copies<<<sms, 32 * max_warps>>>(dsrc, ~size_t(0), ns[1], 1, dcyc);
  CK(cudaEventRecord(e1));
  CK_LAUNCH();
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, e0, e1));
  std::vector<long long> cc(sms);
  CK(cudaMemcpy(cc.data(), dcyc, sms * sizeof(long long), cudaMemcpyDeviceToHost));
  const double bytes = double(sms) * max_warps * ns[1] * 512;
  printf("grouped D=1 16 warps from DRAM: %.3f ms, %.0f GB/s, median block %.0f cycles (%.0f MHz if the launch were the block)\n",
         ms, bytes / ms * 1e-6, median(cc), median(cc) / ms * 1e-3);
  int* dsink;
  CK(cudaMalloc(&dsink, sizeof(int)));
  for (int rep = 0; rep < 3; ++rep) {
    flusher.flush();
    CK(cudaEventRecord(e0));
    read_all<<<sms * 8, 256>>>(dsrc, dram_chunks, dsink);
    CK(cudaEventRecord(e1));
    CK_LAUNCH();
    CK(cudaEventElapsedTime(&ms, e0, e1));
    printf("read_all of the same %.0f MB after a flush: %.3f ms, %.0f GB/s\n", bytes * 1e-6, ms, bytes / ms * 1e-6);
  }
  fclose(f);
  return 0;
}

// Where a GEMM k-tile's time goes, per warp, on the GPU: the loops of tests/hw/gemm.cu with a
// clock read around each wait, for traces/h100/gemm_probe.csv.
//
//   cp_async  (S >= 2) each warp sums, over the k-tiles, the cycles in __pipeline_wait_prior(S-2)
//             (its own copies of k-tile kt landing: DEPBAR) and in the __syncthreads after it (the
//             other warps arriving), and counts the k-tiles whose copy wait was over 100 cycles.
//   ws_bulk   (the fenced loop) each consumer warp sums the cycles in its try_wait on full[s] and
//             the producer warp those on empty[s]; no barrier.
//
// Each wait's clock reads add a CS2R and its dependency to the loop, a few cycles a k-tile: the
// cycles_per_ktile column says how far the probed loop is from gemm_validation.csv's.
// Rows: cycles_per_ktile (median over blocks and launches), then per k-tile means over the warps of
// a role: wait (copies or full[s]), barrier (cp_async) or producer_wait (ws_bulk's empty[s]),
// long_waits (k-tiles whose wait was over 100 cycles, per warp) and wait_max (the longest, mean
// over warps).
//
// Usage: gemm_probe OUTDIR  ->  gemm_probe.csv
#include <cuda_pipeline.h>
#include "common.cuh"
#include "gemm_tile.cuh"

using namespace gemm_tile;

namespace {

constexpr int kStats = 5;  // per warp: loop cycles, wait, barrier or producer wait, long waits, longest wait
constexpr long long kLongWait = 100;

struct Probe {
  long long wait = 0, other = 0, longs = 0, longest = 0;
  __device__ void add_wait(long long c) {
    wait += c;
    longs += c > kLongWait;
    longest = c > longest ? c : longest;
  }
  __device__ void store(long long* stats, long long loop) const {
    const int w = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if ((threadIdx.x & 31) != 0) return;
    long long* s = stats + size_t(w) * kStats;
    s[0] = loop; s[1] = wait; s[2] = other; s[3] = longs; s[4] = longest;
  }
};

template <int S>
__global__ void __launch_bounds__(128) probe_cp_async(Params p, long long* stats) {
  extern __shared__ __align__(128) unsigned char smem[];
  const int warp = threadIdx.x >> 5;
  const char *gA, *gB;
  block_panels(p, &gA, &gB);
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
  // zeroed here, not through gemm_tile's zero_acc, which gives this kernel other SASS than it was measured with
  for (int i = 0; i < 2; ++i) for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.f);
  auto issue = [&](int kt) { issue_cp_async_tile(smem + (kt % S) * kStageBytes, gA, gB, kt); };
  Probe pr;
  __syncthreads();
  const long long t0 = clock64();
  for (int s = 0; s < S - 1; ++s) { issue(s); __pipeline_commit(); }
  for (int kt = 0; kt < kKT; ++kt) {
    const long long a = clock64();
    __pipeline_wait_prior(S - 2);
    const long long b = clock64();
    __syncthreads();
    const long long c = clock64();
    pr.add_wait(b - a);
    pr.other += c - b;
    if (kt + S - 1 < kKT) issue(kt + S - 1);
    __pipeline_commit();
    const unsigned char* st = smem + (kt % S) * kStageBytes;
    compute_tile(reinterpret_cast<const half*>(st), reinterpret_cast<const half*>(st + kTileBytes), warp, acc, p.R);
  }
  const long long t1 = clock64();
  store_acc(p, warp, acc);
  pr.store(stats, t1 - t0);
}

__device__ __forceinline__ void wait_parity(uint32_t bar, uint32_t parity) {
  asm volatile("{\n\t.reg .pred P;\nWAIT_P:\n\tmbarrier.try_wait.parity.shared::cta.b64 P, [%0], %1;\n\t@!P bra WAIT_P;\n\t}"
               :: "r"(bar), "r"(parity) : "memory");
}

template <int S>
__global__ void __launch_bounds__(160) probe_ws_bulk(Params p, long long* stats) {
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ __align__(8) unsigned long long full[S], empty[S];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const char *gA, *gB;
  block_panels(p, &gA, &gB);
  init_stage_barriers(full, empty, S);
  Probe pr;
  __syncthreads();
  const long long t0 = clock64();
  if (warp == 4) {
    for (int kt = 0; kt < kKT; ++kt) {
      const int s = kt % S;
      const long long a = clock64();
      wait_parity(sa(&empty[s]), ((kt / S) & 1) ^ 1);
      pr.other += clock64() - a;
      if (lane == 0) {
        issue_bulk_tile(&full[s], smem + s * kStageBytes, gA, gB, kt);
      }
      __syncwarp();
    }
  } else {
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
    for (int i = 0; i < 2; ++i) for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.f);  // as above
    for (int kt = 0; kt < kKT; ++kt) {
      const int s = kt % S;
      const long long a = clock64();
      wait_parity(sa(&full[s]), (kt / S) & 1);
      pr.add_wait(clock64() - a);
      const unsigned char* st = smem + s * kStageBytes;
      compute_tile(reinterpret_cast<const half*>(st), reinterpret_cast<const half*>(st + kTileBytes), warp, acc, p.R);
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      __syncwarp();
      if (lane == 0) asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(sa(&empty[s])) : "memory");
    }
    store_acc(p, warp, acc);
  }
  const long long t1 = clock64();
  pr.store(stats, t1 - t0);
}

using Fn = void (*)(Params, long long*);

Fn pick(bool cp, int S) {
  switch (S) {
    case 1: return probe_ws_bulk<1>;  // the cp.async loop's S = 1 has no wait_prior(S-2): not probed
    case 2: return cp ? probe_cp_async<2> : probe_ws_bulk<2>;
    case 3: return cp ? probe_cp_async<3> : probe_ws_bulk<3>;
    case 4: return cp ? probe_cp_async<4> : probe_ws_bulk<4>;
    case 5: return cp ? probe_cp_async<5> : probe_ws_bulk<5>;
    default: return cp ? probe_cp_async<6> : probe_ws_bulk<6>;
  }
}

// Per k-tile means over the warps of one role (consumers: every warp of cp_async, warps 0-3 of ws_bulk).
struct RoleMeans {
  double wait = 0, other = 0, longs = 0, longest = 0;
  int n = 0;
  void add(const long long* s) { wait += s[1]; other += s[2]; longs += s[3]; longest += s[4]; ++n; }
  double per_ktile(double v) const { return n ? v / n / kKT : 0; }
};

}  // namespace

int main(int argc, char** argv) {
  const int sms = sm_count();
  const int max_blocks = 4 * sms;
  const size_t panel_bytes = size_t(kKT) * kTileBytes;
  half *A, *B;
  CK(cudaMalloc(&A, panel_bytes * max_blocks));
  CK(cudaMalloc(&B, panel_bytes * max_blocks));
  CK(cudaMemset(A, 0x3c, panel_bytes * max_blocks));
  CK(cudaMemset(B, 0x20, panel_bytes * max_blocks));
  Params p{};
  p.A = A; p.B = B;
  CK(cudaMalloc(&p.C, size_t(max_blocks) * kBM * kBN * sizeof(float)));
  long long* stats;
  CK(cudaMalloc(&stats, size_t(max_blocks) * 5 * kStats * sizeof(long long)));
  FILE* f = open_csv(argc, argv, "gemm_probe.csv",
                     "design,stages,blocks_per_sm,mem,R,cycles_per_ktile,wait,barrier,producer_wait,long_waits,wait_max");
  for (const char* d : {"cp_async", "ws_bulk"})
    for (int R : {1, 4})
      for (const char* mem : {"L2", "DRAM"})
        for (int bps : {1, 2, 4})
          for (int S = 1; S <= 6; ++S) {
            const bool cp = d[0] == 'c';
            if (cp && S == 1) continue;
            Fn fn = pick(cp, S);
            const int threads = cp ? 128 : 160, warps = threads / 32;
            const int smem = S * kStageBytes;
            CK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
            int occ = 0;
            CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, fn, threads, smem));
            if (occ < bps) continue;
            Params q = p;
            q.per_block_panels = mem[0] == 'D';
            q.R = R;
            const int grid = sms * bps;
            std::vector<double> per;
            RoleMeans cons, prod;
            std::vector<long long> st(size_t(grid) * warps * kStats);
            for (int r = 0; r <= kReps; ++r) {
              fn<<<grid, threads, smem>>>(q, stats);
              CK_LAUNCH();
              if (r == 0) continue;
              CK(cudaMemcpy(st.data(), stats, st.size() * sizeof(long long), cudaMemcpyDeviceToHost));
              for (int b = 0; b < grid; ++b)
                for (int w = 0; w < warps; ++w) {
                  const long long* s = &st[(size_t(b) * warps + w) * kStats];
                  if (w == 0) per.push_back(double(s[0]) / kKT);
                  (!cp && w == 4 ? prod : cons).add(s);
                }
            }
            ROW(f, "%s,%d,%d,%s,%d,%.1f,%.1f,%.1f,%.1f,%.2f,%.1f\n", d, S, bps, mem, R, median(per),
                cons.per_ktile(cons.wait), cp ? cons.per_ktile(cons.other) : 0.0, cp ? 0.0 : prod.per_ktile(prod.other),
                cons.per_ktile(cons.longs), cons.n ? cons.longest / cons.n : 0.0);
          }
  fclose(f);
  return 0;
}

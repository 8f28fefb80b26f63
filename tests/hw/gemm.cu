// The two GEMM main-loop designs of kernels/gemm_cp_async_multistage.json and
// kernels/gemm_warp_specialized_bulk.json, timed on the GPU for traces/h100/gemm_validation.csv.
//
//   cp_async  128 threads, block tile 64x64, k-tile 32 of fp16 A and B (4 KB each, 8 KB per
//             stage), each warp a 32x32 quadrant as 2x2 wmma 16x16x16 fragments (fp32), R
//             repeats of each MMA. Every thread issues four 16-byte __pipeline_memcpy_async
//             chunks per k-tile, one commit per k-tile; the loop is __pipeline_wait_prior(S-2),
//             __syncthreads, issue k-tile kt+S-1 into the slot freed last iteration, commit,
//             compute k-tile kt. S = 1: issue, commit, wait, __syncthreads, compute, __syncthreads.
//   ws_bulk   160 threads: warp 4 produces, warps 0-3 consume. Per stage full[s] (count 1) and
//             empty[s] (count 4). The producer warp waits on empty[s] by parity, lane 0 does
//             mbarrier.arrive.expect_tx 8192 on full[s] and two 4 KB cp.async.bulk copies
//             completing on it; consumers wait on full[s] by parity, compute, then
//             fence.proxy.async.shared::cta, __syncwarp, lane 0 arrives on empty[s].
//             ws_nofence: the same without the fence (a proxy hazard, see the issue).
//
// Global A and B are stored tile by tile (each k-tile's 64x32 A tile and 32x64 B tile is 4 KB
// contiguous, row-major in the tile), so a tile is one bulk copy. mem = L2: every block reads the
// same panels (L2-resident after the first blocks); mem = DRAM: each block its own panels (K =
// 4096: 1 MB per block, 132 x 4 blocks >> L2). Grid = SMs x blocks_per_sm, one wave.
// cycles_per_ktile: per block, SM clock from just before the main loop (after the prologue's
// barrier init) to its end, over the k-tiles; median over blocks and launches (3 timed, 1 warm-up).
//
// Usage: gemm OUTDIR  ->  gemm_validation.csv
#include <cuda_pipeline.h>
#include "common.cuh"
#include "gemm_tile.cuh"

using namespace gemm_tile;

namespace {

template <int S>
__global__ void __launch_bounds__(128) gemm_cp_async(Params p) {
  extern __shared__ __align__(128) unsigned char smem[];
  const int warp = threadIdx.x >> 5;
  const char *gA, *gB;
  block_panels(p, &gA, &gB);
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
  zero_acc(acc);
  auto issue = [&](int kt) { issue_cp_async_tile(smem + (kt % S) * kStageBytes, gA, gB, kt); };
  __syncthreads();
  const long long t0 = clock64();
  if constexpr (S == 1) {
    for (int kt = 0; kt < kKT; ++kt) {
      issue(kt);
      __pipeline_commit();
      __pipeline_wait_prior(0);
      __syncthreads();
      compute_tile(reinterpret_cast<const half*>(smem), reinterpret_cast<const half*>(smem + kTileBytes), warp, acc, p.R);
      __syncthreads();
    }
  } else {
    for (int s = 0; s < S - 1; ++s) { issue(s); __pipeline_commit(); }
    for (int kt = 0; kt < kKT; ++kt) {
      __pipeline_wait_prior(S - 2);
      __syncthreads();
      if (kt + S - 1 < kKT) issue(kt + S - 1);
      __pipeline_commit();
      const unsigned char* st = smem + (kt % S) * kStageBytes;
      compute_tile(reinterpret_cast<const half*>(st), reinterpret_cast<const half*>(st + kTileBytes), warp, acc, p.R);
    }
  }
  const long long t1 = clock64();
  store_acc(p, warp, acc);
  if (threadIdx.x == 0) p.cycles[blockIdx.x] = t1 - t0;
}

template <int S, bool kFence>
__global__ void __launch_bounds__(160) gemm_ws_bulk(Params p) {
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ __align__(8) unsigned long long full[S], empty[S];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const char *gA, *gB;
  block_panels(p, &gA, &gB);
  init_stage_barriers(full, empty, S);
  __syncthreads();
  const long long t0 = clock64();
  if (warp == 4) {
    for (int kt = 0; kt < kKT; ++kt) {
      const int s = kt % S;
      const uint32_t parity = ((kt / S) & 1) ^ 1;  // a fresh barrier's preceding phase counts as complete
      asm volatile("{\n\t.reg .pred P;\nWAIT_E:\n\tmbarrier.try_wait.parity.shared::cta.b64 P, [%0], %1;\n\t@!P bra WAIT_E;\n\t}"
                   :: "r"(sa(&empty[s])), "r"(parity) : "memory");
      if (lane == 0) {
        issue_bulk_tile(&full[s], smem + s * kStageBytes, gA, gB, kt);
      }
      __syncwarp();
    }
  } else {
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
    zero_acc(acc);
    for (int kt = 0; kt < kKT; ++kt) {
      const int s = kt % S;
      const uint32_t parity = (kt / S) & 1;
      asm volatile("{\n\t.reg .pred P;\nWAIT_F:\n\tmbarrier.try_wait.parity.shared::cta.b64 P, [%0], %1;\n\t@!P bra WAIT_F;\n\t}"
                   :: "r"(sa(&full[s])), "r"(parity) : "memory");
      const unsigned char* st = smem + s * kStageBytes;
      compute_tile(reinterpret_cast<const half*>(st), reinterpret_cast<const half*>(st + kTileBytes), warp, acc, p.R);
      if constexpr (kFence) asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      __syncwarp();
      if (lane == 0) asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(sa(&empty[s])) : "memory");
    }
    store_acc(p, warp, acc);
  }
  const long long t1 = clock64();
  if (threadIdx.x == 0) p.cycles[blockIdx.x] = t1 - t0;
}

using Fn = void (*)(Params);
template <int S> Fn cp_fn() { return gemm_cp_async<S>; }
template <int S> Fn ws_fn(bool fence) { return fence ? gemm_ws_bulk<S, true> : gemm_ws_bulk<S, false>; }

Fn pick(const char* design, int S) {
  const bool cp = design[0] == 'c', fence = std::string(design) == "ws_bulk";
  switch (S) {
    case 1: return cp ? cp_fn<1>() : ws_fn<1>(fence);
    case 2: return cp ? cp_fn<2>() : ws_fn<2>(fence);
    case 3: return cp ? cp_fn<3>() : ws_fn<3>(fence);
    case 4: return cp ? cp_fn<4>() : ws_fn<4>(fence);
    case 5: return cp ? cp_fn<5>() : ws_fn<5>(fence);
    default: return cp ? cp_fn<6>() : ws_fn<6>(fence);
  }
}

__global__ void spin(long long cycles, int* sink) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {}
  if (threadIdx.x == 1024) sink[0] = 0;
}

}  // namespace

int main(int argc, char** argv) {
  const int sms = sm_count();
  const int max_blocks = 4 * sms;
  const size_t panel_bytes = size_t(kKT) * kTileBytes;
  half *A, *B;
  CK(cudaMalloc(&A, panel_bytes * max_blocks));
  CK(cudaMalloc(&B, panel_bytes * max_blocks));
  CK(cudaMemset(A, 0x3c, panel_bytes * max_blocks));  // halves 1.0586
  CK(cudaMemset(B, 0x20, panel_bytes * max_blocks));  // halves 0.0079
  Params p{};
  p.A = A; p.B = B;
  CK(cudaMalloc(&p.C, size_t(max_blocks) * kBM * kBN * sizeof(float)));
  CK(cudaMalloc(&p.cycles, max_blocks * sizeof(long long)));
  spin<<<sms, 128>>>(1000000000LL, reinterpret_cast<int*>(p.C));
  CK_LAUNCH();
  FILE* f = open_csv(argc, argv, "gemm_validation.csv",
                     "design,stages,blocks_per_sm,mem,R,k_tiles,cycles_per_ktile_median,cycles_per_ktile_min,cycles_per_ktile_max,checksum");
  const char* designs[] = {"cp_async", "ws_bulk", "ws_nofence"};
  const char* mems[] = {"L2", "DRAM"};
  for (const char* d : designs)
    for (int R : {1, 4})
      for (const char* mem : mems)
        for (int bps : {1, 2, 4})
          for (int S = 1; S <= 6; ++S) {
            if (d[3] == 'n' && (bps != 1 || R != 1)) continue;  // the no-fence variant: a few rows only
            Fn fn = pick(d, S);
            const int threads = d[0] == 'c' ? 128 : 160;
            const int smem = S * kStageBytes;
            CK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
            int occ = 0;
            CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, fn, threads, smem));
            if (occ < bps) { fprintf(stderr, "%s S=%d bps=%d: occupancy %d, skipped\n", d, S, bps, occ); continue; }
            Params q = p;
            q.per_block_panels = mem[0] == 'D';
            q.R = R;
            const int grid = sms * bps;
            std::vector<double> per;
            std::vector<long long> cyc(grid);
            for (int r = 0; r <= kReps; ++r) {
              fn<<<grid, threads, smem>>>(q);
              CK_LAUNCH();
              if (r == 0) continue;
              CK(cudaMemcpy(cyc.data(), q.cycles, grid * sizeof(long long), cudaMemcpyDeviceToHost));
              for (long long c : cyc) per.push_back(double(c) / kKT);
            }
            float c0 = 0;
            CK(cudaMemcpy(&c0, q.C, sizeof(float), cudaMemcpyDeviceToHost));
            ROW(f, "%s,%d,%d,%s,%d,%d,%.1f,%.1f,%.1f,%.4g\n", d, S, bps, mem, R, kKT, median(per),
                *std::min_element(per.begin(), per.end()), *std::max_element(per.begin(), per.end()), c0);
          }
  fclose(f);
  return 0;
}

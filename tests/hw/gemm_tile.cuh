// The GEMM tile the GPU benchmarks share (tests/hw/gemm.cu times the two designs, gemm_probe.cu
// splits one design's k-tile into its waits): the block tile, its parameters, one warp's k-tile of
// wmma work and the accumulators' store. See gemm.cu for the designs.
#pragma once
#include <cuda_fp16.h>
#include <cuda_pipeline.h>
#include <mma.h>

namespace gemm_tile {

using namespace nvcuda;

constexpr int kBM = 64, kBN = 64, kBK = 32;
constexpr int kTileBytes = kBM * kBK * 2;  // 4096, A and B alike
constexpr int kStageBytes = 2 * kTileBytes;
constexpr int kK = 4096;
constexpr int kKT = kK / kBK;  // 128 k-tiles
constexpr int kReps = 3;

struct Params {
  const half* A;   // [panel][kt][64x32]
  const half* B;   // [panel][kt][32x64]
  float* C;        // [block][64x64]
  long long* cycles;
  int per_block_panels;  // 1: DRAM (block b reads panel b), 0: L2 (panel 0)
  int R;
};

// One k-tile of one warp: 2 k-steps x 2x2 fragments, each MMA R times.
__device__ __forceinline__ void compute_tile(const half* As, const half* Bs, int warp,
                                             wmma::fragment<wmma::accumulator, 16, 16, 16, float> (&acc)[2][2], int R) {
  const int wm = (warp >> 1) * 32, wn = (warp & 1) * 32;
#pragma unroll
  for (int ks = 0; ks < kBK; ks += 16) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a[2];
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> b[2];
#pragma unroll
    for (int i = 0; i < 2; ++i) wmma::load_matrix_sync(a[i], As + (wm + 16 * i) * kBK + ks, kBK);
#pragma unroll
    for (int j = 0; j < 2; ++j) wmma::load_matrix_sync(b[j], Bs + ks * kBN + wn + 16 * j, kBN);
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
  }
}

__device__ __forceinline__ void store_acc(const Params& p, int warp, wmma::fragment<wmma::accumulator, 16, 16, 16, float> (&acc)[2][2]) {
  const int wm = (warp >> 1) * 32, wn = (warp & 1) * 32;
  float* C = p.C + size_t(blockIdx.x) * kBM * kBN;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) wmma::store_matrix_sync(C + (wm + 16 * i) * kBN + wn + 16 * j, acc[i][j], kBN, wmma::mem_row_major);
}

__device__ __forceinline__ uint32_t sa(const void* q) { return uint32_t(__cvta_generic_to_shared(q)); }


// cp_async: this thread's four 16-byte chunks of k-tile kt (chunks tid and tid + 128 of A and of B) into
// stage st, one __pipeline_memcpy_async each (a commit per k-tile is the caller's).
__device__ __forceinline__ void issue_cp_async_tile(unsigned char* st, const char* gA, const char* gB, int kt) {
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    const int chunk = threadIdx.x + c * 128;  // 0..255: A, 256..511: B
    const char* src = chunk < 256 ? gA + size_t(kt) * kTileBytes + chunk * 16 : gB + size_t(kt) * kTileBytes + (chunk - 256) * 16;
    __pipeline_memcpy_async(st + chunk * 16, src, 16);
  }
}

// ws_bulk's producer lane: mbarrier.arrive.expect_tx of the stage's 8 KB on full, then k-tile kt's A and
// B tiles into stage st, two 4 KB cp.async.bulk completing on full.
__device__ __forceinline__ void issue_bulk_tile(unsigned long long* full, unsigned char* st, const char* gA, const char* gB, int kt) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(sa(full)), "r"(kStageBytes) : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
               :: "r"(sa(st)), "l"(gA + size_t(kt) * kTileBytes), "r"(kTileBytes), "r"(sa(full)) : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
               :: "r"(sa(st + kTileBytes)), "l"(gB + size_t(kt) * kTileBytes), "r"(kTileBytes), "r"(sa(full)) : "memory");
}


// This block's A and B panels: its own (DRAM rows) or panel 0 (L2 rows).
__device__ __forceinline__ void block_panels(const Params& p, const char** gA, const char** gB) {
  const size_t panel = p.per_block_panels ? blockIdx.x : 0;
  *gA = reinterpret_cast<const char*>(p.A) + panel * size_t(kKT) * kTileBytes;
  *gB = reinterpret_cast<const char*>(p.B) + panel * size_t(kKT) * kTileBytes;
}

// ws_bulk's barriers, by thread 0: full[s] completes with the producer's arrive and the copies' bytes,
// empty[s] with the four consumer warps' arrives.
__device__ __forceinline__ void init_stage_barriers(unsigned long long* full, unsigned long long* empty, int stages) {
  if (threadIdx.x != 0) return;
  for (int s = 0; s < stages; ++s) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(sa(&full[s])));
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 4;" :: "r"(sa(&empty[s])));
  }
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}


// A warp's 2x2 fp32 accumulators, zeroed.
__device__ __forceinline__ void zero_acc(wmma::fragment<wmma::accumulator, 16, 16, 16, float> (&acc)[2][2]) {
  for (int i = 0; i < 2; ++i) for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.f);
}

}  // namespace gemm_tile

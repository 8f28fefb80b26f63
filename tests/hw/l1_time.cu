// Does a local line's chance of leaving L1 depend on the time between its loads, or only on the lines
// streamed through L1 meanwhile (traces/h100/l1_time.csv)?
//
// l1_local.cu's local_reuse loop (a 4-byte __pipeline_memcpy_async to the offset read from a local
// size_t array, wait_prior(S - 1), an add from the offset read again, a store a batch), 1552 batches,
// with k dependent FMAs a batch after the add: the same lines go through L1 between two loads of an
// element at every k, the cycles between them grow with k. Nsight Compute counts the local loads'
// L1 hits and misses (run_l1_time.sh). The loop is written out again rather than shared with
// l1_local.cu: that program's rows calibrate the law, and routing its loop through a shared helper
// changes its compiled code (its PTX reorders the address arithmetic), so it stays as measured.
//
// Usage: l1_time OUTDIR -> OUTDIR/l1_time_launches.csv
//   columns: order,stages,block_size,blocks_per_sm,grid_blocks,k,batches
#include <cuda_pipeline.h>
#include <cstdio>
#include "common.cuh"

namespace {

constexpr int kBatches = 1552;

template <int S>
__global__ void local_reuse_delayed(const int* global_in, int* global_out, int k) {
  extern __shared__ __align__(16) int shared[];
  size_t shared_offset[S];
  for (int s = 0; s < S; ++s) shared_offset[s] = size_t(s) * blockDim.x;
  const int tid = threadIdx.x;
  const size_t row = size_t(gridDim.x) * blockDim.x;
  const int* src = global_in + size_t(blockIdx.x) * blockDim.x + tid;
  float acc = 0.0f;
  for (int fetch = 0; fetch < kBatches + S - 1; ++fetch) {
    if (fetch < kBatches) __pipeline_memcpy_async(shared + shared_offset[fetch % S] + tid, src + fetch * row, 4);
    __pipeline_commit();
    if (fetch >= S - 1) {
      const int batch = fetch - (S - 1);
      __pipeline_wait_prior(S - 1);
      float v = float(shared[shared_offset[batch % S] + tid]);
#pragma unroll 1
      for (int i = 0; i < k; ++i) v = fmaf(v, 1.0000001f, 0.5f);
      acc += v;
      global_out[(size_t(batch) * gridDim.x + blockIdx.x) * blockDim.x + tid] = int(v);
    }
  }
  global_out[size_t(blockIdx.x) * blockDim.x + tid] = int(acc);
}

using Kernel = void (*)(const int*, int*, int);
Kernel pick(int s) {
  switch (s) {
    case 2: return local_reuse_delayed<2>;
    case 4: return local_reuse_delayed<4>;
    default: return local_reuse_delayed<8>;
  }
}

}  // namespace

int main(int argc, char** argv) {
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  FILE* f = open_csv(argc, argv, "l1_time_launches.csv", "order,stages,block_size,blocks_per_sm,grid_blocks,k,batches");
  const size_t max_grid = size_t(sms) * 4 * 256;
  int *din = nullptr, *dout = nullptr;
  CK(cudaMalloc(&din, max_grid * kBatches * sizeof(int)));
  CK(cudaMalloc(&dout, max_grid * kBatches * sizeof(int)));
  CK(cudaMemset(din, 1, max_grid * kBatches * sizeof(int)));
  int order = 0;
  for (int s : {2, 4, 8})
    for (int bps : {1, 4})
      for (int k : {0, 64, 256}) {
        const int bs = 256, grid = sms * bps;
        Kernel fn = pick(s);
        fn<<<grid, bs, size_t(s) * bs * sizeof(int)>>>(din, dout, k);
        CK_LAUNCH();
        ROW(f, "%d,%d,%d,%d,%d,%d,%d\n", order, s, bs, bps, grid, k, kBatches);
        ++order;
      }
  fclose(f);
  CK(cudaFree(din));
  CK(cudaFree(dout));
  return 0;
}

// What share of a per-thread local array's loads (LDL) miss in L1, against how much of L1 the SM's
// warps need between two uses of the same element, and which shared-memory carveout the driver picks.
//
// The guide's pipelines keep `size_t shared_offset[stages]` in local memory (it is indexed at run time)
// and read one element a batch per copy and one per compute, each a warp-wide LDL of one 128-byte line.
// On the H100 an 8-stage pipeline at 2-8 blocks per SM runs 6-14% slower than a 4-stage one, and ncu
// finds its LDLs missing in L1 (with_staging_unified, 256 threads, 8 blocks per SM: 17% of the local
// sectors at 8 stages, 3% at 4): the driver's carveout grows with the shared memory a block asks for, so
// L1 shrinks, while the lines a local element must survive between its uses grow with the stages.
//
// local_reuse<S, STORE>: the unified pipeline's loop without the pipeline object: per batch each thread
// copies 4 bytes (LDGSTS.E, cached in L1) into stage i % S at the offset read from its local array,
// commits, waits for the batch S - 1 back (__pipeline_wait_prior(S - 1)) and adds it, reading its offset
// from the local array again; with STORE it also stores the value to global memory each batch, as the
// validation kernels do (do stores take L1 room too?). Dynamic shared memory S * block * 4 bytes, as the
// validation kernels ask. 128 batches (the L1 filling) at every carveout, and 1552 (the validation set's
// long input: L1 long past full, its steady state) at the driver's.
// probe: an empty kernel with D bytes of dynamic shared memory and T threads, for the carveout alone.
//
// The program only launches, in a fixed order, and writes the order with each launch's parameters;
// Nsight Compute reads the counters (run_l1_local.sh runs both and joins them with l1_local.py):
//   l1_local OUTDIR [wide] -> OUTDIR/l1_local_launches.csv (wide: blocks of 512 and 1,024 threads only)
//   columns: order,kernel,stages,block_size,blocks_per_sm,grid_blocks,dynamic_smem,carveout_pct,store,batches
//   (carveout_pct -1: the driver's default choice; otherwise cudaFuncAttributePreferredSharedMemoryCarveout)
#include <cuda_pipeline.h>
#include <cstdio>
#include <string>
#include "common.cuh"

namespace {

constexpr int kBatches = 128;      // the short rows
constexpr int kLongBatches = 1552;  // the long rows: the validation set's long input, L1 long past full

template <int S, bool STORE>
__global__ void local_reuse(const int* global_in, int* global_out, int batches) {
  extern __shared__ __align__(16) int shared[];
  size_t shared_offset[S];
  for (int s = 0; s < S; ++s) shared_offset[s] = size_t(s) * blockDim.x;
  const int tid = threadIdx.x;
  const size_t row = size_t(gridDim.x) * blockDim.x;
  const int* src = global_in + size_t(blockIdx.x) * blockDim.x + tid;
  int acc = 0;
  for (int fetch = 0; fetch < batches + S - 1; ++fetch) {
    if (fetch < batches) __pipeline_memcpy_async(shared + shared_offset[fetch % S] + tid, src + fetch * row, 4);
    __pipeline_commit();
    if (fetch >= S - 1) {
      const int batch = fetch - (S - 1);
      __pipeline_wait_prior(S - 1);
      const int v = shared[shared_offset[batch % S] + tid];
      acc += v;
      if (STORE) global_out[(size_t(batch) * gridDim.x + blockIdx.x) * blockDim.x + tid] = v;
    }
  }
  global_out[size_t(blockIdx.x) * blockDim.x + tid] = acc;
}

__global__ void probe(int* out) {
  if (threadIdx.x == 0 && blockIdx.x == 0) out[0] = blockDim.x;  // the dynamic shared memory is only asked for
}

using Kernel = void (*)(const int*, int*, int);
template <bool STORE>
Kernel pick(int s) {
  switch (s) {
    case 2: return local_reuse<2, STORE>;
    case 4: return local_reuse<4, STORE>;
    case 8: return local_reuse<8, STORE>;
    default: return local_reuse<16, STORE>;
  }
}

}  // namespace

int main(int argc, char** argv) {
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  // "wide": the same loop in blocks of 512 and 1,024 threads (1 and 2 blocks per SM), at the driver's
  // carveout only; a separate run, so that the rows of 128 and 256 threads stay as they were measured.
  const bool wide = argc > 2 && std::string(argv[2]) == "wide";
  FILE* f = open_csv(argc, argv, "l1_local_launches.csv",
                     "order,kernel,stages,block_size,blocks_per_sm,grid_blocks,dynamic_smem,carveout_pct,store,batches");
  const size_t max_grid = size_t(sms) * 2048;  // 8 blocks of 256 threads, 2 of 1,024
  int *din = nullptr, *dout = nullptr;
  CK(cudaMalloc(&din, max_grid * kLongBatches * sizeof(int)));
  CK(cudaMalloc(&dout, max_grid * kLongBatches * sizeof(int)));
  CK(cudaMemset(din, 1, max_grid * kLongBatches * sizeof(int)));
  int order = 0;
  if (wide) {
    for (int batches : {kBatches, kLongBatches})
      for (int store : {0, 1})
        for (int s : {2, 4, 8, 16}) {
          Kernel k = store ? pick<true>(s) : pick<false>(s);
          CK(cudaFuncSetAttribute(k, cudaFuncAttributePreferredSharedMemoryCarveout, int(cudaSharedmemCarveoutDefault)));
          for (int bs : {512, 1024})
            for (int bps : {1, 2}) {
              const int grid = sms * bps;
              const size_t smem = size_t(s) * bs * sizeof(int);  // 16 stages of 1,024 threads: 64 KB
              CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
              k<<<grid, bs, smem>>>(din, dout, batches);
              CK_LAUNCH();
              ROW(f, "%d,local_reuse,%d,%d,%d,%d,%zu,-1,%d,%d\n", order, s, bs, bps, grid, smem, store, batches);
              ++order;
            }
        }
    fclose(f);
    CK(cudaFree(din));
    CK(cudaFree(dout));
    return 0;
  }
  // The short rows at every carveout; the long rows (and their stores) at the driver's carveout only.
  for (int batches : {kBatches, kLongBatches})
  for (int store : {0, 1})
  for (int carveout : {-1, 25, 50, 100}) {
    if ((store || batches != kBatches) && carveout != -1) continue;
    for (int s : {2, 4, 8, 16}) {
      Kernel k = store ? pick<true>(s) : pick<false>(s);
      // The attribute sticks to the function: reset it to the driver's default for the -1 rows.
      CK(cudaFuncSetAttribute(k, cudaFuncAttributePreferredSharedMemoryCarveout,
                              carveout < 0 ? int(cudaSharedmemCarveoutDefault) : carveout));
      for (int bs : {128, 256}) {
        for (int bps : {1, 2, 4, 8}) {
          const int grid = sms * bps;
          const size_t smem = size_t(s) * bs * sizeof(int);
          k<<<grid, bs, smem>>>(din, dout, batches);
          CK_LAUNCH();
          ROW(f, "%d,local_reuse,%d,%d,%d,%d,%zu,%d,%d,%d\n", order, s, bs, bps, grid, smem, carveout, store, batches);
          ++order;
        }
      }
    }
  }
  for (int bs : {64, 128, 256, 512, 1024}) {
    for (int kb : {0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48}) {
      const size_t smem = size_t(kb) * 1024;
      probe<<<sms, bs, smem>>>(dout);
      CK_LAUNCH();
      ROW(f, "%d,probe,0,%d,1,%d,%zu,-1,0,0\n", order, bs, sms, smem);
      ++order;
    }
  }
  fclose(f);
  CK(cudaFree(din));
  CK(cudaFree(dout));
  return 0;
}

// The chase of roundtrip.cu and barrier_lines.cu: one 4-byte read a thread and batch in the
// examples' streaming pattern (block * block_size + grid_size * batch + tid), each batch's index
// adding the value the last one read (the input is zeros, which the compiler cannot know), so
// batches do not overlap. Lane 0 of each warp writes the warp's cycles over all batches.
#pragma once
#include <cuda/barrier>
#include <cuda_pipeline.h>

#pragma nv_diag_suppress static_var_with_dynamic_init

namespace chase_bench {

enum Mode { kLds, kLdg, kCpAsync, kMbarrier, kModes };
const char* const kModeName[] = {"lds", "ldg", "cp_async", "mbarrier"};

template <int kMode>
__global__ void chase(int* global_out, const int* global_in, int batches, long long* cycles) {
  extern __shared__ int shared[];  // blockDim.x ints
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  const int tid = threadIdx.x;
  const size_t grid_size = size_t(gridDim.x) * blockDim.x;
  if (tid == 0) init(&bar, blockDim.x);
  shared[tid] = 0;
  __syncthreads();
  int v = 0;
  const long long t0 = clock64();
  for (int b = 0; b < batches; ++b) {
    const size_t i = size_t(blockIdx.x) * blockDim.x + grid_size * b + tid + v;
    if (kMode == kLds) {
      v = reinterpret_cast<volatile int*>(shared)[tid + v];
    } else if (kMode == kLdg) {
      v = __ldcg(&global_in[i]);
    } else if (kMode == kCpAsync) {
      __pipeline_memcpy_async(&shared[tid], &global_in[i], 4);
      __pipeline_commit();
      __pipeline_wait_prior(0);
      v = shared[tid];
    } else {
      cuda::memcpy_async(&shared[tid], &global_in[i], cuda::aligned_size_t<4>(4), bar);
      bar.arrive_and_wait();
      v = shared[tid];
    }
  }
  const long long t1 = clock64();
  global_out[size_t(blockIdx.x) * blockDim.x + tid] = v;
  if (tid % 32 == 0) cycles[size_t(blockIdx.x) * (blockDim.x / 32) + tid / 32] = t1 - t0;
}

using Kernel = void (*)(int*, const int*, int, long long*);
inline Kernel chase_for(int m) {
  switch (m) {
    case kLds: return chase<kLds>;
    case kLdg: return chase<kLdg>;
    case kCpAsync: return chase<kCpAsync>;
    default: return chase<kMbarrier>;
  }
}

}  // namespace chase_bench

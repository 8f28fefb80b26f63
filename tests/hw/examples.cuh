// The documented cuda::pipeline examples (CUDA C++ Programming Guide 10.28.1-2, seeds 000/001)
// with compute() defined as smsim's `compute` op, shared by tests/hw/pipelines.cu and
// tests/hw/validation.cu so both time the same code. See pipelines.cu for what was added to the
// guide's code (k, the clock64 stamp, compute()).
//
// Include it after defining, in an anonymous namespace,
//   __device__ __forceinline__ void stamp_end(long long t0, long long* cycles);
// (called by every thread at the end of each kernel; t0 = clock64() at kernel entry):
// pipelines.cu records the block time, validation.cu also the SM and the raw start/end clocks.
#pragma once
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
#include <cuda/pipeline>
#include <cassert>

namespace cg = cooperative_groups;

// The guide declares its pipeline_shared_state as a plain __shared__ variable; make_pipeline
// initialises it, so the compiler's warning about its constructor does not apply.
#pragma nv_diag_suppress static_var_with_dynamic_init

namespace {

constexpr float kMul = 1.000001f, kAdd = 0.5f;

// The dependent chain; k is a run-time multiple of 8, unrolled by 8 without a remainder loop.
__device__ __forceinline__ float chain(float v, int k) {
  for (int i = 0; i < k; i += 8) {
#pragma unroll
    for (int j = 0; j < 8; ++j) v = fmaf(v, kMul, kAdd);
  }
  return v;
}

// compute(out, in) of with_single_stage / with_staging_unified / with_staging_scope_thread:
// thread reads in[elem] and writes out[elem].
__device__ __forceinline__ void compute(int* global_out, int const* shared_in, int elem, int k) {
  global_out[elem] = __float_as_int(chain(float(shared_in[elem]), k));
}
// compute(out, value) of with_specialized_staging_unified (the guide passes the element).
__device__ __forceinline__ void compute(int* global_out, int shared_in, int k) {
  *global_out = __float_as_int(chain(float(shared_in), k));
}

// ------------------------------------------------------------------ the guide's kernels

__global__ void with_single_stage(int* global_out, int const* global_in, size_t size, size_t batch_sz, int k,
                                  long long* cycles) {
  const long long t0 = clock64();
  auto grid = cg::this_grid();
  auto block = cg::this_thread_block();
  assert(size == batch_sz * grid.size());

  constexpr size_t stages_count = 1;
  extern __shared__ int shared[];  // block.size() * sizeof(int) bytes
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope::thread_scope_block, stages_count> shared_state;
  auto pipeline = cuda::make_pipeline(block, &shared_state);

  auto block_batch = [&](size_t batch) -> int { return block.group_index().x * block.size() + grid.size() * batch; };

  for (size_t batch = 0; batch < batch_sz; batch++) {
    size_t global_idx = block_batch(batch);
    pipeline.producer_acquire();
    cuda::memcpy_async(block, shared, global_in + global_idx, sizeof(int) * block.size(), pipeline);
    pipeline.producer_commit();
    pipeline.consumer_wait();
    compute(global_out + global_idx, shared, threadIdx.x, k);
    pipeline.consumer_release();
  }
  stamp_end(t0, cycles);
}

template <size_t stages_count = 2>
__global__ void with_staging_unified(int* global_out, int const* global_in, size_t size, size_t batch_sz, int k,
                                     long long* cycles) {
  const long long t0 = clock64();
  auto grid = cg::this_grid();
  auto block = cg::this_thread_block();
  assert(size == batch_sz * grid.size());

  extern __shared__ int shared[];  // stages_count * block.size() * sizeof(int) bytes
  size_t shared_offset[stages_count];
  for (int s = 0; s < stages_count; ++s) shared_offset[s] = s * block.size();

  __shared__ cuda::pipeline_shared_state<cuda::thread_scope::thread_scope_block, stages_count> shared_state;
  auto pipeline = cuda::make_pipeline(block, &shared_state);

  auto block_batch = [&](size_t batch) -> int { return block.group_index().x * block.size() + grid.size() * batch; };

  for (size_t compute_batch = 0, fetch_batch = 0; compute_batch < batch_sz; ++compute_batch) {
    for (; fetch_batch < batch_sz && fetch_batch < (compute_batch + stages_count); ++fetch_batch) {
      pipeline.producer_acquire();
      size_t shared_idx = fetch_batch % stages_count;
      size_t batch_idx = fetch_batch;
      size_t block_batch_idx = block_batch(batch_idx);
      cuda::memcpy_async(block, shared + shared_offset[shared_idx], global_in + block_batch_idx,
                         sizeof(int) * block.size(), pipeline);
      pipeline.producer_commit();
    }
    pipeline.consumer_wait();
    int shared_idx = compute_batch % stages_count;
    int batch_idx = compute_batch;
    compute(global_out + block_batch(batch_idx), shared + shared_offset[shared_idx], threadIdx.x, k);
    pipeline.consumer_release();
  }
  stamp_end(t0, cycles);
}

// compute() reads the element the next warp copied, as kernels/with_staging_scope_thread.json
// does, so the block.sync() the guide puts there is what makes the read correct.
template <size_t stages_count>
__global__ void with_staging_scope_thread(int* global_out, int const* global_in, size_t size, size_t batch_sz, int k,
                                          long long* cycles) {
  const long long t0 = clock64();
  auto grid = cg::this_grid();
  auto block = cg::this_thread_block();
  auto thread = cg::this_thread();
  assert(size == batch_sz * grid.size());

  extern __shared__ int shared[];  // stages_count * block.size() * sizeof(int) bytes
  size_t shared_offset[stages_count];
  for (int s = 0; s < stages_count; ++s) shared_offset[s] = s * block.size();

  cuda::pipeline<cuda::thread_scope_thread> pipeline = cuda::make_pipeline();

  auto block_batch = [&](size_t batch) -> int { return block.group_index().x * block.size() + grid.size() * batch; };

  for (size_t compute_batch = 0, fetch_batch = 0; compute_batch < batch_sz; ++compute_batch) {
    for (; fetch_batch < batch_sz && fetch_batch < (compute_batch + stages_count); ++fetch_batch) {
      pipeline.producer_acquire();
      size_t shared_idx = fetch_batch % stages_count;
      size_t batch_idx = fetch_batch;
      size_t thread_batch_idx = block_batch(batch_idx) + threadIdx.x;
      cuda::memcpy_async(thread, shared + shared_offset[shared_idx] + threadIdx.x, global_in + thread_batch_idx,
                         sizeof(int), pipeline);
      pipeline.producer_commit();
    }
    pipeline.consumer_wait();
    block.sync();
    int shared_idx = compute_batch % stages_count;
    int batch_idx = compute_batch;
    compute(global_out + block_batch(batch_idx), shared + shared_offset[shared_idx], (threadIdx.x + 32) % blockDim.x, k);
    pipeline.consumer_release();
  }
  stamp_end(t0, cycles);
}

template <size_t stages_count = 2>
__global__ void with_specialized_staging_unified(int* global_out, int const* global_in, size_t size, size_t batch_sz,
                                                 int k, long long* cycles) {
  const long long t0 = clock64();
  auto grid = cg::this_grid();
  auto block = cg::this_thread_block();

  const cuda::pipeline_role thread_role =
      block.thread_rank() % 2 == 0 ? cuda::pipeline_role::producer : cuda::pipeline_role::consumer;
  auto producer_threads = block.size() / 2;
  (void)producer_threads;
  const int thread_idx = block.thread_rank() / 2;

  auto elements_per_batch = size / batch_sz;
  auto elements_per_batch_per_block = elements_per_batch / grid.group_dim().x;

  extern __shared__ int shared[];  // stages_count * elements_per_batch_per_block * sizeof(int) bytes
  size_t shared_offset[stages_count];
  for (int s = 0; s < stages_count; ++s) shared_offset[s] = s * elements_per_batch_per_block;

  __shared__ cuda::pipeline_shared_state<cuda::thread_scope::thread_scope_block, stages_count> shared_state;
  cuda::pipeline pipeline = cuda::make_pipeline(block, &shared_state, thread_role);

  auto block_batch = [&](size_t batch) -> int {
    return elements_per_batch * batch + elements_per_batch_per_block * blockIdx.x;
  };

  for (size_t compute_batch = 0, fetch_batch = 0; compute_batch < batch_sz; ++compute_batch) {
    for (; fetch_batch < batch_sz && fetch_batch < (compute_batch + stages_count); ++fetch_batch) {
      if (thread_role == cuda::pipeline_role::producer) {
        pipeline.producer_acquire();
        size_t shared_idx = fetch_batch % stages_count;
        size_t batch_idx = fetch_batch;
        size_t global_batch_idx = block_batch(batch_idx) + thread_idx;
        size_t shared_batch_idx = shared_offset[shared_idx] + thread_idx;
        cuda::memcpy_async(shared + shared_batch_idx, global_in + global_batch_idx, sizeof(int), pipeline);
        pipeline.producer_commit();
      }
    }
    if (thread_role == cuda::pipeline_role::consumer) {
      pipeline.consumer_wait();
      size_t shared_idx = compute_batch % stages_count;
      size_t global_batch_idx = block_batch(compute_batch) + thread_idx;
      size_t shared_batch_idx = shared_offset[shared_idx] + thread_idx;
      compute(global_out + global_batch_idx, *(shared + shared_batch_idx), k);
      pipeline.consumer_release();
    }
  }
  stamp_end(t0, cycles);
}

}  // namespace

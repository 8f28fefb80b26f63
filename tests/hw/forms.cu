// The op forms of isa/lower.h (LFORM_LIST), each as real CUDA 13 code writes it, for
// tests/hw/sass_lower.py to read out of the SASS (traces/h100/forms.sass -> isa/lower_forms.c).
//
// Nothing here is run: the file is compiled and disassembled only.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -cubin -o forms.cubin tests/hw/forms.cu
//   cuobjdump -sass forms.cubin > traces/h100/forms.sass
//   python3 tests/hw/sass_lower.py traces/h100/forms.sass > isa/lower_forms.c
//
// One extern "C" kernel per family of forms (its name is findable in the SASS). Inside, every
// op is bracketed by FORM_MARK(n): PTX `pmevent n`, which ptxas emits as `PMTRIG 0x..` (bit n)
// and keeps in program order with the memory and synchronisation instructions around it, so
// the instructions between two marks are the op's code. The marks are the only additions to
// the documented code; sass_lower.py drops them (and says so in traces/h100/FORMS.md).
// The kernels follow the CUDA C++ Programming Guide's examples (with_staging_unified,
// with_staging_scope_thread, the cuda::barrier memcpy_async examples) and tests/hw/pipelines.cu:
// size_t indices where the guide uses them, compute() as tests/hw/pipelines.cu defines it.
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
#include <cuda/barrier>
#include <cuda/pipeline>
#include <cuda/ptx>
#include <cuda_pipeline.h>
#include <utility>

namespace cg = cooperative_groups;

// The guide declares its pipeline_shared_state / barrier as plain __shared__ variables;
// make_pipeline / init initialise them.
#pragma nv_diag_suppress static_var_with_dynamic_init

// pmevent takes 0..15; the mark's number is the PMTRIG's bit.
#ifdef FORMS_NO_MARK  // for comparing the marked code with the unmarked one
#define FORM_MARK(n) ((void)0)
#else
#define FORM_MARK(n) asm volatile("pmevent " #n ";" ::: "memory")
#endif

namespace {
constexpr float kMul = 1.000001f, kAdd = 0.5f;

// tests/hw/pipelines.cu's chain: k a run-time multiple of 8, unrolled by 8.
__device__ __forceinline__ float chain(float v, int k) {
  for (int i = 0; i < k; i += 8) {
#pragma unroll
    for (int j = 0; j < 8; ++j) v = fmaf(v, kMul, kAdd);
  }
  return v;
}

// tests/hw/pipelines.cu's compute(out, in, elem, k), with marks between its three parts:
// 1..2 the load (LDS, I2F), 2..3 the chain, 3..4 the store.
__device__ __forceinline__ void compute(int* global_out, int const* shared_in, int elem, int k) {
  FORM_MARK(1);
  float v = float(shared_in[elem]);
  FORM_MARK(2);
  v = chain(v, k);
  FORM_MARK(3);
  global_out[elem] = __float_as_int(v);
  FORM_MARK(4);
}
}  // namespace

// ------------------------------------------------------------------ block-scope pipeline
// The guide's with_staging_unified<2>: marks 5..6 make_pipeline, 7..8 producer_acquire,
// 8..9 memcpy_async(block, ...), 9..10 producer_commit, 11..12 consumer_wait,
// 13..14 consumer_release, 14..15 quit.  compute() runs between 12 and 13 with its own
// marks 1..4 (the compute forms are read from forms_compute below, not from here).
extern "C" __global__ void forms_pipe_block(int* global_out, int const* global_in, size_t size, size_t batch_sz,
                                            int k) {
  auto grid = cg::this_grid();
  auto block = cg::this_thread_block();
  constexpr size_t stages_count = 2;
  extern __shared__ int shared[];  // stages_count * block.size() * sizeof(int) bytes
  size_t shared_offset[stages_count];
  for (int s = 0; s < stages_count; ++s) shared_offset[s] = s * block.size();

  __shared__ cuda::pipeline_shared_state<cuda::thread_scope::thread_scope_block, stages_count> shared_state;
  FORM_MARK(5);
  auto pipeline = cuda::make_pipeline(block, &shared_state);
  FORM_MARK(6);

  auto block_batch = [&](size_t batch) -> int { return block.group_index().x * block.size() + grid.size() * batch; };

  for (size_t compute_batch = 0, fetch_batch = 0; compute_batch < batch_sz; ++compute_batch) {
    for (; fetch_batch < batch_sz && fetch_batch < (compute_batch + stages_count); ++fetch_batch) {
      size_t shared_idx = fetch_batch % stages_count;
      size_t batch_idx = fetch_batch;
      size_t block_batch_idx = block_batch(batch_idx);
      int* dst = shared + shared_offset[shared_idx];
      int const* src = global_in + block_batch_idx;
      FORM_MARK(7);
      pipeline.producer_acquire();
      FORM_MARK(8);
      cuda::memcpy_async(block, dst, src, sizeof(int) * block.size(), pipeline);
      FORM_MARK(9);
      pipeline.producer_commit();
      FORM_MARK(10);
    }
    int shared_idx = compute_batch % stages_count;
    int batch_idx = compute_batch;
    int* out = global_out + block_batch(batch_idx);
    int* in = shared + shared_offset[shared_idx];
    FORM_MARK(11);
    pipeline.consumer_wait();
    FORM_MARK(12);
    compute(out, in, threadIdx.x, k);
    FORM_MARK(13);
    pipeline.consumer_release();
    FORM_MARK(14);
  }
  FORM_MARK(14);
  pipeline.quit();
  FORM_MARK(15);
  (void)size;
}

// ------------------------------------------------------------------ thread-scope pipeline
// The guide's with_staging_scope_thread<2>: 5..6 make_pipeline(), 7..8 producer_acquire,
// 8..9 memcpy_async(thread, ..., pipeline), 9..10 producer_commit, 11..12 consumer_wait,
// 13..14 consumer_release (block.sync() and compute() between 12 and 13).
extern "C" __global__ void forms_pipe_thread(int* global_out, int const* global_in, size_t size, size_t batch_sz,
                                             int k) {
  auto grid = cg::this_grid();
  auto block = cg::this_thread_block();
  auto thread = cg::this_thread();
  constexpr size_t stages_count = 2;
  extern __shared__ int shared[];
  size_t shared_offset[stages_count];
  for (int s = 0; s < stages_count; ++s) shared_offset[s] = s * block.size();

  FORM_MARK(5);
  cuda::pipeline<cuda::thread_scope_thread> pipeline = cuda::make_pipeline();
  FORM_MARK(6);

  auto block_batch = [&](size_t batch) -> int { return block.group_index().x * block.size() + grid.size() * batch; };

  for (size_t compute_batch = 0, fetch_batch = 0; compute_batch < batch_sz; ++compute_batch) {
    for (; fetch_batch < batch_sz && fetch_batch < (compute_batch + stages_count); ++fetch_batch) {
      size_t shared_idx = fetch_batch % stages_count;
      size_t batch_idx = fetch_batch;
      size_t thread_batch_idx = block_batch(batch_idx) + threadIdx.x;
      int* dst = shared + shared_offset[shared_idx] + threadIdx.x;
      int const* src = global_in + thread_batch_idx;
      FORM_MARK(7);
      pipeline.producer_acquire();
      FORM_MARK(8);
      cuda::memcpy_async(thread, dst, src, sizeof(int), pipeline);
      FORM_MARK(9);
      pipeline.producer_commit();
      FORM_MARK(10);
    }
    FORM_MARK(11);
    pipeline.consumer_wait();
    FORM_MARK(12);
    block.sync();
    int shared_idx = compute_batch % stages_count;
    int batch_idx = compute_batch;
    compute(global_out + block_batch(batch_idx), shared + shared_offset[shared_idx], (threadIdx.x + 32) % blockDim.x, k);
    FORM_MARK(13);
    pipeline.consumer_release();
    FORM_MARK(14);
  }
  (void)size;
}

// ------------------------------------------------------------------ compute()
// compute(out, in, threadIdx.x, k) in a batch loop, as with_staging_unified calls it (the
// shared stage already filled): 1..2 compute.load, 2..3 the chain (compute.trip), 3..4
// compute.store.
extern "C" __global__ void forms_compute(int* global_out, size_t batch_sz, int k) {
  auto grid = cg::this_grid();
  auto block = cg::this_thread_block();
  extern __shared__ int shared[];
  auto block_batch = [&](size_t batch) -> int { return block.group_index().x * block.size() + grid.size() * batch; };
  for (size_t batch = 0; batch < batch_sz; ++batch) {
    compute(global_out + block_batch(batch), shared + (batch % 2) * block.size(), threadIdx.x, k);
  }
}

// ------------------------------------------------------------------ memcpy_async with a barrier
// The guide's cuda::barrier memcpy_async example: 5..6 init(&bar, block.size()) (thread 0),
// 7..8 memcpy_async(block, ..., bar) of block.size() ints (4-byte alignment: LDGSTS rounds,
// then the barrier's arrive), 8..9 arrive_and_wait.
extern "C" __global__ void forms_copy_barrier(int* global_out, int const* global_in, size_t batch_sz) {
  auto grid = cg::this_grid();
  auto block = cg::this_thread_block();
  extern __shared__ int shared[];
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  if (block.thread_rank() == 0) {
    FORM_MARK(5);
    init(&bar, block.size());
    FORM_MARK(6);
  }
  block.sync();
  for (size_t batch = 0; batch < batch_sz; ++batch) {
    size_t global_idx = block.group_index().x * block.size() + grid.size() * batch;
    int const* src = global_in + global_idx;
    FORM_MARK(7);
    cuda::memcpy_async(block, shared, src, sizeof(int) * block.size(), bar);
    FORM_MARK(8);
    bar.arrive_and_wait();
    FORM_MARK(9);
    global_out[global_idx + threadIdx.x] = shared[threadIdx.x];
    block.sync();
  }
}

// The same with cuda::aligned_size_t<16>: the bulk copy (UBLKCP) path. 7..8 memcpy_async.
extern "C" __global__ void forms_copy_bulk(int* global_out, int const* global_in, size_t batch_sz) {
  auto grid = cg::this_grid();
  auto block = cg::this_thread_block();
  extern __shared__ __align__(16) int shared[];
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  if (block.thread_rank() == 0) init(&bar, block.size());
  block.sync();
  for (size_t batch = 0; batch < batch_sz; ++batch) {
    size_t global_idx = block.group_index().x * block.size() + grid.size() * batch;
    int const* src = global_in + global_idx;
    FORM_MARK(7);
    cuda::memcpy_async(block, shared, src, cuda::aligned_size_t<16>(sizeof(int) * block.size()), bar);
    FORM_MARK(8);
    bar.arrive_and_wait();
    FORM_MARK(9);
    global_out[global_idx + threadIdx.x] = shared[threadIdx.x];
    block.sync();
  }
}

// ------------------------------------------------------------------ cuda::barrier
// 5..6 init, 7..8 arrive (token), 8..9 wait(token), 9..10 arrive_and_wait,
// 11..12 arrive_and_drop.
extern "C" __global__ void forms_barrier(int* global_out, int n) {
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  if (threadIdx.x == 0) {
    FORM_MARK(5);
    init(&bar, blockDim.x);
    FORM_MARK(6);
  }
  __syncthreads();
  int acc = 0;
  for (int i = 0; i < n; ++i) {
    FORM_MARK(7);
    auto token = bar.arrive();
    FORM_MARK(8);
    bar.wait(std::move(token));
    FORM_MARK(9);
    bar.arrive_and_wait();
    FORM_MARK(10);
    acc += i;
  }
  FORM_MARK(11);
  bar.arrive_and_drop();
  FORM_MARK(12);
  global_out[threadIdx.x] = acc;
}

// ------------------------------------------------------------------ cuda_pipeline.h primitives
// tests/hw/diverged_commit.cu's loop (two stages, converged): 5..6 __pipeline_memcpy_async(4),
// 7..8 __pipeline_commit, 9..10 __pipeline_wait_prior(1).
extern "C" __global__ void forms_primitives(int* global_out, const int* global_in, int batch_sz, int k) {
  constexpr int kStages = 2;
  extern __shared__ int shared[];
  const int tid = threadIdx.x;
  const int grid_size = gridDim.x * blockDim.x;
  auto block_batch = [&](int batch) { return blockIdx.x * blockDim.x + grid_size * batch; };
  for (int fetch = 0; fetch < batch_sz + kStages - 1; ++fetch) {
    if (fetch < batch_sz) {
      int* dst = &shared[(fetch % kStages) * blockDim.x + tid];
      const int* src = &global_in[block_batch(fetch) + tid];
      FORM_MARK(5);
      __pipeline_memcpy_async(dst, src, 4);
      FORM_MARK(6);
    }
    FORM_MARK(7);
    __pipeline_commit();
    FORM_MARK(8);
    if (fetch >= kStages - 1) {
      const int b = fetch - (kStages - 1);
      FORM_MARK(9);
      __pipeline_wait_prior(kStages - 1);
      FORM_MARK(10);
      compute(global_out + block_batch(b), shared + (b % kStages) * blockDim.x, tid, k);
    }
  }
}

// ------------------------------------------------------------------ block / warp / grid sync
// 5..6 __syncthreads, 7..8 __syncwarp, 9..10 grid.sync (cooperative launch).
extern "C" __global__ void forms_sync(int* global_out, int n) {
  extern __shared__ int shared[];
  int acc = threadIdx.x;
#pragma unroll 1
  for (int i = 0; i < n; ++i) {
    shared[threadIdx.x] = acc;
    FORM_MARK(5);
    __syncthreads();
    FORM_MARK(6);
    acc += shared[(threadIdx.x + 1) % blockDim.x];
    FORM_MARK(7);
    __syncwarp();
    FORM_MARK(8);
    acc += shared[threadIdx.x ^ 1];
  }
  global_out[threadIdx.x] = acc;
}

extern "C" __global__ void forms_grid_sync(int* global_out, int n) {
  auto grid = cg::this_grid();
  int acc = threadIdx.x;
  for (int i = 0; i < n; ++i) {
    global_out[grid.thread_rank()] = acc;
    FORM_MARK(9);
    grid.sync();
    FORM_MARK(10);
    acc += global_out[(grid.thread_rank() + 1) % grid.size()];
  }
  global_out[grid.thread_rank()] = acc;
}

// ------------------------------------------------------------------ warp shuffle reduction
// The warp-sum step v += __shfl_down_sync(full, v, offset), offsets 16..1 unrolled: each step
// between marks 5+s and 6+s (s = 0..4).
extern "C" __global__ void forms_shfl(float* global_out, const float* global_in) {
  float v = global_in[blockIdx.x * blockDim.x + threadIdx.x];
  FORM_MARK(5);
  v += __shfl_down_sync(0xffffffffu, v, 16);
  FORM_MARK(6);
  v += __shfl_down_sync(0xffffffffu, v, 8);
  FORM_MARK(7);
  v += __shfl_down_sync(0xffffffffu, v, 4);
  FORM_MARK(8);
  v += __shfl_down_sync(0xffffffffu, v, 2);
  FORM_MARK(9);
  v += __shfl_down_sync(0xffffffffu, v, 1);
  FORM_MARK(10);
  if (threadIdx.x % 32 == 0) global_out[blockIdx.x * blockDim.x / 32 + threadIdx.x / 32] = v;
}

// ------------------------------------------------------------------ plain loads and stores
// size_t indices read from memory (the op's inputs: a data-dependent index, so the address
// arithmetic is not strength-reduced into the loop): 5..6 shared load, 7..8 shared store,
// 9..10 global load, 11..12 global store. The loop's own test (ISETP, BRA) is the branch form.
// The loop is kept rolled (unroll 1) to get one copy.
extern "C" __global__ void forms_memory(int* global_out, const int* global_in, const size_t* index, int n) {
  extern __shared__ int shared[];
  int acc = 0;
#pragma unroll 1
  for (int i = 0; i < n; ++i) {
    size_t gi = index[2 * i], go = index[2 * i + 1];
    size_t si = (gi + threadIdx.x) % 1024;
    FORM_MARK(9);
    int g = global_in[gi];
    FORM_MARK(10);
    FORM_MARK(7);
    shared[si] = g;
    FORM_MARK(8);
    FORM_MARK(5);
    int s = shared[si ^ 1];
    FORM_MARK(6);
    acc += s;
    FORM_MARK(11);
    global_out[go] = acc;
    FORM_MARK(12);
  }
}

// ------------------------------------------------------------------ control flow
// 7..8 a divergent if (lane-dependent trip count of dependent FMAs) followed by a shuffle,
// so the warp must reconverge: BSSY before the branch, BSYNC at the join.
extern "C" __global__ void forms_control(float* global_out, const float* global_in, int k) {
  const int tid = blockIdx.x * blockDim.x + threadIdx.x;
  float v = global_in[tid];
  FORM_MARK(7);
  if (threadIdx.x % 2) {
    for (int j = 0; j < k; ++j) v = fmaf(v, kMul, kAdd);
  }
  FORM_MARK(8);
  v += __shfl_xor_sync(0xffffffffu, v, 1);
  global_out[tid + 1] = v;
}

// ------------------------------------------------------------------ bulk stores (TMA store)
// kernels/epilogue_bulk_store.json's loop as CUTLASS's sm90 TMA-store epilogue writes it with
// cuda::ptx: 5..6 cp.async.bulk.global.shared::cta.bulk_group, 6..7 cp.async.bulk.commit_group,
// 9..10 cp.async.bulk.wait_group.read (stages - 1 = 1).
extern "C" __global__ void forms_bulk_store(int* global_out, int tiles) {
  extern __shared__ __align__(128) int staging[];
  for (int t = 0; t < tiles; ++t) {
    const int s = t % 2;
    if (t >= 2) {
      if (threadIdx.x == 0) {
        FORM_MARK(9);
        cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<1>());
        FORM_MARK(10);
      }
      __syncthreads();
    }
    staging[s * blockDim.x + threadIdx.x] = t + threadIdx.x;
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
    __syncthreads();
    if (threadIdx.x == 0) {
      FORM_MARK(5);
      cuda::ptx::cp_async_bulk(cuda::ptx::space_global, cuda::ptx::space_shared,
                               global_out + (size_t(t) * gridDim.x + blockIdx.x) * blockDim.x,
                               staging + s * blockDim.x, 4 * blockDim.x);
      FORM_MARK(6);
      cuda::ptx::cp_async_bulk_commit_group();
      FORM_MARK(7);
    }
  }
  if (threadIdx.x == 0) cuda::ptx::cp_async_bulk_wait_group(cuda::ptx::n32_t<0>());
}

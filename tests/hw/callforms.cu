// Cycles per call of each API call form the pipeline examples use, each looped on its own, at
// 1, 2, 4, 8 and 16 warps per scheduler (a block of 4W warps, one block per SM on every SM;
// W = 16 is two blocks of 1024 threads per SM started at the same SM clock, as in iclass.cu).
//
// clock64() is read only before and after each timed loop (a `#pragma unroll 1` loop whose
// trip is one iteration of the form); each warp's time is lane 0's (or lane 1's where lane 1 is
// the thread that runs the form), and the SM's time is its slowest warp's, median over SMs and
// launches (as in iclass.cu, with the same W = 16 caveat). Forms that cannot
// loop on their own in steady state (a block-scope producer_acquire needs the stage released
// first) run as bursts: the stage barriers of a 128-stage pipeline are all free (or all ready)
// after a __syncthreads, then 128 calls are timed, and the other half of the protocol runs
// untimed before the next burst; the cycles are summed over the bursts.
//
// Copy sources are L2-resident: a 2 MiB region (every block its own starting point) swept
// linearly, so the 4-byte copies (cp.async.ca) do not hit L1 either.
//
// The column sass_instructions_per_iteration is filled in by tests/hw/run_calib.sh from the SASS
// (the program writes the kernel's name there).
//
// Usage: callforms OUTDIR  ->  callforms.csv
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
#include <cuda/barrier>
#include <cuda/pipeline>
#include <cuda_pipeline.h>
#include "common.cuh"

namespace cg = cooperative_groups;
#pragma nv_diag_suppress static_var_with_dynamic_init

namespace {

constexpr int kReps = 3;
constexpr int kMaxWarps = 32;
constexpr int kSmemBytes = 32 * 1024;
constexpr uint32_t kSrcWords = 1u << 19;  // 2 MiB of int
constexpr uint32_t kSrcMask = kSrcWords - 1;
constexpr int kBurst = 128;               // stages of the burst pipelines

struct FParams {
  const int* gsrc;
  int* gout;
  long long* cycles;  // [block][warp]
  int* smid;          // [block] the SM it ran on
  int iters;          // iterations (bursts: per burst)
  int rounds;         // bursts
  size_t y;           // run-time 1
  unsigned* rv_count;
  long long* rv_target;
  int blocks_per_sm;
  int* err;
  int* late;           // blocks that reached the common start after it had passed
  long long* start;    // [block] warp 0's clock64() at the start of the timed loop
};

__device__ __forceinline__ int lane_id() { return threadIdx.x & 31; }
__device__ __forceinline__ int warp_id() { return threadIdx.x >> 5; }

__device__ void start_together(const FParams& p) {
  if (p.blocks_per_sm > 1 && threadIdx.x == 0) {
    unsigned smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    volatile long long* tgt = p.rv_target + smid;
    const unsigned old = atomicAdd(&p.rv_count[smid], 1u);
    long long target = 0;
    if (old + 1 == unsigned(p.blocks_per_sm)) {
      // The last block to arrive sets the start, 5000 cycles ahead (a poll from L2 takes
      // well under that); a plain volatile store, no fence (a fence can take longer).
      target = clock64() + 5000;
      *tgt = target;
    } else {
      const long long t = clock64();
      while ((target = *tgt) == 0) {
        if (clock64() - t > 40000000) { atomicAdd(p.err, 1); break; }
      }
    }
    if (target && clock64() > target) atomicAdd(p.late, 1);  // saw the start too late
    if (target) while (clock64() < target) {}
  }
  __syncthreads();
  if (threadIdx.x == 0) p.start[blockIdx.x] = clock64();
}

__device__ __forceinline__ void record(const FParams& p, long long c, int timer_lane = 0) {
  if (lane_id() == timer_lane) p.cycles[blockIdx.x * kMaxWarps + warp_id()] = c;
  if (threadIdx.x == 0) {
    unsigned smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    p.smid[blockIdx.x] = int(smid);
  }
}

// ---------------------------------------------------------------- copies

// __pipeline_memcpy_async of B bytes, N copies per __pipeline_commit + __pipeline_wait_prior(0).
template <int B, int N>
__global__ void __launch_bounds__(1024, 2) k_prim(FParams p) {
  extern __shared__ __align__(16) int sm[];
  const int tid = threadIdx.x;
  uint32_t off = blockIdx.x * 4096u;
  const uint32_t step = blockDim.x * (B / 4);
  start_together(p);
  const long long t0 = clock64();
#pragma unroll 1
  for (int i = 0; i < p.iters; ++i) {
#pragma unroll
    for (int k = 0; k < N; ++k) {
      __pipeline_memcpy_async(&sm[((k & 1) * blockDim.x + tid) * (B / 4)], &p.gsrc[(off + tid * (B / 4)) & kSrcMask], B);
      off += step;
    }
    __pipeline_commit();
    __pipeline_wait_prior(0);
  }
  const long long t1 = clock64();
  record(p, t1 - t0);
  p.gout[blockIdx.x * blockDim.x + tid] = sm[tid];
}

// cuda::memcpy_async(thread, dst, src, 4, pipeline), thread-scope pipeline: the copy alone;
// the commit and the wait come after the timed loop.
__global__ void __launch_bounds__(1024, 2) k_copy_thread(FParams p) {
  extern __shared__ __align__(16) int sm[];
  auto thread = cg::this_thread();
  cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
  const int tid = threadIdx.x;
  uint32_t off = blockIdx.x * 4096u;
  start_together(p);
  const long long t0 = clock64();
#pragma unroll 1
  for (int i = 0; i < p.iters; ++i) {
    cuda::memcpy_async(thread, &sm[tid], &p.gsrc[(off + tid) & kSrcMask], sizeof(int), pipe);
    off += blockDim.x;
  }
  const long long t1 = clock64();
  pipe.producer_commit();
  pipe.consumer_wait();
  record(p, t1 - t0);
  p.gout[blockIdx.x * blockDim.x + tid] = sm[tid];
}

// cuda::memcpy_async(block, dst, src, 4 * block_size, pipeline), block-scope pipeline (the
// examples' group copy): the copy alone, after one producer_acquire; commit/wait after.
__global__ void __launch_bounds__(1024, 2) k_copy_group(FParams p) {
  extern __shared__ __align__(16) int sm[];
  auto block = cg::this_thread_block();
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope::thread_scope_block, 2> state;
  auto pipe = cuda::make_pipeline(block, &state);
  uint32_t off = blockIdx.x * 4096u;
  pipe.producer_acquire();
  start_together(p);
  const long long t0 = clock64();
#pragma unroll 1
  for (int i = 0; i < p.iters; ++i) {
    cuda::memcpy_async(block, sm, p.gsrc + (off & kSrcMask), sizeof(int) * block.size(), pipe);
    off += blockDim.x;
  }
  const long long t1 = clock64();
  pipe.producer_commit();
  pipe.consumer_wait();
  pipe.consumer_release();
  record(p, t1 - t0);
  p.gout[blockIdx.x * blockDim.x + threadIdx.x] = sm[threadIdx.x];
}

// ---------------------------------------------------------------- block-scope pipeline

// Bursts of kBurst producer_acquire + producer_commit (kTimeProducer) or consumer_wait +
// consumer_release, on a unified (kRole = 0) or partitioned (kRole = 1: even threads produce,
// odd threads consume, as the guide's with_specialized_staging_unified) block pipeline.
template <bool kTimeProducer, int kRole>
__global__ void __launch_bounds__(1024, 2) k_block_burst(FParams p) {
  auto block = cg::this_thread_block();
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope::thread_scope_block, kBurst> state;
  const bool producer = kRole == 0 || block.thread_rank() % 2 == 0;
  const bool consumer = kRole == 0 || block.thread_rank() % 2 == 1;
  auto pipe = kRole == 0 ? cuda::make_pipeline(block, &state)
                         : cuda::make_pipeline(block, &state, producer ? cuda::pipeline_role::producer : cuda::pipeline_role::consumer);
  start_together(p);
  long long acc = 0;
#pragma unroll 1
  for (int r = 0; r < p.rounds; ++r) {
    __syncthreads();
    if (producer) {
      const long long t0 = clock64();
#pragma unroll 1
      for (int i = 0; i < p.iters; ++i) {
        pipe.producer_acquire();
        pipe.producer_commit();
      }
      const long long t1 = clock64();
      if (kTimeProducer) acc += t1 - t0;
    }
    __syncthreads();
    if (consumer) {
      const long long t0 = clock64();
#pragma unroll 1
      for (int i = 0; i < p.iters; ++i) {
        pipe.consumer_wait();
        pipe.consumer_release();
      }
      const long long t1 = clock64();
      if (!kTimeProducer) acc += t1 - t0;
    }
  }
  record(p, acc, kRole == 1 && !kTimeProducer ? 1 : 0);
}

// producer_acquire + producer_commit + consumer_wait + consumer_release on an S-stage block
// pipeline, nothing copied: the empty stage round trip.
template <int S>
__global__ void __launch_bounds__(1024, 2) k_block_roundtrip(FParams p) {
  auto block = cg::this_thread_block();
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope::thread_scope_block, S> state;
  auto pipe = cuda::make_pipeline(block, &state);
  start_together(p);
  const long long t0 = clock64();
#pragma unroll 1
  for (int i = 0; i < p.iters; ++i) {
    pipe.producer_acquire();
    pipe.producer_commit();
    pipe.consumer_wait();
    pipe.consumer_release();
  }
  const long long t1 = clock64();
  record(p, t1 - t0);
}

// The guide's with_staging_unified loop with k = 0 and no compute: per batch producer_acquire,
// the group copy of 4 * block_size bytes, producer_commit (fetching S - 1 batches ahead),
// consumer_wait, consumer_release. size_t indices as in the guide.
template <int S>
__global__ void __launch_bounds__(1024, 2) k_unified(FParams p) {
  extern __shared__ __align__(16) int sm[];
  auto block = cg::this_thread_block();
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope::thread_scope_block, S> state;
  auto pipe = cuda::make_pipeline(block, &state);
  const size_t batch_sz = size_t(p.iters);
  const size_t base = blockIdx.x * 4096u;
  start_together(p);
  const long long t0 = clock64();
#pragma unroll 1
  for (size_t compute_batch = 0, fetch_batch = 0; compute_batch < batch_sz; ++compute_batch) {
    for (; fetch_batch < batch_sz && fetch_batch < (compute_batch + S); ++fetch_batch) {
      pipe.producer_acquire();
      cuda::memcpy_async(block, sm + (fetch_batch % S) * block.size(),
                         p.gsrc + ((base + fetch_batch * block.size()) & kSrcMask), sizeof(int) * block.size(), pipe);
      pipe.producer_commit();
    }
    pipe.consumer_wait();
    pipe.consumer_release();
  }
  const long long t1 = clock64();
  record(p, t1 - t0);
  p.gout[blockIdx.x * blockDim.x + threadIdx.x] = sm[threadIdx.x];
}

// The guide's with_specialized_staging_unified loop, k = 0, two stages: even threads acquire,
// copy their 4 bytes (cuda::memcpy_async(dst, src, 4, pipeline)) and commit; odd threads wait
// and release. Timed by lane 0 (a producer).
__global__ void __launch_bounds__(1024, 2) k_partitioned(FParams p) {
  extern __shared__ __align__(16) int sm[];
  constexpr size_t stages_count = 2;
  auto block = cg::this_thread_block();
  const cuda::pipeline_role thread_role =
      block.thread_rank() % 2 == 0 ? cuda::pipeline_role::producer : cuda::pipeline_role::consumer;
  const int thread_idx = block.thread_rank() / 2;
  const size_t elements_per_batch_per_block = block.size() / 2;
  size_t shared_offset[stages_count];
  for (int s = 0; s < int(stages_count); ++s) shared_offset[s] = s * elements_per_batch_per_block;
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope::thread_scope_block, stages_count> shared_state;
  cuda::pipeline pipeline = cuda::make_pipeline(block, &shared_state, thread_role);
  const size_t batch_sz = size_t(p.iters);
  const size_t base = blockIdx.x * 4096u;
  start_together(p);
  const long long t0 = clock64();
#pragma unroll 1
  for (size_t compute_batch = 0, fetch_batch = 0; compute_batch < batch_sz; ++compute_batch) {
    for (; fetch_batch < batch_sz && fetch_batch < (compute_batch + stages_count); ++fetch_batch) {
      if (thread_role == cuda::pipeline_role::producer) {
        pipeline.producer_acquire();
        const size_t shared_idx = fetch_batch % stages_count;
        const size_t global_batch_idx = (base + fetch_batch * elements_per_batch_per_block + thread_idx) & kSrcMask;
        const size_t shared_batch_idx = shared_offset[shared_idx] + thread_idx;
        cuda::memcpy_async(sm + shared_batch_idx, p.gsrc + global_batch_idx, sizeof(int), pipeline);
        pipeline.producer_commit();
      }
    }
    if (thread_role == cuda::pipeline_role::consumer) {
      pipeline.consumer_wait();
      pipeline.consumer_release();
    }
  }
  const long long t1 = clock64();
  record(p, t1 - t0);
  p.gout[blockIdx.x * blockDim.x + threadIdx.x] = sm[threadIdx.x];
}

// ---------------------------------------------------------------- thread-scope pipeline

// kind 0: producer_acquire + producer_commit alone (empty groups: LDGDEPBAR).
// kind 1: producer_acquire + producer_commit + consumer_wait + consumer_release (empty).
// kind 2: bursts of consumer_wait + consumer_release after kBurst untimed empty commits.
// kind 3: the guide's with_staging_scope_thread loop, k = 0, two stages, no block.sync:
//         acquire, cuda::memcpy_async(thread, dst, src, 4, pipeline), commit, wait, release.
template <int kKind>
__global__ void __launch_bounds__(1024, 2) k_thread(FParams p) {
  extern __shared__ __align__(16) int sm[];
  auto block = cg::this_thread_block();
  auto thread = cg::this_thread();
  cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
  start_together(p);
  long long acc = 0;
  if constexpr (kKind == 0 || kKind == 1) {
    const long long t0 = clock64();
#pragma unroll 1
    for (int i = 0; i < p.iters; ++i) {
      pipe.producer_acquire();
      pipe.producer_commit();
      if constexpr (kKind == 1) {
        pipe.consumer_wait();
        pipe.consumer_release();
      }
    }
    acc = clock64() - t0;
  } else if constexpr (kKind == 2) {
#pragma unroll 1
    for (int r = 0; r < p.rounds; ++r) {
#pragma unroll 1
      for (int i = 0; i < p.iters; ++i) {
        pipe.producer_acquire();
        pipe.producer_commit();
      }
      const long long t0 = clock64();
#pragma unroll 1
      for (int i = 0; i < p.iters; ++i) {
        pipe.consumer_wait();
        pipe.consumer_release();
      }
      acc += clock64() - t0;
    }
  } else {
    constexpr size_t stages_count = 2;
    const size_t batch_sz = size_t(p.iters);
    const size_t base = blockIdx.x * 4096u;
    const long long t0 = clock64();
#pragma unroll 1
    for (size_t compute_batch = 0, fetch_batch = 0; compute_batch < batch_sz; ++compute_batch) {
      for (; fetch_batch < batch_sz && fetch_batch < (compute_batch + stages_count); ++fetch_batch) {
        pipe.producer_acquire();
        cuda::memcpy_async(thread, sm + (fetch_batch % stages_count) * block.size() + threadIdx.x,
                           p.gsrc + ((base + fetch_batch * block.size() + threadIdx.x) & kSrcMask), sizeof(int), pipe);
        pipe.producer_commit();
      }
      pipe.consumer_wait();
      pipe.consumer_release();
    }
    acc = clock64() - t0;
  }
  record(p, acc);
  p.gout[blockIdx.x * blockDim.x + threadIdx.x] = sm[threadIdx.x];
}

// ---------------------------------------------------------------- barriers, arithmetic

// kind 0: cuda::barrier<block>::arrive_and_wait(); kind 1: bar.wait(bar.arrive());
// kind 2: __syncthreads(). Every thread of the block takes part.
template <int kKind>
__global__ void __launch_bounds__(1024, 2) k_barrier(FParams p) {
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  if (threadIdx.x == 0) init(&bar, blockDim.x);
  start_together(p);
  const long long t0 = clock64();
#pragma unroll 1
  for (int i = 0; i < p.iters; ++i) {
    if constexpr (kKind == 0) bar.arrive_and_wait();
    else if constexpr (kKind == 1) bar.wait(bar.arrive());
    else __syncthreads();
  }
  const long long t1 = clock64();
  record(p, t1 - t0);
}

// A 64-bit `x = (x + y) % M` statement (y = 1 at run time): one dependent chain per thread.
template <int M>
__global__ void __launch_bounds__(1024, 2) k_mod(FParams p) {
  size_t x = threadIdx.x;
  const size_t y = p.y;
  start_together(p);
  const long long t0 = clock64();
#pragma unroll 1
  for (int i = 0; i < p.iters; ++i) x = (x + y) % M;
  const long long t1 = clock64();
  record(p, t1 - t0);
  p.gout[blockIdx.x * blockDim.x + threadIdx.x] = int(x);
}

using KernelFn = void (*)(FParams);

struct Form {
  const char* name;
  const char* kernel;  // for run_calib.sh: finds the kernel's SASS by this name
  KernelFn fn;
  int iters, rounds;   // iterations timed = iters * rounds
};

const Form kForms[] = {
    {"pipeline_memcpy_async(4)+pipeline_commit+wait_prior(0)", "k_primILi4ELi1E", k_prim<4, 1>, 1024, 1},
    {"pipeline_memcpy_async(16)+pipeline_commit+wait_prior(0)", "k_primILi16ELi1E", k_prim<16, 1>, 1024, 1},
    {"8x pipeline_memcpy_async(4)+pipeline_commit+wait_prior(0)", "k_primILi4ELi8E", k_prim<4, 8>, 256, 1},
    {"8x pipeline_memcpy_async(16)+pipeline_commit+wait_prior(0)", "k_primILi16ELi8E", k_prim<16, 8>, 256, 1},
    {"memcpy_async.thread(4)", "k_copy_thread", k_copy_thread, 1024, 1},
    {"memcpy_async.group(4*block_size)", "k_copy_group", k_copy_group, 1024, 1},
    {"producer_acquire.block+producer_commit.block", "k_block_burstILb1ELi0E", k_block_burst<true, 0>, kBurst, 8},
    {"consumer_wait.block+consumer_release.block", "k_block_burstILb0ELi0E", k_block_burst<false, 0>, kBurst, 8},
    {"producer_acquire.block+producer_commit.block+consumer_wait.block+consumer_release.block(2 stages)",
     "k_block_roundtripILi2E", k_block_roundtrip<2>, 1024, 1},
    {"unified(2):producer_acquire.block+memcpy_async.group+producer_commit.block+consumer_wait.block+consumer_release.block",
     "k_unifiedILi2E", k_unified<2>, 512, 1},
    {"unified(4):producer_acquire.block+memcpy_async.group+producer_commit.block+consumer_wait.block+consumer_release.block",
     "k_unifiedILi4E", k_unified<4>, 512, 1},
    {"partitioned:producer_acquire.block+producer_commit.block(producer half)", "k_block_burstILb1ELi1E",
     k_block_burst<true, 1>, kBurst, 8},
    {"partitioned:consumer_wait.block+consumer_release.block(consumer half)", "k_block_burstILb0ELi1E",
     k_block_burst<false, 1>, kBurst, 8},
    {"partitioned(2):producer_acquire.block+memcpy_async.thread+producer_commit.block|consumer_wait.block+consumer_release.block",
     "k_partitioned", k_partitioned, 512, 1},
    {"producer_acquire.thread+producer_commit.thread", "k_threadILi0E", k_thread<0>, 1024, 1},
    {"producer_acquire.thread+producer_commit.thread+consumer_wait.thread+consumer_release.thread", "k_threadILi1E",
     k_thread<1>, 1024, 1},
    {"consumer_wait.thread+consumer_release.thread", "k_threadILi2E", k_thread<2>, kBurst, 8},
    {"scope_thread(2):producer_acquire.thread+memcpy_async.thread+producer_commit.thread+consumer_wait.thread+consumer_release.thread",
     "k_threadILi3E", k_thread<3>, 512, 1},
    {"barrier_arrive_and_wait", "k_barrierILi0E", k_barrier<0>, 1024, 1},
    {"barrier_arrive+barrier_wait", "k_barrierILi1E", k_barrier<1>, 1024, 1},
    {"syncthreads", "k_barrierILi2E", k_barrier<2>, 1024, 1},
    {"size_t%3", "k_modILi3E", k_mod<3>, 4096, 1},
    {"size_t%4", "k_modILi4E", k_mod<4>, 4096, 1},
};

// Keeps the GPU busy for a while before the measurements, so that its clock has ramped up.
__global__ void spin(long long cycles, int* sink) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {}
  if (threadIdx.x == 1024) sink[0] = 0;
}

__global__ void warm_l2(const int* g, int* sink, uint32_t n) {
  int s = 0;
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) s += g[i];
  if (s == 0x7fffffff) sink[0] = s;
}

}  // namespace

// Usage: callforms OUTDIR [--profile]. With --profile (for ncu's per-instruction counts, see
// run_calib.sh), every form's kernel runs once, one block of 128 threads, and prints
// PROFILE,<kernel>,<iterations>,<warps>.
int main(int argc, char** argv) {
  const bool profile = argc > 2 && std::string(argv[2]) == "--profile";
  const int sms = sm_count();
  const int max_blocks = 2 * sms;
  FParams p{};
  int* gsrc;
  CK(cudaMalloc(&gsrc, kSrcWords * sizeof(int)));
  CK(cudaMemset(gsrc, 0, kSrcWords * sizeof(int)));
  p.gsrc = gsrc;
  CK(cudaMalloc(&p.gout, size_t(max_blocks) * 1024 * sizeof(int)));
  CK(cudaMalloc(&p.cycles, size_t(max_blocks) * kMaxWarps * sizeof(long long)));
  CK(cudaMalloc(&p.smid, size_t(max_blocks) * sizeof(int)));
  CK(cudaMalloc(&p.rv_count, 1024 * sizeof(unsigned)));
  CK(cudaMalloc(&p.rv_target, 1024 * sizeof(long long)));
  CK(cudaMalloc(&p.err, sizeof(int)));
  CK(cudaMemset(p.err, 0, sizeof(int)));
  CK(cudaMalloc(&p.late, sizeof(int)));
  CK(cudaMemset(p.late, 0, sizeof(int)));
  CK(cudaMalloc(&p.start, size_t(max_blocks) * sizeof(long long)));
  p.y = 1;

  if (profile) {
    for (const Form& fm : kForms) {
      CK(cudaFuncSetAttribute(fm.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
      FParams q = p;
      q.blocks_per_sm = 1;
      q.iters = fm.iters;
      q.rounds = fm.rounds;
      fm.fn<<<1, 128, kSmemBytes>>>(q);
      CK_LAUNCH();
      printf("PROFILE,%s,%lld,%d\n", fm.kernel, (long long)fm.iters * fm.rounds, 4);
    }
    return 0;
  }
  spin<<<sms, 128>>>(1000000000LL, p.gout);  // ~0.5 s at 1980 MHz
  CK_LAUNCH();

  FILE* f = open_csv(argc, argv, "callforms.csv",
                     "form,warps_per_scheduler,iterations,cycles_per_iteration_median,sass_instructions_per_iteration");
  printf("# log columns: form,W,sm_cycles_median(all warps done),warp0_median,fastest_warp_median,sm_min,sm_max,sms,start_skew_median,start_skew_max (two blocks per SM)\n");
  for (const Form& fm : kForms) {
    CK(cudaFuncSetAttribute(fm.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
    for (int W : {1, 2, 4, 8, 16}) {
      const int bs = W <= 8 ? 128 * W : 1024;
      const int bps = W <= 8 ? 1 : 2;
      const int nw = bs / 32;
      int occ = 0;
      CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, fm.fn, bs, kSmemBytes));
      if (occ < bps) { fprintf(stderr, "%s W=%d: occupancy %d < %d, skipped\n", fm.name, W, occ, bps); continue; }
      const int grid = sms * bps;
      FParams q = p;
      q.blocks_per_sm = bps;
      q.iters = fm.iters;
      q.rounds = fm.rounds;
      std::vector<long long> sm_time, w0, wmin, cyc(size_t(grid) * kMaxWarps);
      std::vector<int> smid(grid);
      std::vector<long long> start(grid), skew;
      for (int r = 0; r <= kReps; ++r) {
        warm_l2<<<sms, 1024>>>(gsrc, p.gout, kSrcWords);
        CK(cudaMemset(q.rv_count, 0, 1024 * sizeof(unsigned)));
        CK(cudaMemset(q.rv_target, 0, 1024 * sizeof(long long)));
        fm.fn<<<grid, bs, kSmemBytes>>>(q);
        CK_LAUNCH();
        if (r == 0) continue;
        CK(cudaMemcpy(cyc.data(), q.cycles, cyc.size() * sizeof(long long), cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(smid.data(), q.smid, grid * sizeof(int), cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(start.data(), q.start, grid * sizeof(long long), cudaMemcpyDeviceToHost));
        // Two blocks per SM: how far apart (SM clock) did they start?
        std::vector<long long> first(1024, -1);
        for (int blk = 0; blk < grid; ++blk) {
          long long& s0 = first[smid[blk] & 1023];
          if (s0 < 0) s0 = start[blk];
          else skew.push_back(std::llabs(start[blk] - s0));
        }
        std::vector<long long> per_sm(1024, -1);
        for (int blk = 0; blk < grid; ++blk) {
          long long mx = 0, mn = -1;
          for (int w = 0; w < nw; ++w) {
            const long long c = cyc[size_t(blk) * kMaxWarps + w];
            mx = std::max(mx, c);
            mn = mn < 0 ? c : std::min(mn, c);
          }
          long long& s = per_sm[smid[blk] & 1023];
          s = std::max(s, mx);
          w0.push_back(cyc[size_t(blk) * kMaxWarps]);
          wmin.push_back(mn);
        }
        for (long long s : per_sm)
          if (s >= 0) sm_time.push_back(s);
      }
      const long long n = (long long)fm.iters * fm.rounds;
      const double med = median(sm_time);
      ROW(f, "%s,%d,%lld,%.2f,K:%s\n", fm.name, W, n, med / double(n), fm.kernel);
      printf("# %s,%d,%.1f,%.1f,%.1f,%lld,%lld,%zu,%.0f,%lld\n", fm.name, W, med, median(w0), median(wmin),
             *std::min_element(sm_time.begin(), sm_time.end()), *std::max_element(sm_time.begin(), sm_time.end()),
             sm_time.size(), median(skew), skew.empty() ? 0LL : *std::max_element(skew.begin(), skew.end()));
    }
  }
  fclose(f);
  int err = 0;
  CK(cudaMemcpy(&err, p.err, sizeof(int), cudaMemcpyDeviceToHost));
  int late = 0;
  CK(cudaMemcpy(&late, p.late, sizeof(int), cudaMemcpyDeviceToHost));
  printf("# rendezvous timeouts: %d, blocks that saw the common start late: %d\n", err, late);
  return err ? 2 : 0;
}

// Where a pipeline batch's cycles go on hardware: the documented examples' ~600-cycle floor
// per batch (traces/h100/pipelines.csv, k = 0, two to four stages, input in L2) taken apart.
//
// Every variant runs the with_staging_unified loop shape over batch_sz batches and stamps
// clock64() between its calls; each thread sums the intervals in registers and lane 0 of each
// warp writes the sums once at the end, so the stamps add no memory traffic to the loop. A
// stamp after an asynchronous instruction (LDGSTS, STG) times its issue, not its completion.
//
//   unified         the guide's with_staging_unified (block-scope cuda::pipeline, block-wide
//                   memcpy_async of 4 B per thread)
//   unified_nostore the same, compute's result kept in a register (one store after the loop)
//   scope_thread    the guide's with_staging_scope_thread (thread-scope cuda::pipeline,
//                   memcpy_async of 4 B per thread, block.sync())
//   raw             __pipeline_memcpy_async 4 B, __pipeline_commit, __pipeline_wait_prior(S-1),
//                   __syncthreads, LDS, chain, STG, __syncthreads: no pipeline object, int indices
//   raw_nostore     raw without the per-batch store
//   ldg             no shared memory: LDG, chain, STG (the synchronous baseline)
//   empty           back-to-back clock64() reads: what one stamp itself costs
//
// Grid = one block per SM, input in L2 (warm-up launch first) and in DRAM (L2 flushed).
// Outputs are not checked (the nostore variants compute nothing meaningful); pipelines.cu
// checks the guide's kernels bit for bit.
//
// Usage: anatomy OUTDIR  ->  anatomy.csv
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
#include <cuda/pipeline>
#include <cuda_pipeline.h>
#include "common.cuh"

namespace cg = cooperative_groups;
#pragma nv_diag_suppress static_var_with_dynamic_init

namespace {

constexpr int kReps = 5;
constexpr float kMul = 1.000001f, kAdd = 0.5f;

enum Variant { kUnified, kUnifiedNoStore, kScopeThread, kRaw, kRawNoStore, kLdg, kEmpty, kVariants };
const char* const kVariantName[] = {"unified", "unified_nostore", "scope_thread", "raw", "raw_nostore", "ldg", "empty"};
// What each variant's intervals i0..i6 time, in program order (a '-' interval is unused).
const char* const kIntervals[] = {
    "acquire|memcpy_async|commit|wait|compute+store|release|-",
    "acquire|memcpy_async|commit|wait|compute|release|-",
    "acquire|memcpy_async|commit|wait|block.sync|compute+store|release",
    "cp.async|commit|wait_prior|syncthreads|compute+store|syncthreads|-",
    "cp.async|commit|wait_prior|syncthreads|compute|syncthreads|-",
    "ldg issue|ldg wait+compute+store|-|-|-|-|-",
    "clock64|clock64|clock64|clock64|clock64|clock64|clock64",
};
constexpr int kSlots = 7;

__device__ __forceinline__ float chain(float v, int k) {
  for (int i = 0; i < k; i += 8) {
#pragma unroll
    for (int j = 0; j < 8; ++j) v = fmaf(v, kMul, kAdd);
  }
  return v;
}

// Per-thread sums of the intervals, kept in registers (the indices are compile-time constants).
struct Stamps {
  long long sum[kSlots] = {};
  long long last = 0;
  __device__ __forceinline__ void start() { last = clock64(); }
  __device__ __forceinline__ void lap(int i) {
    const long long t = clock64();
    sum[i] += t - last;
    last = t;
  }
  __device__ void write(long long* out) const {
    if (threadIdx.x % 32 == 0) {
      long long* p = out + kSlots * (blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32);
      for (int i = 0; i < kSlots; ++i) p[i] = sum[i];
    }
  }
};

template <int kVariant, int S>
__global__ void block_pipeline_loop(int* global_out, int const* global_in, int batch_sz, int k, long long* cycles,
                                    long long* phases) {
  const long long t0 = clock64();
  auto grid = cg::this_grid();
  auto block = cg::this_thread_block();
  extern __shared__ int shared[];
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope::thread_scope_block, S> shared_state;
  auto pipeline = cuda::make_pipeline(block, &shared_state);
  auto block_batch = [&](size_t batch) -> int { return block.group_index().x * block.size() + grid.size() * batch; };
  Stamps st;
  float acc = 0.f;
  for (size_t compute_batch = 0, fetch_batch = 0; compute_batch < size_t(batch_sz); ++compute_batch) {
    st.start();
    for (; fetch_batch < size_t(batch_sz) && fetch_batch < compute_batch + S; ++fetch_batch) {
      pipeline.producer_acquire();
      st.lap(0);
      cuda::memcpy_async(block, shared + (fetch_batch % S) * block.size(), global_in + block_batch(fetch_batch),
                         sizeof(int) * block.size(), pipeline);
      st.lap(1);
      pipeline.producer_commit();
      st.lap(2);
    }
    st.start();
    pipeline.consumer_wait();
    st.lap(3);
    const float v = chain(float(shared[(compute_batch % S) * block.size() + threadIdx.x]), k);
    if (kVariant == kUnifiedNoStore)
      acc += v;
    else
      global_out[block_batch(compute_batch) + threadIdx.x] = __float_as_int(v);
    st.lap(4);
    pipeline.consumer_release();
    st.lap(5);
  }
  if (kVariant == kUnifiedNoStore) global_out[block_batch(0) + threadIdx.x] = __float_as_int(acc);
  __syncthreads();
  st.write(phases);
  if (threadIdx.x == 0) cycles[blockIdx.x] = clock64() - t0;
}

// The guide's with_staging_scope_thread: a thread-scope cuda::pipeline and block.sync().
template <int kVariant, int S>
__global__ void thread_pipeline_loop(int* global_out, int const* global_in, int batch_sz, int k, long long* cycles,
                                     long long* phases) {
  const long long t0 = clock64();
  auto grid = cg::this_grid();
  auto block = cg::this_thread_block();
  auto thread = cg::this_thread();
  extern __shared__ int shared[];
  cuda::pipeline<cuda::thread_scope_thread> pipeline = cuda::make_pipeline();
  auto block_batch = [&](size_t batch) -> int { return block.group_index().x * block.size() + grid.size() * batch; };
  Stamps st;
  for (size_t compute_batch = 0, fetch_batch = 0; compute_batch < size_t(batch_sz); ++compute_batch) {
    st.start();
    for (; fetch_batch < size_t(batch_sz) && fetch_batch < compute_batch + S; ++fetch_batch) {
      pipeline.producer_acquire();
      st.lap(0);
      cuda::memcpy_async(thread, shared + (fetch_batch % S) * block.size() + threadIdx.x,
                         global_in + block_batch(fetch_batch) + threadIdx.x, sizeof(int), pipeline);
      st.lap(1);
      pipeline.producer_commit();
      st.lap(2);
    }
    st.start();
    pipeline.consumer_wait();
    st.lap(3);
    block.sync();
    st.lap(4);
    const int other = (threadIdx.x + 32) % blockDim.x;
    global_out[block_batch(compute_batch) + threadIdx.x] =
        __float_as_int(chain(float(shared[(compute_batch % S) * block.size() + other]), k));
    st.lap(5);
    pipeline.consumer_release();
    st.lap(6);
  }
  __syncthreads();
  st.write(phases);
  if (threadIdx.x == 0) cycles[blockIdx.x] = clock64() - t0;
}

template <int kVariant, int S>
__global__ void raw_loop(int* global_out, int const* global_in, int batch_sz, int k, long long* cycles,
                         long long* phases) {
  const long long t0 = clock64();
  extern __shared__ int shared[];
  const int tid = threadIdx.x, bs = blockDim.x, grid_size = gridDim.x * blockDim.x;
  const int base = blockIdx.x * bs + tid;
  Stamps st;
  float acc = 0.f;
  int fetch = 0;
  for (int batch = 0; batch < batch_sz; ++batch) {
    if constexpr (kVariant == kEmpty) {
      st.start();
      for (int i = 0; i < kSlots; ++i) st.lap(i);
    } else if constexpr (kVariant == kLdg) {
      st.start();
      const int x = global_in[base + grid_size * batch];
      st.lap(0);
      global_out[base + grid_size * batch] = __float_as_int(chain(float(x), k));
      st.lap(1);
    } else {
      st.start();
      for (; fetch < batch_sz && fetch < batch + S; ++fetch) {
        __pipeline_memcpy_async(&shared[(fetch % S) * bs + tid], &global_in[base + grid_size * fetch], 4);
        st.lap(0);
        __pipeline_commit();
        st.lap(1);
      }
      st.start();
      // Groups committed after this batch's: min(S, batch_sz - batch) - 1 (the tail commits fewer).
      if (batch + S <= batch_sz)
        __pipeline_wait_prior(S - 1);
      else
        __pipeline_wait_prior(0);
      st.lap(2);
      __syncthreads();
      st.lap(3);
      const float v = chain(float(shared[(batch % S) * bs + (tid + 32) % bs]), k);
      if (kVariant == kRawNoStore)
        acc += v;
      else
        global_out[base + grid_size * batch] = __float_as_int(v);
      st.lap(4);
      __syncthreads();  // the slot is refilled next iteration
      st.lap(5);
    }
  }
  if (kVariant == kRawNoStore) global_out[base] = __float_as_int(acc);
  __syncthreads();
  st.write(phases);
  if (threadIdx.x == 0) cycles[blockIdx.x] = clock64() - t0;
}

using Kernel = void (*)(int*, int const*, int, int, long long*, long long*);

template <int S>
Kernel kernel_for(int v) {
  switch (v) {
    case kUnified: return block_pipeline_loop<kUnified, S>;
    case kUnifiedNoStore: return block_pipeline_loop<kUnifiedNoStore, S>;
    case kScopeThread: return thread_pipeline_loop<kScopeThread, S>;
    case kRaw: return raw_loop<kRaw, S>;
    case kRawNoStore: return raw_loop<kRawNoStore, S>;
    case kLdg: return raw_loop<kLdg, S>;
    default: return raw_loop<kEmpty, S>;
  }
}

Kernel kernel_for(int v, int stages) {
  switch (stages) {
    case 1: return kernel_for<1>(v);
    case 2: return kernel_for<2>(v);
    case 3: return kernel_for<3>(v);
    default: return kernel_for<4>(v);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int sms = sm_count();
  const int batch_sz = 64;
  L2Flusher flusher;
  FILE* f = open_csv(argc, argv, "anatomy.csv",
                     "variant,stages,block_size,k,grid_blocks,source,cycles_per_batch,i0,i1,i2,i3,i4,i5,i6,intervals");
  const int max_bs = 256;
  const size_t size = size_t(batch_sz) * sms * max_bs;
  int *din, *dout;
  long long *dcyc, *dph;
  CK(cudaMalloc(&din, size * 4));
  CK(cudaMalloc(&dout, size * 4));
  CK(cudaMemset(din, 0x11, size * 4));
  CK(cudaMalloc(&dcyc, sms * sizeof(long long)));
  CK(cudaMalloc(&dph, size_t(sms) * (max_bs / 32) * kSlots * sizeof(long long)));
  for (int v = 0; v < kVariants; ++v)
    for (int stages : {1, 2, 3, 4})
      for (int bs : {128, 256})
        for (int k : {0, 64, 128, 512})
          for (int l2 = 1; l2 >= 0; --l2) {
            // k = 128 and 512 give the chain's slope in the examples' loop shape (L2, 4 stages).
            // 3 stages (unified, block 128, k = 0): what `% 3` costs where 2 and 4 are masks.
            if (stages == 3 && !(v == kUnified && bs == 128 && k == 0)) continue;
            if (k > 64 && !((v == kUnified || v == kScopeThread) && stages == 4 && bs == 128 && l2)) continue;
            const bool one_stage_kind = v == kLdg || v == kEmpty;
            if (one_stage_kind != (stages == 1) && !(v == kUnified && stages == 1)) continue;
            if (bs == 256 && k != 0) continue;
            if ((v == kUnifiedNoStore || v == kRawNoStore || v == kEmpty) && (k != 0 || bs != 128)) continue;
            if (v == kEmpty && l2 == 0) continue;
            const Kernel fn = kernel_for(v, stages);
            const size_t smem = size_t(stages) * bs * sizeof(int);
            const int nw = bs / 32, grid = sms;
            std::vector<double> per_batch, ph[kSlots];
            for (int r = 0; r < kReps; ++r) {
              if (l2) {
                fn<<<grid, bs, smem>>>(dout, din, batch_sz, k, dcyc, dph);
                CK_LAUNCH();
              } else {
                flusher.flush();
              }
              fn<<<grid, bs, smem>>>(dout, din, batch_sz, k, dcyc, dph);
              CK_LAUNCH();
              std::vector<long long> c(grid), p(size_t(grid) * nw * kSlots);
              CK(cudaMemcpy(c.data(), dcyc, grid * sizeof(long long), cudaMemcpyDeviceToHost));
              CK(cudaMemcpy(p.data(), dph, p.size() * sizeof(long long), cudaMemcpyDeviceToHost));
              for (int b = 0; b < grid; ++b) {
                per_batch.push_back(double(c[b]) / batch_sz);
                for (int w = 0; w < nw; ++w)
                  for (int i = 0; i < kSlots; ++i) ph[i].push_back(double(p[(size_t(b) * nw + w) * kSlots + i]) / batch_sz);
              }
            }
            ROW(f, "%s,%d,%d,%d,%d,%s,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%s\n", kVariantName[v], stages, bs, k, grid,
                l2 ? "L2" : "DRAM", median(per_batch), median(ph[0]), median(ph[1]), median(ph[2]), median(ph[3]),
                median(ph[4]), median(ph[5]), median(ph[6]), kIntervals[v]);
          }
  fclose(f);
  return 0;
}

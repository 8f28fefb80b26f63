// Over-wait on hardware: kernels/diverged_commit.json as CUDA.
//
// Each warp splits into D groups (lane % D); group g does g extra dependent FMAs before its
// 4-byte __pipeline_memcpy_async, so the groups reach the copy at different times. Then:
//   mode "direct"    __pipeline_commit() right after the divergent code (the JSON's syncwarp=0)
//   mode "syncwarp"  __syncwarp() first, then the commit (the JSON's syncwarp=1)
//   mode "per_group" every group commits in its own branch (if (group == g) commit, for each g):
//                    the commits are forced apart whatever the compiler does about
//                    reconvergence, so the warp sees D commits a round. This is the case
//                    smsim's syncwarp=0 models; "direct" shows whether the compiler's own
//                    reconvergence (BSSY/BSYNC) already re-converges the warp before the commit.
// Then, converged in every mode: __syncwarp(), __pipeline_wait_prior(1), compute (k FMAs), a
// two-stage loop of batch_sz batches. If the hardware keeps cp.async groups per warp,
// wait_prior(1) after D separate commits also waits for the other groups' newest copy, and
// cycles per batch rise towards the single-stage cost.
//
// Usage: diverged_commit OUTDIR  ->  diverged_commit.csv
#include <cuda_pipeline.h>
#include <cstring>
#include "common.cuh"

namespace {

constexpr int kReps = 7;
constexpr int kStages = 2;
constexpr float kMul = 1.000001f, kAdd = 0.5f;
constexpr int kRange = 1 << 15;

enum Mode { kDirect = 0, kSyncwarp = 1, kPerGroup = 2 };
const char* const kModeName[] = {"direct", "syncwarp", "per_group"};

template <int kMode>
__global__ void diverged_commit(int* global_out, const int* global_in, int divergence, int batch_sz, int k,
                                long long* cycles, float* work_sink) {
  const long long t0 = clock64();
  extern __shared__ int shared[];  // kStages * blockDim.x ints
  const int tid = threadIdx.x;
  const int group = (tid % 32) % divergence;
  const int grid_size = gridDim.x * blockDim.x;
  auto block_batch = [&](int batch) { return blockIdx.x * blockDim.x + grid_size * batch; };
  float work = float(tid);  // the groups' extra work; stored at the end so it is not dropped

  for (int fetch = 0; fetch < batch_sz + kStages - 1; ++fetch) {
    if (fetch < batch_sz) {
      for (int j = 0; j < group; ++j) work = fmaf(work, kMul, kAdd);
      __pipeline_memcpy_async(&shared[(fetch % kStages) * blockDim.x + tid], &global_in[block_batch(fetch) + tid], 4);
    }
    if (kMode == kSyncwarp) __syncwarp();
    if (kMode == kPerGroup) {
      for (int g = 0; g < divergence; ++g)
        if (group == g) __pipeline_commit();
    } else {
      __pipeline_commit();
    }
    __syncwarp();
    if (fetch >= kStages - 1) {
      const int b = fetch - (kStages - 1);
      __pipeline_wait_prior(kStages - 1);
      float v = float(shared[(b % kStages) * blockDim.x + tid]);
      for (int i = 0; i < k; i += 8) {
#pragma unroll
        for (int j = 0; j < 8; ++j) v = fmaf(v, kMul, kAdd);
      }
      global_out[block_batch(b) + tid] = __float_as_int(v);
    }
  }
  __syncthreads();
  if (tid == 0) cycles[blockIdx.x] = clock64() - t0;
  work_sink[blockIdx.x * blockDim.x + tid] = work;
}

using Kernel = void (*)(int*, const int*, int, int, int, long long*, float*);
const Kernel kKernels[] = {diverged_commit<kDirect>, diverged_commit<kSyncwarp>, diverged_commit<kPerGroup>};

}  // namespace

int main(int argc, char** argv) {
  const int sms = sm_count();
  const int bs = 128, batch_sz = 32, k = 64;  // configs/experiments/diverged_commit.json
  const int grid_size = sms * bs;
  const size_t size = size_t(batch_sz) * grid_size;
  L2Flusher flusher;

  std::vector<int> in(size), out(size), table(2 * kRange);
  uint64_t seed = 777;
  for (auto& x : in) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    x = int((seed >> 33) % (2u * kRange)) - kRange;
  }
  for (int x = -kRange; x < kRange; ++x) {
    float v = float(x);
    for (int i = 0; i < k; ++i) v = std::fmaf(v, kMul, kAdd);
    memcpy(&table[x + kRange], &v, 4);
  }
  int *din, *dout;
  long long* dcyc;
  float* dwork;
  CK(cudaMalloc(&din, size * 4));
  CK(cudaMalloc(&dout, size * 4));
  CK(cudaMalloc(&dcyc, sms * sizeof(long long)));
  CK(cudaMalloc(&dwork, grid_size * sizeof(float)));
  CK(cudaMemcpy(din, in.data(), size * 4, cudaMemcpyHostToDevice));

  FILE* f = open_csv(argc, argv, "diverged_commit.csv",
                     "mode,divergence,block_size,batch_sz,k,stages,grid_blocks,reps,cycles_per_batch_median,"
                     "cycles_per_batch_min,cycles_per_batch_max,mismatches");
  size_t failures = 0;
  for (int mode = 0; mode < 3; ++mode) {
    for (int d : {1, 2, 4, 8, 16, 32}) {
      std::vector<long long> all;
      size_t bad = 0;
      for (int r = 0; r < kReps; ++r) {
        CK(cudaMemset(dout, 0xff, size * 4));  // poison: 0xffffffff is a NaN no result can take
        flusher.flush();                       // the input comes from DRAM, as in the pipelines
        kKernels[mode]<<<sms, bs, kStages * bs * sizeof(int)>>>(dout, din, d, batch_sz, k, dcyc, dwork);
        CK_LAUNCH();
        std::vector<long long> c(sms);
        CK(cudaMemcpy(c.data(), dcyc, sms * sizeof(long long), cudaMemcpyDeviceToHost));
        all.insert(all.end(), c.begin(), c.end());
        if (r == 0) {
          CK(cudaMemcpy(out.data(), dout, size * 4, cudaMemcpyDeviceToHost));
          for (size_t i = 0; i < size; ++i)
            if (out[i] != table[in[i] + kRange]) ++bad;
        }
      }
      failures += bad;
      const double med = median(all);
      ROW(f, "%s,%d,%d,%d,%d,%d,%d,%d,%.1f,%.1f,%.1f,%zu\n", kModeName[mode], d, bs, batch_sz, k, kStages, sms, kReps,
          med / batch_sz, double(*std::min_element(all.begin(), all.end())) / batch_sz,
          double(*std::max_element(all.begin(), all.end())) / batch_sz, bad);
    }
  }
  fclose(f);
  printf("diverged_commit: %s (%zu mismatches)\n", failures ? "FAILED" : "all outputs match the host reference", failures);
  return failures ? 2 : 0;
}

// Where a batch of validation.cu's primitive_copies goes (traces/h100/primitive_stamps.csv):
// the same loop (one warp per SM; per batch each lane issues one 4-byte and sixteen 16-byte
// __pipeline_memcpy_async, in D divergent branches, one commit after them, __pipeline_wait_prior(1),
// compute() with k = 0), with lane 0's clock64 read at four points of every batch: before the
// copies, after the commit, after the wait and after compute. The reads add a few instructions
// a batch and keep the compiler from moving work across them; what they split is the batch's
// issue phase (the copies' instructions, one warp alone on its SM), its wait for the batch
// before, and the compute. From DRAM (L2 flushed before the launch) and from L2 (a second
// launch over the same input), grid = one block per SM.
//
// Usage: primitive_stamps OUTDIR -> OUTDIR/primitive_stamps.csv
#include <cuda_pipeline.h>
#include <algorithm>
#include <vector>
#include "common.cuh"

namespace {

constexpr int kStages = 2, kChunks = 16, kBlock = 32, kBatches = 64, kReps = 5;
constexpr int kStageInts = kBlock + kChunks * 4 * kBlock;
constexpr int kMarks = 4;  // copies begin, committed, waited, computed

__global__ void primitive_stamps(int* global_out, const int* in_small, const int4* in_big, int divergence,
                                 long long* marks) {
  __shared__ alignas(16) int shared[kStages * kStageInts];
  const int tid = threadIdx.x;
  const int group = (tid % 32) % divergence;
  const int grid_size = gridDim.x * blockDim.x;
  auto block_batch = [&](int batch) { return blockIdx.x * blockDim.x + grid_size * batch; };
  long long* m = marks + size_t(blockIdx.x) * kBatches * kMarks;
  for (int batch = 0; batch < kBatches; ++batch) {
    const long long t0 = clock64();
    for (int g = 0; g < divergence; ++g) {
      if (group == g) {
        int* st = shared + (batch % kStages) * kStageInts;
        __pipeline_memcpy_async(st + tid, in_small + block_batch(batch) + tid, 4);
        int4* dst = reinterpret_cast<int4*>(st + blockDim.x);
        const int4* src = in_big + size_t(block_batch(batch)) * kChunks;
#pragma unroll
        for (int j = 0; j < kChunks; ++j)
          __pipeline_memcpy_async(dst + j * blockDim.x + tid, src + j * blockDim.x + tid, 16);
      }
    }
    __pipeline_commit();
    const long long t1 = clock64();
    long long t2 = t1, t3 = t1;
    if (batch >= 1) {
      __pipeline_wait_prior(1);
      t2 = clock64();
      const int b = batch - 1;
      global_out[block_batch(b) + tid] = shared[(b % kStages) * kStageInts + tid];
      t3 = clock64();
    }
    if (tid == 0) {
      m[batch * kMarks + 0] = t0;
      m[batch * kMarks + 1] = t1;
      m[batch * kMarks + 2] = t2;
      m[batch * kMarks + 3] = t3;
    }
  }
  __pipeline_wait_prior(0);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int sms = sm_count();
  const size_t size = size_t(kBatches) * sms * kBlock;
  int *small_in, *out;
  int4* big_in;
  long long* marks;
  CK(cudaMalloc(&small_in, size * 4));
  CK(cudaMalloc(&big_in, size * kChunks * 16));
  CK(cudaMalloc(&out, size * 4));
  CK(cudaMalloc(&marks, size_t(sms) * kBatches * kMarks * 8));
  CK(cudaMemset(small_in, 1, size * 4));
  CK(cudaMemset(big_in, 2, size * kChunks * 16));
  L2Flusher flusher;
  std::vector<long long> h(size_t(sms) * kBatches * kMarks);
  FILE* f = open_csv(argc, argv, "primitive_stamps.csv",
                     "source,divergence,batch_from,batch_to,issue_median,wait_median,compute_median,batch_median");
  for (int d : {1, 2, 4, 32})
    for (const char* source : {"DRAM", "L2"}) {
      std::vector<double> issue, wait, comp, whole;
      for (int rep = 0; rep < kReps; ++rep) {
        const bool l2 = source[0] == 'L';
        flusher.flush();
        if (l2) {  // the input into L2 first
          primitive_stamps<<<sms, kBlock>>>(out, small_in, big_in, d, marks);
          CK_LAUNCH();
        }
        primitive_stamps<<<sms, kBlock>>>(out, small_in, big_in, d, marks);
        CK_LAUNCH();
        CK(cudaMemcpy(h.data(), marks, h.size() * 8, cudaMemcpyDeviceToHost));
        for (int b = 0; b < sms; ++b)
          for (int i = 8; i < kBatches - 1; ++i) {  // steady batches: the pipeline full, the last one apart
            const long long* m = &h[(size_t(b) * kBatches + i) * kMarks];
            issue.push_back(double(m[1] - m[0]));
            wait.push_back(double(m[2] - m[1]));
            comp.push_back(double(m[3] - m[2]));
            whole.push_back(double(m[kMarks] - m[0]));
          }
      }
      ROW(f, "%s,%d,8,%d,%.1f,%.1f,%.1f,%.1f\n", source, d, kBatches - 2, median(issue), median(wait),
          median(comp), median(whole));
    }
  fclose(f);
  return 0;
}

// How DRAM charges a burst of copies that comes between math (session 30): inflight_latency.cu's
// lines mode (inflight_lines.csv) keeps the same lines in flight without pause and finds a copy's
// latency growing ~9 cycles a 128-byte line the SM has in flight; the GEMMs' one-stage loops read
// a k-tile's 64 lines at once and then compute for ~1,500 cycles, and their DRAM rows show only
// ~110 cycles beyond an idle trip. This loop is the lines mode's with the examples' compute after
// the wait: per batch each thread issues C 16-byte __pipeline_memcpy_async from its own grid-wide
// row, commits, waits (wait_prior 0), reads its first copy and runs k dependent FFMAs on it
// (examples.cuh chain(), unrolled by 8), then stores; one block of W warps per SM, on every SM or
// on one SM alone, the input in DRAM (L2 flushed before each launch). Lane 0 of every warp of
// block 0 stamps before its first copy and after its wait (batches 8-63): the burst's latency
// against the math between bursts, at the same lines an SM (W x C x 4).
//
// Usage: burst_math OUTDIR -> OUTDIR/burst_math.csv
//   columns: source,copies,warps,k,grid_blocks,lines_per_sm,cycles_per_batch,latency_median,
//            latency_p10,latency_p90
//   cycles_per_batch: the median block's clock64 span over the 64 batches, divided by 64.
#include <cuda_pipeline.h>
#include <cstdio>
#include <vector>
#include "common.cuh"

namespace {
__device__ __forceinline__ void stamp_end(long long, long long*) {}  // examples.cuh's kernels are not run here
}  // namespace
#include "examples.cuh"

namespace {

constexpr int kBatches = 64, kSkip = 8;
enum Event { kIssue, kLanded, kEvents };

template <int C>
__global__ void burst_math(const char* global_in, int* global_out, int k, long long* tr, long long* cycles) {
  extern __shared__ __align__(16) char stage[];  // C * blockDim.x * 16
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const size_t piece = size_t(blockDim.x) * 16, row = size_t(gridDim.x) * piece;
  const char* src = global_in + size_t(blockIdx.x) * piece + size_t(tid) * 16;
  const bool traced = blockIdx.x == 0 && lane == 0;
  long long* t = tr + size_t(warp) * kBatches * kEvents;
  const long long t0 = clock64();
  for (int b = 0; b < kBatches; ++b) {
    if (traced) t[b * kEvents + kIssue] = clock64();
#pragma unroll
    for (int c = 0; c < C; ++c)
      __pipeline_memcpy_async(stage + (c * blockDim.x + tid) * 16, src + (size_t(b) * C + c) * row, 16);
    __pipeline_commit();
    __pipeline_wait_prior(0);
    const int v = *reinterpret_cast<const int*>(stage + tid * 16);
    if (traced) t[b * kEvents + kLanded] = clock64();
    global_out[(size_t(b) * gridDim.x + blockIdx.x) * blockDim.x + tid] = __float_as_int(chain(float(v), k));
  }
  __syncthreads();
  if (tid == 0) cycles[blockIdx.x] = clock64() - t0;
}

using Kernel = void (*)(const char*, int*, int, long long*, long long*);
Kernel pick(int c) {
  switch (c) {
    case 1: return burst_math<1>;
    case 4: return burst_math<4>;
    default: return burst_math<8>;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int sms = sm_count();
  constexpr int kMaxWarps = 8, kMaxCopies = 8;
  const size_t in_bytes = size_t(kBatches) * kMaxCopies * sms * kMaxWarps * 32 * 16;
  char* din;
  int* dout;
  long long *dtr, *dcyc;
  CK(cudaMalloc(&din, in_bytes));
  CK(cudaMemset(din, 1, in_bytes));
  CK(cudaMalloc(&dout, size_t(kBatches) * sms * kMaxWarps * 32 * sizeof(int)));
  CK(cudaMalloc(&dtr, size_t(kMaxWarps) * kBatches * kEvents * sizeof(long long)));
  CK(cudaMalloc(&dcyc, size_t(sms) * sizeof(long long)));
  L2Flusher flusher;
  FILE* o = open_csv(argc, argv, "burst_math.csv",
                     "source,copies,warps,k,grid_blocks,lines_per_sm,cycles_per_batch,latency_median,latency_p10,"
                     "latency_p90");
  std::vector<long long> tr(size_t(kMaxWarps) * kBatches * kEvents), cyc(sms);
  const int shapes[][2] = {{1, 4}, {4, 4}, {8, 4}, {4, 8}};  // {copies, warps}: 16, 64, 128, 128 lines
  for (const auto& sh : shapes)
    for (int k : {0, 32, 128, 384, 1024})
      for (int grid : {sms, 1}) {
        const int c = sh[0], warps = sh[1], bs = warps * 32;
        Kernel fn = pick(c);
        const size_t smem = size_t(c) * bs * 16;
        CK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
        for (int rep = 0; rep < 2; ++rep) {  // the second launch is the one read
          flusher.flush();
          CK(cudaMemset(dtr, 0, tr.size() * sizeof(long long)));
          fn<<<grid, bs, smem>>>(din, dout, k, dtr, dcyc);
          CK_LAUNCH();
        }
        CK(cudaMemcpy(tr.data(), dtr, tr.size() * sizeof(long long), cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(cyc.data(), dcyc, grid * sizeof(long long), cudaMemcpyDeviceToHost));
        std::vector<long long> lat;
        for (int w = 0; w < warps; ++w)
          for (int b = kSkip; b < kBatches; ++b) {
            const long long* e = &tr[(size_t(w) * kBatches + b) * kEvents];
            lat.push_back(e[kLanded] - e[kIssue]);
          }
        std::sort(lat.begin(), lat.end());
        auto q = [&](double p) { return double(lat[size_t(p * double(lat.size() - 1))]); };
        std::vector<long long> spans(cyc.begin(), cyc.begin() + grid);
        ROW(o, "DRAM,%d,%d,%d,%d,%d,%.1f,%.0f,%.0f,%.0f\n", c, warps, k, grid, warps * c * 4,
            median(spans) / kBatches, q(0.5), q(0.1), q(0.9));
      }
  fclose(o);
  return 0;
}

// How one warp's cp.async copies issue in a burst and drain: the pacing that primitive_copies'
// groups of sixteen 16-byte copies show on the H100 (about 13 cycles apart in a burst, while a long
// run drains at 24-27 cycles a copy, lane_copies.csv). One warp per SM (block 32, every SM); each
// repetition issues a burst of N __pipeline_memcpy_async of `bytes` each (unrolled), then commits
// and waits for it (wait_prior 0). clock64 is read before the burst, after its last copy has
// issued (nothing between the copies) and after the wait:
//   issue_cycles     the burst's issue, t1 - t0: the slope over N is the issue cost of one copy
//   complete_cycles  issue to the last copy landed, t2 - t0
// Variants: 16- or 4-byte copies; 32 lanes or one active; the destination stride a run-time value
// (blockDim.x: ptxas recomputes each address into the register the previous LDGSTS read, as in
// primitive_copies) or a compile-time one (immediate offsets, as in the GEMM); source L2-resident
// (a 256 KB window, warmed by the first repetitions) or streaming from DRAM (a 1 GB sweep).
// Median over SMs and 64 repetitions (the first 8 left out). On the H100 (nvcc 13.0, -O3 -arch=sm_90)
// ptxas hoists the run-time stride's sixteen addresses out of the repetition loop into as many
// registers, so the two stride variants compile alike: neither reuses an address register, and the
// write-after-read wait primitive_copies shows is not in these rows.
//
// Usage: copy_burst OUTDIR -> OUTDIR/copy_burst.csv
#include <cuda_pipeline.h>
#include "common.cuh"

namespace {

constexpr int kReps = 72, kWarm = 8;
constexpr size_t kL2Window = 256 << 10, kDramBytes = size_t(1) << 30;

template <int N, int kBytes, bool kRuntimeStride>
__global__ void burst(const char* src, size_t src_span, int active, long long* out) {
  __shared__ alignas(16) char dst[64 * 32 * 16];
  const int lane = threadIdx.x;
  const unsigned stride = kRuntimeStride ? blockDim.x * kBytes : 32u * kBytes;  // bytes between copy j and j+1
  size_t base = (size_t(blockIdx.x) * N * 32 * kBytes) % src_span;
  for (int r = 0; r < kReps; ++r) {
    const char* s = src + base + lane * kBytes;
    char* d = dst + lane * kBytes;
    __syncwarp();
    const long long t0 = clock64();
    if (lane < active) {
#pragma unroll
      for (int j = 0; j < N; ++j) __pipeline_memcpy_async(d + j * stride, s + j * 32 * kBytes, kBytes);
    }
    const long long t1 = clock64();
    __pipeline_commit();
    __pipeline_wait_prior(0);
    const long long t2 = clock64();
    if (lane == 0 && r >= kWarm) {
      long long* o = out + (size_t(blockIdx.x) * (kReps - kWarm) + (r - kWarm)) * 2;
      o[0] = t1 - t0;
      o[1] = t2 - t0;
    }
    base = (base + size_t(gridDim.x) * N * 32 * kBytes) % src_span;  // a new region every repetition
  }
}

using Kernel = void (*)(const char*, size_t, int, long long*);

template <int kBytes, bool kRuntimeStride>
Kernel pick(int n) {
  switch (n) {
    case 1: return burst<1, kBytes, kRuntimeStride>;
    case 2: return burst<2, kBytes, kRuntimeStride>;
    case 4: return burst<4, kBytes, kRuntimeStride>;
    case 8: return burst<8, kBytes, kRuntimeStride>;
    case 16: return burst<16, kBytes, kRuntimeStride>;
    case 32: return burst<32, kBytes, kRuntimeStride>;
    default: return burst<64, kBytes, kRuntimeStride>;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int sms = sm_count();
  char* src;
  CK(cudaMalloc(&src, kDramBytes + (64 * 32 * 16)));
  CK(cudaMemset(src, 1, kDramBytes + (64 * 32 * 16)));
  long long* dout;
  const size_t per = size_t(sms) * (kReps - kWarm) * 2;
  CK(cudaMalloc(&dout, per * sizeof(long long)));
  FILE* f = open_csv(argc, argv, "copy_burst.csv",
                     "bytes,active_lanes,stride,source,copies,issue_cycles_median,complete_cycles_median");
  for (int bytes : {16, 4})
    for (int active : {32, 1})
      for (int runtime : {1, 0})
        for (int dram : {0, 1})
          for (int n : {1, 2, 4, 8, 16, 32, 64}) {
            Kernel k = bytes == 16 ? (runtime ? pick<16, true>(n) : pick<16, false>(n))
                                   : (runtime ? pick<4, true>(n) : pick<4, false>(n));
            k<<<sms, 32>>>(src, dram ? kDramBytes : kL2Window, active, dout);
            CK_LAUNCH();
            std::vector<long long> v(per);
            CK(cudaMemcpy(v.data(), dout, per * sizeof(long long), cudaMemcpyDeviceToHost));
            std::vector<long long> issue, done;
            for (size_t i = 0; i < v.size(); i += 2) {
              issue.push_back(v[i]);
              done.push_back(v[i + 1]);
            }
            ROW(f, "%d,%d,%s,%s,%d,%.1f,%.1f\n", bytes, active, runtime ? "runtime" : "immediate", dram ? "DRAM" : "L2", n,
                median(issue), median(done));
          }
  fclose(f);
  return 0;
}

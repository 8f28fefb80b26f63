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
// A third variant, runtime_both, makes the global stride a run-time value too and moves the shared
// base every repetition, so the addresses are computed inside the timed burst.
// Median over SMs and 64 repetitions (the first 8 left out). On the H100 (nvcc 13.0, -O3 -arch=sm_90)
// ptxas hoists the run-time stride's sixteen addresses out of the repetition loop into as many
// registers, so `runtime` and `immediate` compile alike; `runtime_both` computes each address in
// the burst and reuses a register two or three copies later (VIADD R25, R28, ... after the LDGSTS
// that read R25), never the very next copy as primitive_copies' R60 does.
//
// A fourth variant, chained (session 11; `copy_burst OUTDIR chained` -> copy_burst_chained.csv),
// writes primitive_copies' pattern on purpose: each copy's shared address is the previous one's
// register plus the stride (inline PTX: cp.async, then add.u32 into the register it read), so the
// add must wait until the LDGSTS has read its operand: the write-after-read wait of a chain. With
// registers to spare ptxas renames the chain away (64 copies in 440 cycles, as `runtime`); built
// with -maxrregcount=24 (traces/h100/copy_burst_chained.csv and .sass) it keeps one register,
// `LDGSTS [R14]; IMAD R14, R2, 0x10, R14; LDGSTS [R14]`, and a copy costs ~13 cycles (64 in 860).
//
// Usage: copy_burst OUTDIR [chained] -> OUTDIR/copy_burst.csv (or copy_burst_chained.csv)
#include <cuda_pipeline.h>
#include <cstring>
#include <vector>
#include "common.cuh"

namespace {

constexpr int kReps = 72, kWarm = 8;
constexpr size_t kL2Window = 256 << 10, kDramBytes = size_t(1) << 30;

// kStride: 0 immediate (compile-time strides), 1 runtime (the shared stride blockDim.x-based), 2 both
// (the global stride too, and the shared base moving every repetition, as in primitive_copies)
template <int N, int kBytes, int kStride>
__global__ void burst(const char* src, size_t src_span, int active, long long* out) {
  __shared__ alignas(16) char dst[3 * 16 * 1024];  // 64 copies of 512 bytes, plus the moving base's 16 KB
  const int lane = threadIdx.x;
  const unsigned stride = kStride ? blockDim.x * kBytes : 32u * kBytes;  // bytes between copy j and j+1
  const unsigned gstride = kStride == 2 ? blockDim.x * kBytes : 32u * kBytes;
  size_t base = (size_t(blockIdx.x) * N * 32 * kBytes) % src_span;
  for (int r = 0; r < kReps; ++r) {
    const char* s = src + base + lane * kBytes;
    char* d = dst + (kStride == 2 ? (r & 1) * (16 * 1024) : 0) + lane * kBytes;
    __syncwarp();
    const long long t0 = clock64();
    if (lane < active) {
      if constexpr (kStride == 3) {
        unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(d));
#pragma unroll
        for (int j = 0; j < N; ++j) {
          if constexpr (kBytes == 16)
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(a), "l"(s + size_t(j) * gstride) : "memory");
          else
            asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(a), "l"(s + size_t(j) * gstride) : "memory");
          asm volatile("add.u32 %0, %0, %1;" : "+r"(a) : "r"(stride));
        }
      } else {
#pragma unroll
        for (int j = 0; j < N; ++j) __pipeline_memcpy_async(d + j * stride, s + size_t(j) * gstride, kBytes);
      }
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

template <int kBytes, int kStride>
Kernel pick(int n) {
  switch (n) {
    case 1: return burst<1, kBytes, kStride>;
    case 2: return burst<2, kBytes, kStride>;
    case 4: return burst<4, kBytes, kStride>;
    case 8: return burst<8, kBytes, kStride>;
    case 16: return burst<16, kBytes, kStride>;
    case 32: return burst<32, kBytes, kStride>;
    default: return burst<64, kBytes, kStride>;
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
  const bool chained = argc > 2 && !strcmp(argv[2], "chained");
  FILE* f = open_csv(argc, argv, chained ? "copy_burst_chained.csv" : "copy_burst.csv",
                     "bytes,active_lanes,stride,source,copies,issue_cycles_median,complete_cycles_median");
  const std::vector<int> strides = chained ? std::vector<int>{3} : std::vector<int>{1, 0, 2};
  for (int bytes : {16, 4})
    for (int active : {32, 1})
      for (int stride : strides)
        for (int dram : {0, 1})
          for (int n : {1, 2, 4, 8, 16, 32, 64}) {
            Kernel k = bytes == 16 ? (stride == 1   ? pick<16, 1>(n)
                                      : stride == 2 ? pick<16, 2>(n)
                                      : stride == 3 ? pick<16, 3>(n)
                                                    : pick<16, 0>(n))
                                   : (stride == 1   ? pick<4, 1>(n)
                                      : stride == 2 ? pick<4, 2>(n)
                                      : stride == 3 ? pick<4, 3>(n)
                                                    : pick<4, 0>(n));
            k<<<sms, 32>>>(src, dram ? kDramBytes : kL2Window, active, dout);
            CK_LAUNCH();
            std::vector<long long> v(per);
            CK(cudaMemcpy(v.data(), dout, per * sizeof(long long), cudaMemcpyDeviceToHost));
            std::vector<long long> issue, done;
            for (size_t i = 0; i < v.size(); i += 2) {
              issue.push_back(v[i]);
              done.push_back(v[i + 1]);
            }
            const char* sname = stride == 1 ? "runtime" : stride == 2 ? "runtime_both" : stride == 3 ? "chained" : "immediate";
            ROW(f, "%d,%d,%s,%s,%d,%.1f,%.1f\n", bytes, active, sname, dram ? "DRAM" : "L2", n,
                median(issue), median(done));
          }
  fclose(f);
  return 0;
}

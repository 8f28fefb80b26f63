// What the SM's memory-instruction path takes per LDGSTS as its active lanes change: chain.cu's
// lane_copies (a run of __pipeline_memcpy_async issued back to back, a commit every 17, the source
// L2-resident) with 1-32 warps per SM, every warp issuing, and 1-32 active lanes a warp.
// One warp alone gives a warp's own cost of a copy instruction; many warps the SM-wide one, which
// the primitive copies of a divergent warp (one lane a copy) pay at several warps per SM.
//
// One block per SM of 32 W threads; cycles per copy instruction of a warp is the slope of the
// block's cycles (all warps done) between n = 272 and 1,088 copies a lane; SM-wide cycles per
// copy instruction is that over W.
//
// Usage: lane_copies_sm OUTDIR  ->  lane_copies_sm.csv
#include <cuda_pipeline.h>
#include "common.cuh"

namespace {

constexpr int kReps = 5;

template <int kBytes>
__global__ void lane_copies(const int4* src, int n, int active, long long* cycles) {
  __shared__ alignas(16) int4 dst[17 * 32];  // shared by the warps: the copies' destinations do not matter here
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  __syncthreads();
  const long long t0 = clock64();
  if (lane < active) {
    for (int i = 0; i < n; i += 17) {
#pragma unroll
      for (int j = 0; j < 17; ++j)
        __pipeline_memcpy_async(reinterpret_cast<char*>(&dst[j * 32 + lane]),
                                reinterpret_cast<const char*>(&src[(warp * 17 * 32 + j * 32 + lane) & 4095]), kBytes);
      __pipeline_commit();
    }
    __pipeline_wait_prior(0);
  }
  __syncthreads();
  if (threadIdx.x == 0) cycles[blockIdx.x] = clock64() - t0;
}

}  // namespace

int main(int argc, char** argv) {
  const int sms = sm_count();
  FILE* f = open_csv(argc, argv, "lane_copies_sm.csv",
                     "bytes,active_lanes,warps_per_sm,n_low,n_high,cycles_low,cycles_high,cycles_per_copy_warp,"
                     "cycles_per_copy_sm");
  int4* dsrc;
  long long* dcyc;
  CK(cudaMalloc(&dsrc, 4096 * sizeof(int4)));
  CK(cudaMemset(dsrc, 0, 4096 * sizeof(int4)));
  CK(cudaMalloc(&dcyc, sms * sizeof(long long)));
  for (int bytes : {16, 4})
    for (int active : {1, 4, 8, 16, 24, 32})
      for (int w : {1, 2, 4, 8, 16, 32}) {
        double c[2];
        const int ns[2] = {17 * 16, 17 * 64};
        for (int i = 0; i < 2; ++i) {
          std::vector<long long> all;
          for (int r = 0; r < kReps; ++r) {
            if (bytes == 16)
              lane_copies<16><<<sms, 32 * w>>>(dsrc, ns[i], active, dcyc);
            else
              lane_copies<4><<<sms, 32 * w>>>(dsrc, ns[i], active, dcyc);
            CK_LAUNCH();
            std::vector<long long> cc(sms);
            CK(cudaMemcpy(cc.data(), dcyc, sms * sizeof(long long), cudaMemcpyDeviceToHost));
            all.insert(all.end(), cc.begin(), cc.end());
          }
          c[i] = median(all);
        }
        const double per = (c[1] - c[0]) / (ns[1] - ns[0]);
        ROW(f, "%d,%d,%d,%d,%d,%.1f,%.1f,%.3f,%.3f\n", bytes, active, w, ns[0], ns[1], c[0], c[1], per, per / w);
      }
  fclose(f);
  return 0;
}

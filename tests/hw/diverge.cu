// What a divergent if/else costs a warp beyond its two paths: the branch that splits the warp,
// the switch to the other path, and the BSYNC where the paths meet again.
//
// A loop (not unrolled) whose trip is an if/else on a condition, each side a chain of 12
// dependent IMADs (long enough that ptxas branches instead of predicating; the sides differ, so
// they cannot be merged), or no if at all:
//   none      the chain of the "then" side, unconditionally (the loop and one side)
//   then      cond true in every lane (a kernel parameter): one side, the branch not taken
//   else      cond false in every lane: the other side, the branch taken
//   diverge   cond = lane & 1: both sides, one after the other, and the reconvergence
//   if_only   cond = lane & 1 around the "then" side alone (no else): half the warp skips it
// Each side's chain is 12 IMAD latencies; diverge - none - 12 IMAD latencies is what splitting
// the warp into two paths and joining them adds per trip, if_only - none what a divergent if
// with nothing on the other side adds. warps_per_scheduler 1-8 (blocks of 128 * w threads,
// one block per SM, every SM).
//
// Usage: diverge OUTDIR -> OUTDIR/diverge.csv
#include "common.cuh"

namespace {

constexpr int kReps = 5;
enum Mode { kNone, kThen, kElse, kDiverge, kIfOnly, kModes };
const char* const kModeName[] = {"none", "then", "else", "diverge", "if_only"};

template <int kMode>
__global__ void diverge(int trips, unsigned flag, unsigned a, unsigned* out, long long* cycles) {
  const unsigned lane = threadIdx.x % 32;
  const bool cond = kMode == kDiverge || kMode == kIfOnly ? (lane & 1) != 0 : (flag & 1) != 0;
  unsigned x = threadIdx.x, y = threadIdx.x * 3u;
  __syncthreads();
  const long long t0 = clock64();
#pragma unroll 1
  for (int i = 0; i < trips; ++i) {
    if (kMode == kNone || cond) {
#pragma unroll
      for (int j = 0; j < 12; ++j) x = x * a + 7u;
    } else if (kMode != kIfOnly) {
#pragma unroll
      for (int j = 0; j < 12; ++j) y = y * a + 11u;
    }
  }
  const long long t1 = clock64();
  out[blockIdx.x * blockDim.x + threadIdx.x] = x + y;
  if (threadIdx.x % 32 == 0) cycles[blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32] = t1 - t0;
}

using Kernel = void (*)(int, unsigned, unsigned, unsigned*, long long*);
Kernel kernel_for(int m) {
  switch (m) {
    case kNone: return diverge<kNone>;
    case kThen: return diverge<kThen>;
    case kElse: return diverge<kElse>;
    case kIfOnly: return diverge<kIfOnly>;
    default: return diverge<kDiverge>;
  }
}

}  // namespace

int main(int argc, char** argv) {
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  unsigned* dout;
  long long* dcyc;
  CK(cudaMalloc(&dout, size_t(sms) * 1024 * sizeof(unsigned)));
  CK(cudaMalloc(&dcyc, size_t(sms) * 32 * sizeof(long long)));
  FILE* f = open_csv(argc, argv, "diverge.csv",
                     "mode,warps_per_scheduler,trips_low,trips_high,cycles_low,cycles_high,cycles_per_trip");
  for (int m = 0; m < kModes; ++m)
    for (int wps : {1, 2, 4, 8}) {
      const int ts[2] = {256, 2048};
      double c[2];
      for (int t = 0; t < 2; ++t) {
        std::vector<long long> all;
        for (int r = 0; r < kReps; ++r) {
          // flag: 1 takes the "then" side in every lane, 0 the "else" side
          kernel_for(m)<<<sms, 128 * wps>>>(ts[t], m == kElse ? 0u : 1u, 3u, dout, dcyc);
          CK_LAUNCH();
          std::vector<long long> v(size_t(sms) * 4 * wps);
          CK(cudaMemcpy(v.data(), dcyc, v.size() * sizeof(long long), cudaMemcpyDeviceToHost));
          all.insert(all.end(), v.begin(), v.end());
        }
        c[t] = median(all);
      }
      ROW(f, "%s,%d,%d,%d,%.1f,%.1f,%.3f\n", kModeName[m], wps, ts[0], ts[1], c[0], c[1],
          (c[1] - c[0]) / (ts[1] - ts[0]));
    }
  fclose(f);
  return 0;
}

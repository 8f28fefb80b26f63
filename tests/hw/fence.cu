// What fence.proxy.async.shared::cta costs a warp (MEMBAR.ALL.CTA + FENCE.VIEW.ASYNC.S in SASS), as
// the warp-specialised GEMM's consumers issue it after their LDSMs and before their arrive on the
// stage's empty mbarrier. Each trip of a loop (not unrolled) is one of:
//   arrive        lane 0 arrives on a shared mbarrier (mbarrier.arrive, as the GEMM's release), __syncwarp
//   arrive_fence  the same, the fence first (the GEMM's consumer tail)
//   lds           an LDS whose value the next trip's address depends on (a chase), __syncwarp
//   lds_fence     the same, the fence after the LDS's use
//   fence         the fence alone, __syncwarp
//   none          __syncwarp alone
// 1 warp per scheduler (block 128, one block per SM, every SM); the slope between 1024 and 8192 trips
// is one trip. fence - none is what the fence costs with nothing outstanding; arrive_fence - arrive
// and lds_fence - lds what it costs behind the warp's last shared-memory operation.
//
// Usage: fence OUTDIR -> OUTDIR/fence.csv
#include "common.cuh"

namespace {

constexpr int kReps = 5;
enum Mode { kArrive, kArriveFence, kLds, kLdsFence, kFence, kNone, kModes };
const char* const kModeName[] = {"arrive", "arrive_fence", "lds", "lds_fence", "fence", "none"};

__device__ __forceinline__ unsigned sa(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }

template <int kMode>
__global__ void fence_loop(int trips, unsigned* out, long long* cycles) {
  __shared__ alignas(8) unsigned long long bar[4];
  __shared__ unsigned chase[256];
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (unsigned i = threadIdx.x; i < 256; i += blockDim.x) chase[i] = (i * 97 + 13) & 255;
  if (threadIdx.x < 4)  // a count no trip completes: the arrives only count down
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(sa(&bar[threadIdx.x])), "r"(1u << 19) : "memory");
  __syncthreads();
  unsigned v = lane;
  const long long t0 = clock64();
#pragma unroll 1
  for (int i = 0; i < trips; ++i) {
    if (kMode == kLds || kMode == kLdsFence) {
      asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(sa(&chase[v & 255])) : "memory");
      v += lane;
    }
    if (kMode == kArriveFence || kMode == kLdsFence || kMode == kFence)
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncwarp();
    if ((kMode == kArrive || kMode == kArriveFence) && lane == 0)
      asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(sa(&bar[warp])) : "memory");
  }
  const long long t1 = clock64();
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
  if (lane == 0) cycles[blockIdx.x * (blockDim.x / 32) + warp] = t1 - t0;
}

using Kernel = void (*)(int, unsigned*, long long*);
Kernel kernel_for(int m) {
  switch (m) {
    case kArrive: return fence_loop<kArrive>;
    case kArriveFence: return fence_loop<kArriveFence>;
    case kLds: return fence_loop<kLds>;
    case kLdsFence: return fence_loop<kLdsFence>;
    case kFence: return fence_loop<kFence>;
    default: return fence_loop<kNone>;
  }
}

}  // namespace

int main(int argc, char** argv) {
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int bs = 128;
  unsigned* dout;
  long long* dcyc;
  CK(cudaMalloc(&dout, size_t(sms) * bs * sizeof(unsigned)));
  CK(cudaMalloc(&dcyc, size_t(sms) * (bs / 32) * sizeof(long long)));
  FILE* f = open_csv(argc, argv, "fence.csv", "mode,warps_per_scheduler,trips_low,trips_high,cycles_low,cycles_high,cycles_per_trip");
  for (int m = 0; m < kModes; ++m) {
    const int ts[2] = {1024, 8192};
    double c[2];
    for (int t = 0; t < 2; ++t) {
      std::vector<long long> all;
      for (int r = 0; r < kReps; ++r) {
        kernel_for(m)<<<sms, bs>>>(ts[t], dout, dcyc);
        CK_LAUNCH();
        std::vector<long long> cyc(size_t(sms) * (bs / 32));
        CK(cudaMemcpy(cyc.data(), dcyc, cyc.size() * sizeof(long long), cudaMemcpyDeviceToHost));
        all.insert(all.end(), cyc.begin(), cyc.end());
      }
      c[t] = median(all);
    }
    ROW(f, "%s,1,%d,%d,%.1f,%.1f,%.3f\n", kModeName[m], ts[0], ts[1], c[0], c[1], (c[1] - c[0]) / (ts[1] - ts[0]));
  }
  fclose(f);
  return 0;
}

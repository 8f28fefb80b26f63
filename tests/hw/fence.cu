// What fence.proxy.async.shared::cta costs a warp (MEMBAR.ALL.CTA + FENCE.VIEW.ASYNC.S in SASS), as
// the warp-specialised GEMM's consumers issue it after their LDSMs and before their arrive on the
// stage's empty mbarrier. Each trip of a loop (not unrolled) is one of:
//   arrive        lane 0 arrives on a shared mbarrier (mbarrier.arrive, as the GEMM's release), __syncwarp
//   arrive_fence  the same, the fence first (the GEMM's consumer tail)
//   lds           an LDS whose value the next trip's address depends on (a chase), __syncwarp
//   lds_fence     the same, the fence after the LDS's use
//   fence         the fence alone, __syncwarp
//   none          __syncwarp alone
//   fence_busy    fence, while another warp per scheduler streams 16-byte LDS (four wavefronts each,
//                 eight independent per trip) until the timed warps are done: the port is kept busy
//   none_busy     none, beside the same streaming warps
//   hmma          four independent mma.sync m16n8k16 (HMMA.16816.F32) into four accumulators, __syncwarp
//   hmma_fence    the same, the fence after them (the GEMM consumer's tail: its last HMMAs, then the fence;
//                 ptxas hoists the MEMBAR above the trip's HMMAs, so the previous trip's are in flight)
//   hmma_indep / hmma_indep_fence  four mma.sync whose accumulators start from zero every trip (no chain
//                 from trip to trip), without and with the fence after them: whether the MEMBAR waits
//                 for the warp's HMMAs in flight
//   fence_bulk    fence, while a fifth warp keeps 4 KB cp.async.bulk copies (global, L2-resident, to
//                 shared memory, completing on an mbarrier per slot of a 4-slot ring) in flight until
//                 the timed warps are done: the async proxy busy writing the block's shared memory
//   none_bulk     none, beside the same copies
//   arrive_bulk / arrive_fence_bulk  arrive and arrive_fence beside the same copies (the GEMM consumer's
//                 tail: the fence, then the arrive that hands the stage back to the copies)
// 1 timed warp per scheduler (block 128, or 256 with the streaming warps; one block per SM, every SM);
// the slope between 1024 and 8192 trips is one trip. fence - none is what the fence costs with nothing
// outstanding; arrive_fence - arrive and lds_fence - lds what it costs behind the warp's last
// shared-memory operation; fence_busy - none_busy what it costs behind the other warps' loads queued at
// the shared-memory port (MEMBAR.ALL.CTA waits for the memory operations ahead of it).
//
// Usage: fence OUTDIR -> OUTDIR/fence.csv
#include "common.cuh"

namespace {

constexpr int kReps = 5;
enum Mode { kArrive, kArriveFence, kLds, kLdsFence, kFence, kNone, kFenceBusy, kNoneBusy, kHmma, kHmmaFence, kFenceBulk, kNoneBulk, kArriveBulk, kArriveFenceBulk, kHmmaIndep, kHmmaIndepFence, kModes };
const char* const kModeName[] = {"arrive",     "arrive_fence", "lds",       "lds_fence", "fence",      "none",
                                 "fence_busy", "none_busy",    "hmma",      "hmma_fence", "fence_bulk", "none_bulk",
                                 "arrive_bulk", "arrive_fence_bulk", "hmma_indep", "hmma_indep_fence"};
__host__ __device__ constexpr bool busy(int m) { return m == kFenceBusy || m == kNoneBusy; }
__host__ __device__ constexpr bool bulk(int m) {
  return m == kFenceBulk || m == kNoneBulk || m == kArriveBulk || m == kArriveFenceBulk;
}
constexpr int kRing = 4, kCopyBytes = 4096, kSrcCopies = 64;

__device__ __forceinline__ unsigned sa(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }

template <int kMode>
__global__ void fence_loop(int trips, unsigned* out, long long* cycles, const char* src) {
  __shared__ alignas(8) unsigned long long bar[4];
  __shared__ unsigned chase[256];
  __shared__ alignas(16) uint4 stream[8 * 32];
  __shared__ volatile int done;
  __shared__ alignas(128) unsigned char ring[bulk(kMode) ? kRing * kCopyBytes : 16];
  __shared__ alignas(8) unsigned long long full[kRing];
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (unsigned i = threadIdx.x; i < 256; i += blockDim.x) chase[i] = (i * 97 + 13) & 255;
  for (unsigned i = threadIdx.x; i < 8 * 32; i += blockDim.x) stream[i] = make_uint4(i, i + 1, i + 2, i + 3);
  if (threadIdx.x == 0) done = 0;
  if (bulk(kMode) && threadIdx.x < kRing)
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sa(&full[threadIdx.x])) : "memory");
  if (bulk(kMode)) asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  if (threadIdx.x < 4)  // a count no trip completes: the arrives only count down
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(sa(&bar[threadIdx.x])), "r"(1u << 19) : "memory");
  __syncthreads();
  unsigned v = lane;
  float acc[4][4] = {};
  const unsigned a0 = 0x3c003c00u + lane, b0 = 0x3c003c00u ^ lane;  // half pairs, run-time per lane
  if (bulk(kMode) && warp == 4) {  // the copying warp: lane 0 keeps kRing bulk copies in flight
    if (lane == 0) {
      auto wait = [&](unsigned slot, unsigned parity) {
        asm volatile("{\n\t.reg .pred P;\nW:\n\tmbarrier.try_wait.parity.shared::cta.b64 P, [%0], %1;\n\t@!P bra W;\n\t}"
                     ::"r"(sa(&full[slot])), "r"(parity) : "memory");
      };
      unsigned i = 0;
      for (; !done; ++i) {
        const unsigned slot = i % kRing;
        if (i >= kRing) wait(slot, (i / kRing - 1) & 1);  // the slot's previous copy has landed
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(sa(&full[slot])), "r"(kCopyBytes) : "memory");
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                     ::"r"(sa(ring + slot * kCopyBytes)), "l"(src + size_t(i % kSrcCopies) * kCopyBytes), "r"(kCopyBytes),
                     "r"(sa(&full[slot])) : "memory");
      }
      for (unsigned j = i > kRing ? i - kRing : 0; j < i; ++j) wait(j % kRing, (j / kRing) & 1);  // none left in flight
      out[blockIdx.x * blockDim.x + threadIdx.x] = i;
    }
    return;
  }
  if (busy(kMode) && warp >= 4) {  // the streaming warps: 16-byte loads until warp 0 is done
    uint4 acc = make_uint4(0, 0, 0, 0);
    while (!done) {
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        const uint4 x = stream[j * 32 + lane];
        acc.x ^= x.x; acc.y ^= x.y; acc.z ^= x.z; acc.w ^= x.w;
      }
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc.x ^ acc.y ^ acc.z ^ acc.w;
    return;
  }
  const long long t0 = clock64();
#pragma unroll 1
  for (int i = 0; i < trips; ++i) {
    if (kMode == kLds || kMode == kLdsFence) {
      asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(sa(&chase[v & 255])) : "memory");
      v += lane;
    }
    if (kMode == kHmmaIndep || kMode == kHmmaIndepFence) {
      const float zero = __uint_as_float(v & 0u);  // 0.0f the compiler cannot see
#pragma unroll
      for (int c = 0; c < 4; ++c)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%10,%10,%10};"
                     : "=f"(acc[c][0]), "=f"(acc[c][1]), "=f"(acc[c][2]), "=f"(acc[c][3])
                     : "r"(a0), "r"(a0 + c), "r"(a0), "r"(a0), "r"(b0), "r"(b0 + c), "f"(zero));
    }
    if (kMode == kHmma || kMode == kHmmaFence) {
#pragma unroll
      for (int c = 0; c < 4; ++c)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                     : "+f"(acc[c][0]), "+f"(acc[c][1]), "+f"(acc[c][2]), "+f"(acc[c][3])
                     : "r"(a0), "r"(a0 + c), "r"(a0), "r"(a0), "r"(b0), "r"(b0 + c));
    }
    if (kMode == kArriveFence || kMode == kLdsFence || kMode == kFence || kMode == kFenceBusy || kMode == kHmmaFence ||
        kMode == kFenceBulk || kMode == kArriveFenceBulk || kMode == kHmmaIndepFence)
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncwarp();
    if ((kMode == kArrive || kMode == kArriveFence || kMode == kArriveBulk || kMode == kArriveFenceBulk) && lane == 0)
      asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(sa(&bar[warp])) : "memory");
  }
  const long long t1 = clock64();
  if (busy(kMode) || bulk(kMode)) {
    __syncwarp();
    if (threadIdx.x < 128) asm volatile("bar.sync 1, 128;" ::: "memory");  // every timed warp is done
    if (threadIdx.x == 0) done = 1;
  }
  for (int c = 0; c < 4; ++c) v += __float_as_uint(acc[c][0] + acc[c][1] + acc[c][2] + acc[c][3]);
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
  if (lane == 0) cycles[blockIdx.x * 8 + warp] = t1 - t0;
}

using Kernel = void (*)(int, unsigned*, long long*, const char*);
Kernel kernel_for(int m) {
  switch (m) {
    case kArrive: return fence_loop<kArrive>;
    case kArriveFence: return fence_loop<kArriveFence>;
    case kLds: return fence_loop<kLds>;
    case kLdsFence: return fence_loop<kLdsFence>;
    case kFence: return fence_loop<kFence>;
    case kFenceBusy: return fence_loop<kFenceBusy>;
    case kNoneBusy: return fence_loop<kNoneBusy>;
    case kHmma: return fence_loop<kHmma>;
    case kHmmaFence: return fence_loop<kHmmaFence>;
    case kFenceBulk: return fence_loop<kFenceBulk>;
    case kNoneBulk: return fence_loop<kNoneBulk>;
    case kArriveBulk: return fence_loop<kArriveBulk>;
    case kArriveFenceBulk: return fence_loop<kArriveFenceBulk>;
    case kHmmaIndep: return fence_loop<kHmmaIndep>;
    case kHmmaIndepFence: return fence_loop<kHmmaIndepFence>;
    default: return fence_loop<kNone>;
  }
}

}  // namespace

int main(int argc, char** argv) {
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int timed = 128;  // the timed warps, one per scheduler; the streaming ones come after them
  unsigned* dout;
  long long* dcyc;
  CK(cudaMalloc(&dout, size_t(sms) * 2 * timed * sizeof(unsigned)));
  CK(cudaMalloc(&dcyc, size_t(sms) * 8 * sizeof(long long)));
  char* dsrc;
  CK(cudaMalloc(&dsrc, size_t(kSrcCopies) * kCopyBytes));  // 256 KB: L2-resident after the first launch
  CK(cudaMemset(dsrc, 1, size_t(kSrcCopies) * kCopyBytes));
  FILE* f = open_csv(argc, argv, "fence.csv", "mode,warps_per_scheduler,trips_low,trips_high,cycles_low,cycles_high,cycles_per_trip");
  for (int m = 0; m < kModes; ++m) {
    const int bs = busy(m) ? 2 * timed : bulk(m) ? timed + 32 : timed;
    const int ts[2] = {1024, 8192};
    double c[2];
    for (int t = 0; t < 2; ++t) {
      std::vector<long long> all;
      for (int r = 0; r < kReps; ++r) {
        kernel_for(m)<<<sms, bs>>>(ts[t], dout, dcyc, dsrc);
        CK_LAUNCH();
        std::vector<long long> cyc(size_t(sms) * 8);  // 8 slots per block, the timed warps in the first 4
        CK(cudaMemcpy(cyc.data(), dcyc, cyc.size() * sizeof(long long), cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < cyc.size(); ++i)
          if (int(i % 8) < timed / 32) all.push_back(cyc[i]);
      }
      c[t] = median(all);
    }
    ROW(f, "%s,1,%d,%d,%.1f,%.1f,%.3f\n", kModeName[m], ts[0], ts[1], c[0], c[1], (c[1] - c[0]) / (ts[1] - ts[0]));
  }
  fclose(f);
  return 0;
}

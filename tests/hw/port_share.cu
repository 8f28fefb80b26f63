// How the shared-memory port is shared between ldmatrix reads and the copies' writes into shared
// memory: four warps (one per scheduler) stream 8-way ldmatrix .x4 (32 wavefronts each, as the GEMM's
// B fragments) for a fixed number of trips, timed, while a fifth warp keeps copies landing in shared
// memory until they are done:
//   none     no copies
//   bulk     lane 0 keeps four 4 KB cp.async.bulk copies (global, L2-resident) in flight into a ring,
//            each completing on its slot's mbarrier (the warp-specialised GEMM's producer)
//   ldgsts   the warp keeps four 4 KB rounds of 16-byte cp.async (LDGSTS, 256 per round: eight per
//            lane) in flight, a commit group each (the cp.async GEMM's fills)
//   fence    the warp runs fence.proxy.async.shared::cta in a loop (MEMBAR.ALL.CTA, FENCE.VIEW.ASYNC.S):
//            whether a MEMBAR waiting for the port's queue holds the LDSMs queued behind it
//   s2r      the warp reads SR_VIRTID (%warpid) in a loop, an IMAD waiting for each
// and the copies alone (the same fifth warp, the four LDSM warps idle), for their rate without reads.
// The port takes a wavefront a cycle; if a 128-byte piece of a copy's write took one wavefront, the
// LDSMs' wavefronts a cycle and the copies' bytes a cycle over 128 would add up to about one.
//
// Columns: the LDSM warps' time and wavefronts a cycle; the fifth warp's count (bytes copied, or the
// fences or S2Rs it ran) and time; its bytes a cycle.
//
// Usage: port_share OUTDIR -> OUTDIR/port_share.csv (one block per SM on every SM; medians over blocks)
#include "common.cuh"

namespace {

constexpr int kReps = 5;
constexpr int kRing = 4;
constexpr int kCopyBytes = 4096;
constexpr int kSrcCopies = 64;  // 256 KB of source, L2-resident after the first launch
constexpr int kLdsmPerTrip = 8;
enum Mode { kNone, kBulk, kLdgsts, kBulkAlone, kLdgstsAlone, kFence, kS2r, kModes };
const char* const kModeName[] = {"none", "bulk", "ldgsts", "bulk_alone", "ldgsts_alone", "fence", "s2r"};

__device__ __forceinline__ uint32_t sa(const void* p) { return uint32_t(__cvta_generic_to_shared(p)); }

template <int kMode>
__global__ void __launch_bounds__(160) port_share(int trips, uint32_t zero, const char* src, unsigned* out,
                                                   long long* cyc, unsigned long long* bytes) {
  extern __shared__ __align__(128) unsigned char dyn[];
  unsigned char* ldsm_region = dyn;                  // 8 chains x 32 rows x 128 bytes
  unsigned char* ring = dyn + 8 * 32 * 128;          // kRing x 4 KB
  __shared__ alignas(8) unsigned long long full[kRing];
  __shared__ volatile int done;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  constexpr bool alone = kMode == kBulkAlone || kMode == kLdgstsAlone;
  constexpr bool bulk = kMode == kBulk || kMode == kBulkAlone;
  for (int i = threadIdx.x; i < 8 * 32 * 128 / 4; i += blockDim.x) reinterpret_cast<uint32_t*>(ldsm_region)[i] = i;
  if (threadIdx.x == 0) done = 0;
  if (threadIdx.x < kRing) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sa(&full[threadIdx.x])) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  __syncthreads();
  if (warp == 4) {
    if (kMode == kNone) return;
    if (kMode == kFence || kMode == kS2r) {  // count the trips until the LDSM warps are done
      unsigned n = 0, acc = lane;
      const long long t0 = clock64();
      for (; !done; ++n) {
        if (kMode == kFence) {
          asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        } else {
          uint32_t v;
          asm volatile("mov.u32 %0, %%warpid;" : "=r"(v));
          acc = acc * 3u + v;
        }
      }
      const long long t1 = clock64();
      out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
      if (lane == 0) {
        bytes[blockIdx.x] = n;  // trips: fifth_count
        cyc[blockIdx.x * 5 + 4] = t1 - t0;
      }
      return;
    }
    const long long t0 = clock64();
    unsigned long long copied = 0;
    unsigned i = 0;
    // alone: as many copies as the LDSM warps' trips would see beside them, then stop by count
    const unsigned stop_after = alone ? unsigned(trips) * 4u : 0xffffffffu;
    if (bulk) {
      if (lane == 0) {
        auto wait = [&](unsigned slot, unsigned parity) {
          asm volatile("{\n\t.reg .pred P;\nW:\n\tmbarrier.try_wait.parity.shared::cta.b64 P, [%0], %1;\n\t@!P bra W;\n\t}"
                       ::"r"(sa(&full[slot])), "r"(parity) : "memory");
        };
        for (; !done && i < stop_after; ++i) {
          const unsigned slot = i % kRing;
          if (i >= kRing) wait(slot, (i / kRing - 1) & 1);
          asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(sa(&full[slot])), "r"(kCopyBytes) : "memory");
          asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                       ::"r"(sa(ring + slot * kCopyBytes)), "l"(src + size_t(i % kSrcCopies) * kCopyBytes), "r"(kCopyBytes),
                       "r"(sa(&full[slot])) : "memory");
        }
        for (unsigned j = i > kRing ? i - kRing : 0; j < i; ++j) wait(j % kRing, (j / kRing) & 1);
      }
    } else {
      for (; !done && i < stop_after; ++i) {
        const unsigned slot = i % kRing;
#pragma unroll
        for (int c = 0; c < kCopyBytes / 16 / 32; ++c) {
          const int off = (c * 32 + lane) * 16;
          asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(sa(ring + slot * kCopyBytes + off)),
                       "l"(src + size_t(i % kSrcCopies) * kCopyBytes + off) : "memory");
        }
        asm volatile("cp.async.commit_group;" ::: "memory");
        asm volatile("cp.async.wait_group 3;" ::: "memory");
      }
      asm volatile("cp.async.wait_group 0;" ::: "memory");
    }
    __syncwarp();
    const long long t1 = clock64();
    copied = (unsigned long long)i * kCopyBytes;
    if (lane == 0) {
      bytes[blockIdx.x] = copied;
      if (alone) cyc[blockIdx.x * 5 + 4] = t1 - t0;
    }
    return;
  }
  if (alone) return;
  uint32_t base[kLdsmPerTrip], r = 0;
  for (int c = 0; c < kLdsmPerTrip; ++c) base[c] = sa(ldsm_region + c * 32 * 128 + lane * 128);  // rows 128 B apart: 8-way
  const long long t0 = clock64();
  for (int t = 0; t < trips; ++t) {
    const uint32_t z = zero * uint32_t(t * 64);  // 0 at run time: keeps ptxas from merging the trips' LDSMs
#pragma unroll
    for (int c = 0; c < kLdsmPerTrip; ++c) {
      uint32_t d0, d1, d2, d3;
      asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                   : "=r"(d0), "=r"(d1), "=r"(d2), "=r"(d3) : "r"(base[c] ^ (z + zero * uint32_t(c + 1))));
      r ^= d0 ^ d1 ^ d2 ^ d3;
    }
  }
  const long long t1 = clock64();
  out[blockIdx.x * blockDim.x + threadIdx.x] = r;
  __syncwarp();
  if (lane == 0) {
    cyc[blockIdx.x * 5 + warp] = t1 - t0;
    atomicAdd((int*)&done, 1);
  }
}

using Fn = void (*)(int, uint32_t, const char*, unsigned*, long long*, unsigned long long*);
Fn pick(int m) {
  switch (m) {
    case kNone: return port_share<kNone>;
    case kBulk: return port_share<kBulk>;
    case kLdgsts: return port_share<kLdgsts>;
    case kBulkAlone: return port_share<kBulkAlone>;
    case kLdgstsAlone: return port_share<kLdgstsAlone>;
    case kFence: return port_share<kFence>;
    default: return port_share<kS2r>;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int sms = sm_count();
  char* src;
  CK(cudaMalloc(&src, size_t(kSrcCopies) * kCopyBytes));
  CK(cudaMemset(src, 1, size_t(kSrcCopies) * kCopyBytes));
  unsigned* dout;
  long long* dcyc;
  unsigned long long* dbytes;
  CK(cudaMalloc(&dout, size_t(sms) * 160 * sizeof(unsigned)));
  CK(cudaMalloc(&dcyc, size_t(sms) * 5 * sizeof(long long)));
  CK(cudaMalloc(&dbytes, size_t(sms) * sizeof(unsigned long long)));
  const int smem = 8 * 32 * 128 + kRing * kCopyBytes;
  FILE* f = open_csv(argc, argv, "port_share.csv",
                     "mode,trips,ldsm_cycles_median,ldsm_wavefronts_per_cycle,fifth_count_median,fifth_cycles_median,copy_bytes_per_cycle");
  for (int m = 0; m < kModes; ++m) {
    CK(cudaFuncSetAttribute(pick(m), cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    const int trips = 512;
    std::vector<long long> lc, cc;
    std::vector<unsigned long long> by;
    for (int r = 0; r <= kReps; ++r) {
      CK(cudaMemset(dcyc, 0, size_t(sms) * 5 * sizeof(long long)));
      CK(cudaMemset(dbytes, 0, size_t(sms) * sizeof(unsigned long long)));
      pick(m)<<<sms, 160, smem>>>(trips, 0u, src, dout, dcyc, dbytes);
      CK_LAUNCH();
      if (r == 0) continue;  // the first launch brings the source into L2
      std::vector<long long> cyc(size_t(sms) * 5);
      std::vector<unsigned long long> b(sms);
      CK(cudaMemcpy(cyc.data(), dcyc, cyc.size() * sizeof(long long), cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(b.data(), dbytes, b.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
      for (int s = 0; s < sms; ++s) {
        for (int w = 0; w < 4; ++w)
          if (cyc[s * 5 + w]) lc.push_back(cyc[s * 5 + w]);
        if (cyc[s * 5 + 4]) cc.push_back(cyc[s * 5 + 4]);
        by.push_back(b[s]);
      }
    }
    const double ldsm_cycles = median(lc), count = median(by);
    const double copy_cycles = cc.empty() ? ldsm_cycles : median(cc);
    const double wf = ldsm_cycles > 0 ? 4.0 * trips * kLdsmPerTrip * 32 / ldsm_cycles : 0;
    const bool copies = m != kFence && m != kS2r;
    ROW(f, "%s,%d,%.1f,%.3f,%.0f,%.1f,%.2f\n", kModeName[m], trips, ldsm_cycles, wf, count, copy_cycles,
        copies && copy_cycles > 0 ? count / copy_cycles : 0);
  }
  fclose(f);
  return 0;
}

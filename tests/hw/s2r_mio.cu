// What a special-register read (S2R) or a constant load by register index (LDC) costs a warp while
// other warps keep the shared-memory path busy with ldmatrix: the warp-specialised GEMM's consumers
// re-read SR_LANEID (and, at S = 2 and 4, SR_TID.X and the parameter R) every k-tile, and ncu's
// sampling puts 80-125 cycles at the reader of each such S2R, where an idle S2R takes ~35
// (traces/h100/README.md, validation_pcsamp, session 16).
//
// One timed warp per scheduler (warps 0-3) runs a loop (not unrolled) whose trip is one probe and
// an IMAD that reads it, so the next trip's probe issues only after this one's value is back:
//   alu     no probe: the IMAD reads the last trip's value (the loop's own cost)
//   smid    S2R SR_VIRTUALSMID (mov.u32 %smid: volatile in PTX, so ptxas reads it every trip;
//           %laneid and %tid.x, which are not, it hoists out of the loop, and %clock is CS2R.32)
//   warpid  S2R SR_VIRTID (mov.u32 %warpid, volatile too)
//   ldc     LDC of a __constant__ word at an index from the last trip's value
//   fence   fence.proxy.async.shared::cta (MEMBAR.ALL.CTA, FENCE.VIEW.ASYNC.S), then the IMAD on the
//           last trip's value: what the GEMM consumers' fence waits for beside the other warps' LDSMs
//   shfl    shfl.sync.idx of the last trip's value (SHFL.IDX)
//   arrive  mbarrier.arrive on a warp-private shared barrier (count 2^20 - 1, never completing), the
//           IMAD reading its state (SYNCS.ARRIVE.TRANS64 and its token)
//   test    mbarrier.test_wait.parity on a barrier whose phase 0 completed at the start (SYNCS.PHASECHK,
//           answering at once), the IMAD reading its predicate
// while L load warps per scheduler (0, 1 or 3; warps 4 on) stream until the timed warps are done:
//   none    no load warps
//   ldsm8   eight independent ldmatrix .x4 a trip, rows 128 bytes apart (8-way: 32 wavefronts each,
//           as the GEMM's B fragments)
//   ldsm1   the same, rows 16 bytes apart (conflict-free: 4 wavefronts each)
//   lds     eight independent 4-byte LDS a trip (one wavefront each)
// One block per SM on every SM; the slope between 1024 and 8192 trips is one trip. A probe whose
// SASS shows it hoisted out of the loop would read as alu (s2r_mio.sass, beside the CSV, shows
// each loop).
//
// Usage: s2r_mio OUTDIR -> OUTDIR/s2r_mio.csv
#include "common.cuh"

namespace {

constexpr int kReps = 5;
enum Probe { kAlu, kSmid, kWarpid, kLdc, kFence, kShfl, kArrive, kTest, kProbes };
const char* const kProbeName[] = {"alu", "smid", "warpid", "ldc", "fence", "shfl", "arrive", "test"};
enum Load { kNone, kLdsm8, kLdsm1, kLds, kLoads };
const char* const kLoadName[] = {"none", "ldsm8", "ldsm1", "lds"};

__constant__ uint32_t c_table[64];

__device__ __forceinline__ uint32_t smem_addr(const void* p) { return uint32_t(__cvta_generic_to_shared(p)); }

template <int kProbe>
__device__ __forceinline__ uint32_t probe(uint32_t last, uint32_t bar) {
  uint32_t v;
  if constexpr (kProbe == kAlu) v = last >> 7;
  else if constexpr (kProbe == kSmid) asm volatile("mov.u32 %0, %%smid;" : "=r"(v));
  else if constexpr (kProbe == kWarpid) asm volatile("mov.u32 %0, %%warpid;" : "=r"(v));
  else if constexpr (kProbe == kLdc) v = c_table[last & 63];
  else if constexpr (kProbe == kFence) {
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    v = last >> 7;
  } else if constexpr (kProbe == kShfl) {
    v = __shfl_sync(0xffffffffu, last, (last >> 3) & 31);
  } else if constexpr (kProbe == kArrive) {
    unsigned long long state;
    asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];" : "=l"(state) : "r"(bar) : "memory");
    v = uint32_t(state);
  } else {
    uint32_t ok;
    asm volatile("{\n\t.reg .pred P;\n\tmbarrier.test_wait.parity.shared::cta.b64 P, [%1], %2;\n\tselp.u32 %0, 1, 0, P;\n\t}"
                 : "=r"(ok) : "r"(bar), "r"(last & 0u) : "memory");
    v = ok;
  }
  return v;
}

template <int kProbe, int kLoad>
__global__ void __launch_bounds__(512) s2r_mio(int trips, uint32_t zero, unsigned* out, long long* cyc) {
  __shared__ __align__(128) unsigned char smem[8 * 32 * 128];
  __shared__ volatile int stop;
  __shared__ __align__(8) unsigned long long bars[16];  // per timed warp: arrive's (never completes), test's (phase 0 done)
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  if (threadIdx.x == 0) stop = 0;
  if (threadIdx.x < 4) {
    const uint32_t never = uint32_t(__cvta_generic_to_shared(&bars[threadIdx.x])), done = uint32_t(__cvta_generic_to_shared(&bars[8 + threadIdx.x]));
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(never), "r"((1 << 20) - 1));
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(done));
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(done) : "memory");
  }
  for (int i = threadIdx.x; i < int(sizeof smem / 4); i += blockDim.x) reinterpret_cast<uint32_t*>(smem)[i] = i;
  __syncthreads();
  if (warp < 4) {
    uint32_t acc = threadIdx.x + zero;
    const uint32_t bar = uint32_t(__cvta_generic_to_shared(&bars[kProbe == kTest ? 8 + warp : warp]));
    const long long t0 = clock64();
#pragma unroll 1
    for (int i = 0; i < trips; ++i) acc = acc * 3u + probe<kProbe>(acc, bar);
    const long long t1 = clock64();
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
    __syncwarp();
    if (lane == 0) {
      cyc[blockIdx.x * 4 + warp] = t1 - t0;
      atomicAdd((int*)&stop, 1);
    }
    return;
  }
  if constexpr (kLoad == kNone) return;
  constexpr int stride = kLoad == kLdsm8 ? 128 : 16;
  uint32_t base[8], r = 0, k = 0;
  for (int c = 0; c < 8; ++c)
    base[c] = kLoad == kLds ? smem_addr(smem + c * 128 + lane * 4) : smem_addr(smem + c * 32 * stride + lane * stride);
  while (stop < 4) {
    // the zero * ... term (0 at run time) keeps ptxas from merging a trip's eight loads into one
    const uint32_t z = zero * (k++ * 64u);
#pragma unroll
    for (int c = 0; c < 8; ++c) {
      const uint32_t a = base[c] ^ (z + zero * uint32_t(c + 1));
      if constexpr (kLoad == kLds) {
        uint32_t d;
        asm volatile("ld.shared.u32 %0, [%1];" : "=r"(d) : "r"(a));
        r ^= d;
      } else {
        uint32_t d0, d1, d2, d3;
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                     : "=r"(d0), "=r"(d1), "=r"(d2), "=r"(d3) : "r"(a));
        r ^= d0 ^ d1 ^ d2 ^ d3;
      }
    }
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = r;
}

using Fn = void (*)(int, uint32_t, unsigned*, long long*);
template <int P> Fn pick_load(int l) {
  switch (l) {
    case kNone: return s2r_mio<P, kNone>;
    case kLdsm8: return s2r_mio<P, kLdsm8>;
    case kLdsm1: return s2r_mio<P, kLdsm1>;
    default: return s2r_mio<P, kLds>;
  }
}
Fn pick(int p, int l) {
  switch (p) {
    case kAlu: return pick_load<kAlu>(l);
    case kSmid: return pick_load<kSmid>(l);
    case kWarpid: return pick_load<kWarpid>(l);
    case kLdc: return pick_load<kLdc>(l);
    case kFence: return pick_load<kFence>(l);
    case kShfl: return pick_load<kShfl>(l);
    case kArrive: return pick_load<kArrive>(l);
    default: return pick_load<kTest>(l);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int sms = sm_count();
  uint32_t table[64];
  for (int i = 0; i < 64; ++i) table[i] = i * 2654435761u;
  CK(cudaMemcpyToSymbol(c_table, table, sizeof table));
  unsigned* dout;
  long long* dcyc;
  CK(cudaMalloc(&dout, size_t(sms) * 512 * sizeof(unsigned)));
  CK(cudaMalloc(&dcyc, size_t(sms) * 4 * sizeof(long long)));
  FILE* f = open_csv(argc, argv, "s2r_mio.csv",
                     "probe,load,load_warps_per_scheduler,trips_low,trips_high,cycles_low,cycles_high,cycles_per_trip");
  for (int p = 0; p < kProbes; ++p)
    for (int l = 0; l < kLoads; ++l)
      for (int lw : {0, 1, 3}) {
        if ((l == kNone) != (lw == 0)) continue;
        const int bs = 128 * (1 + lw);
        const int ts[2] = {1024, 8192};
        double c[2];
        for (int t = 0; t < 2; ++t) {
          std::vector<long long> all;
          for (int r = 0; r < kReps; ++r) {
            pick(p, l)<<<sms, bs>>>(ts[t], 0u, dout, dcyc);
            CK_LAUNCH();
            std::vector<long long> cyc(size_t(sms) * 4);
            CK(cudaMemcpy(cyc.data(), dcyc, cyc.size() * sizeof(long long), cudaMemcpyDeviceToHost));
            all.insert(all.end(), cyc.begin(), cyc.end());
          }
          c[t] = median(all);
        }
        ROW(f, "%s,%s,%d,%d,%d,%.1f,%.1f,%.3f\n", kProbeName[p], kLoadName[l], lw, ts[0], ts[1], c[0], c[1],
            (c[1] - c[0]) / (ts[1] - ts[0]));
      }
  fclose(f);
  return 0;
}

// What an IMAD.WIDE costs the scheduler beside other pipes' instructions.
//
// iclass.csv's IMAD.WIDE row times IMAD.WIDE + IADD3 + IADD3.X (ptxas adds its 64-bit addend apart):
// 6 cycles a step a scheduler at any number of warps, where the ALU pipe alone needs 4.  This loop
// times a 64-bit product that keeps its own addend (mad.wide.u32 d, hi(d), q, d: one IMAD.WIDE.U32
// with a register-pair addend, as the examples' 64-bit `% 3` has), alone and interleaved with 1 or 2
// LOP3 (ALU pipe), FFMA (FMA pipe) or IMAD (the FMA-heavy pipe IMAD.WIDE shares), 8 independent
// chains a warp (throughput) or 1 (latency), at 1, 2, 4 and 8 warps a scheduler (one block a SM of
// 128 x W threads).  No clock read inside the timed loop.  What it settles: whether the cycles an
// IMAD.WIDE adds are the whole scheduler's (nothing dispatches, whatever its pipe), one pipe's, or
// the issuing warp's own.
//
// Build: nvcc -O3 -std=c++17 -arch=sm_90 -lineinfo tests/hw/imad_wide.cu -o hwbin/imad_wide
// Run:   ./hwbin/imad_wide OUTDIR   (writes OUTDIR/imad_wide.csv; cuobjdump -sass checks the loop)
#include "common.cuh"

#include <utility>

constexpr int kSteps = 32;  // unrolled steps a trip, each over the chains
constexpr int kTrips = 256;

template <class F, int... I>
__device__ __forceinline__ void static_for_impl(F&& f, std::integer_sequence<int, I...>) {
  (f(std::integral_constant<int, I>{}), ...);
}
template <int N, class F>
__device__ __forceinline__ void static_for(F&& f) {
  static_for_impl(f, std::make_integer_sequence<int, N>{});
}
#define CV(v) (decltype(v)::value)

// MODE: 0 W, 1 W+A, 2 W+2A, 3 W+F, 4 W+2F, 5 W+I, 6 2A alone, 7 2F alone; ptxas splits each W's
// 64-bit addend into IADD3 + IADD3.X (or IMAD.X), so a W step is three instructions.  8-13: P, the
// product of the chain's own two halves (mul.wide.u32 d, hi(d), lo(d): one IMAD.WIDE.U32 with no
// addend, both halves live), alone and with A, 2A, F, I, and I with no W (8 P, 9 P+A, 10 P+2A,
// 11 P+F, 12 P+I, 13 2I).
template <int MODE, int C>
__global__ void __launch_bounds__(1024, 1) wide_loop(const uint32_t* qin, uint32_t* out, long long* cycles) {
  __shared__ long long slowest;
  uint32_t q[4];
  for (int i = 0; i < 4; ++i) q[i] = qin[i];
  float fq[4];
  for (int i = 0; i < 4; ++i) fq[i] = __int_as_float(0x3f800000 + (qin[i] & 0xff));
  unsigned long long d[C];
  uint32_t x[C];
  float f[C];
  static_for<C>([&](auto c) {
    d[CV(c)] = (unsigned long long)(threadIdx.x + CV(c) + 3) << 32 | (0x9e3779b9u ^ threadIdx.x);
    x[CV(c)] = threadIdx.x * 3 + CV(c);
    f[CV(c)] = float(threadIdx.x + CV(c));
  });
  if (threadIdx.x == 0) slowest = 0;
  __syncthreads();
  const long long t0 = clock64();
#pragma unroll 1
  for (int t = 0; t < kTrips; ++t) {
    static_for<kSteps>([&](auto j) {
      static_for<C>([&](auto c) {
        const uint32_t a = q[CV(j) % 4], b = q[(CV(j) + 1) % 4];
        if (MODE >= 8 && MODE <= 12)
          asm volatile("{\n\t.reg .u32 lo, hi;\n\tmov.b64 {lo, hi}, %0;\n\tmul.wide.u32 %0, hi, lo;\n\t}" : "+l"(d[CV(c)]));
        if (MODE == 9 || MODE == 10)
          asm volatile("lop3.b32 %0, %0, %1, %2, 0x6a;" : "+r"(x[CV(c)]) : "r"(a), "r"(b));
        if (MODE == 10)
          asm volatile("lop3.b32 %0, %0, %1, %2, 0x96;" : "+r"(x[CV(c)]) : "r"(b), "r"(a));
        if (MODE == 11)
          asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(f[CV(c)]) : "f"(fq[CV(j) % 4]), "f"(fq[(CV(j) + 1) % 4]));
        if (MODE == 12 || MODE == 13)
          asm volatile("mad.lo.u32 %0, %0, %1, %2;" : "+r"(x[CV(c)]) : "r"(a), "r"(b));
        if (MODE == 13)
          asm volatile("mad.lo.u32 %0, %0, %1, %2;" : "+r"(x[CV(c)]) : "r"(b), "r"(a));
        if (MODE <= 5)
          asm volatile("{\n\t.reg .u32 lo, hi;\n\tmov.b64 {lo, hi}, %0;\n\tmad.wide.u32 %0, hi, %1, %0;\n\t}"
                       : "+l"(d[CV(c)]) : "r"(a));
        if (MODE == 1 || MODE == 2 || MODE == 6)
          asm volatile("lop3.b32 %0, %0, %1, %2, 0x6a;" : "+r"(x[CV(c)]) : "r"(a), "r"(b));
        if (MODE == 2 || MODE == 6)
          asm volatile("lop3.b32 %0, %0, %1, %2, 0x96;" : "+r"(x[CV(c)]) : "r"(b), "r"(a));
        if (MODE == 3 || MODE == 4 || MODE == 7)
          asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(f[CV(c)]) : "f"(fq[CV(j) % 4]), "f"(fq[(CV(j) + 1) % 4]));
        if (MODE == 4 || MODE == 7)
          asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(f[CV(c)]) : "f"(fq[(CV(j) + 2) % 4]), "f"(fq[(CV(j) + 3) % 4]));
        if (MODE == 5)
          asm volatile("mad.lo.u32 %0, %0, %1, %2;" : "+r"(x[CV(c)]) : "r"(a), "r"(b));
      });
    });
  }
  const long long t1 = clock64();
  atomicMax((unsigned long long*)&slowest, (unsigned long long)(t1 - t0));
  __syncthreads();
  if (threadIdx.x == 0) cycles[blockIdx.x] = slowest;
  unsigned long long s = 0;
  static_for<C>([&](auto c) { s += d[CV(c)] ^ x[CV(c)] ^ __float_as_uint(f[CV(c)]); });
  out[blockIdx.x * blockDim.x + threadIdx.x] = uint32_t(s ^ (s >> 32));
}

static const char* const kModes[] = {"W", "W+A", "W+2A", "W+F", "W+2F", "W+I", "2A", "2F",
                                     "P", "P+A", "P+2A", "P+F", "P+I", "2I"};

template <int MODE, int C>
static void run(FILE* csv, int sms, const uint32_t* q, uint32_t* out, long long* dcyc) {
  std::vector<long long> all;
  for (int w : {1, 2, 4, 8}) {
    all.clear();
    for (int rep = 0; rep < 3; ++rep) {
      wide_loop<MODE, C><<<sms, 128 * w>>>(q, out, dcyc);
      CK_LAUNCH();
      std::vector<long long> c(sms);
      CK(cudaMemcpy(c.data(), dcyc, sms * sizeof(long long), cudaMemcpyDeviceToHost));
      all.insert(all.end(), c.begin(), c.end());
    }
    const double med = median(all);
    const double steps = double(kTrips) * kSteps * C;  // a warp's steps
    ROW(csv, "%s,%d,%d,%d,%.1f,%.3f\n", kModes[MODE], C, w, int(steps), med, med / steps / w);
  }
}

int main(int argc, char** argv) {
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  uint32_t hq[4] = {0x9e3779b9u, 0x85ebca6bu, 0xc2b2ae35u, 0x27d4eb2fu}, *q, *out;
  long long* dcyc;
  CK(cudaMalloc(&q, sizeof hq));
  CK(cudaMemcpy(q, hq, sizeof hq, cudaMemcpyHostToDevice));
  CK(cudaMalloc(&out, sms * 1024 * sizeof(uint32_t)));
  CK(cudaMalloc(&dcyc, sms * sizeof(long long)));
  FILE* csv = open_csv(argc, argv, "imad_wide.csv",
                       "mode,chains,warps_per_scheduler,steps_per_warp,cycles_median,cycles_per_step_per_scheduler");
  run<0, 1>(csv, sms, q, out, dcyc);
  run<1, 1>(csv, sms, q, out, dcyc);
  run<0, 8>(csv, sms, q, out, dcyc);
  run<1, 8>(csv, sms, q, out, dcyc);
  run<2, 8>(csv, sms, q, out, dcyc);
  run<3, 8>(csv, sms, q, out, dcyc);
  run<4, 8>(csv, sms, q, out, dcyc);
  run<5, 8>(csv, sms, q, out, dcyc);
  run<6, 8>(csv, sms, q, out, dcyc);
  run<7, 8>(csv, sms, q, out, dcyc);
  run<8, 1>(csv, sms, q, out, dcyc);
  run<8, 8>(csv, sms, q, out, dcyc);
  run<9, 8>(csv, sms, q, out, dcyc);
  run<10, 8>(csv, sms, q, out, dcyc);
  run<11, 8>(csv, sms, q, out, dcyc);
  run<12, 8>(csv, sms, q, out, dcyc);
  run<13, 8>(csv, sms, q, out, dcyc);
  fclose(csv);
  return 0;
}

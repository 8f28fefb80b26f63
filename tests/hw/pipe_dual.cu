// Which pipe an integer instruction without a pipe in its encoding (MOV, CS2R, I2FP, and LEA,
// IADD3 beside IMAD) issues to: each test interleaves it with LOP3, which only the ALU pipe runs,
// in eight independent chains per warp. With W warps per scheduler and both pipes free to take
// one instruction every other cycle (iclass.csv), a pair of an ALU-only LOP3 and an X that the
// FMA-heavy pipe takes issues in ~2 cycles a pair per scheduler; if X also needs the ALU pipe
// the pair takes ~4. `ncu_pipes.sh`'s metrics over this binary say the same per pipe.
//
// Tests (one step of one chain; x, y 32-bit, y loop-invariant but unknown to ptxas):
//   alu       x = rotate(x, 1); x = x ^ y                    SHF beside LOP3, both ALU only: the reference for 4
//   imad      x = x * y + 1; x = x ^ y                       IMAD beside LOP3: the reference for 2
//   i2fp      x = bits(float(x)); x = x ^ y                  I2FP.U32 beside LOP3
//   cs2r      x = x ^ low(clock64); x = x ^ y               CS2R SR_CLOCKLO beside LOP3 (the two xors may fold into one)
//   lea       x = (x << 2) + y; x = x ^ y                    LEA beside LOP3
//   add       x = x + y; x = x ^ y                           IADD3 (or ptxas's IMAD.IADD) beside LOP3
// The SASS of each loop is checked by the caller (cuobjdump); the CSV gives the loop's cycles
// per instruction per scheduler at W = 1, 2, 4 and 8.
//
// Usage: pipe_dual OUTDIR -> OUTDIR/pipe_dual.csv
//        pipe_dual OUTDIR ncu -> one launch per test at W = 1 and 8, for ncu's pipe counts
#include "common.cuh"

namespace {

int kReps = 3;
constexpr int kTrips = 128;
constexpr int kSteps = 8;   // steps per trip, each over kChains chains, two instructions each
constexpr int kChains = 8;

enum Test { ALU, IMAD, I2FP, CS2R, LEA, ADD, kTests };
const char* kNames[kTests] = {"alu", "imad", "i2fp", "cs2r", "lea", "add"};

template <int T>
__device__ __forceinline__ void step(uint32_t& x, uint32_t y, uint32_t p) {
  if constexpr (T == ALU) {
    asm volatile("shf.l.wrap.b32 %0, %0, %0, 1;" : "+r"(x));
    asm volatile("xor.b32 %0, %0, %1;" : "+r"(x) : "r"(y));
  } else if constexpr (T == IMAD) {
    asm volatile("mad.lo.u32 %0, %0, %1, 1;" : "+r"(x) : "r"(y));
    asm volatile("xor.b32 %0, %0, %1;" : "+r"(x) : "r"(y));
  } else if constexpr (T == I2FP) {
    asm volatile("{ .reg .f32 f; cvt.rn.f32.u32 f, %0; mov.b32 %0, f; }" : "+r"(x));
    asm volatile("xor.b32 %0, %0, %1;" : "+r"(x) : "r"(y));
  } else if constexpr (T == CS2R) {
    asm volatile("{ .reg .u64 c; .reg .u32 lo, hi; mov.u64 c, %%clock64; mov.b64 {lo, hi}, c; xor.b32 %0, %0, lo; }"
                 : "+r"(x));
    asm volatile("xor.b32 %0, %0, %1;" : "+r"(x) : "r"(y));
  } else if constexpr (T == LEA) {
    asm volatile("{ .reg .u32 t; shl.b32 t, %0, 2; add.u32 %0, t, %1; }" : "+r"(x) : "r"(y));
    asm volatile("xor.b32 %0, %0, %1;" : "+r"(x) : "r"(y));
  } else {
    asm volatile("add.u32 %0, %0, %1;" : "+r"(x) : "r"(y));
    asm volatile("xor.b32 %0, %0, %1;" : "+r"(x) : "r"(p));
  }
}

template <int T>
__global__ void dual_kernel(uint32_t y, uint32_t p, uint32_t* out, long long* cycles) {
  uint32_t x[kChains];
#pragma unroll
  for (int c = 0; c < kChains; ++c) x[c] = threadIdx.x + c;
  __syncthreads();
  const long long t0 = clock64();
  for (int i = 0; i < kTrips; ++i) {
#pragma unroll
    for (int s = 0; s < kSteps; ++s)
#pragma unroll
      for (int c = 0; c < kChains; ++c) step<T>(x[c], y, p);
  }
  const long long t1 = clock64();
  uint32_t acc = 0;
#pragma unroll
  for (int c = 0; c < kChains; ++c) acc ^= x[c];
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
  if (threadIdx.x % 32 == 0) cycles[blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32] = t1 - t0;
}

template <int T>
double run(int sms, int warps_per_scheduler, uint32_t* dout, long long* dcycles) {
  const int threads = 4 * 32 * warps_per_scheduler, warps = threads / 32;
  std::vector<long long> h(size_t(sms) * warps);
  std::vector<double> slowest;
  for (int r = 0; r <= kReps; ++r) {
    dual_kernel<T><<<sms, threads>>>(3u, 0u, dout, dcycles);
    CK_LAUNCH();
    if (r == 0 && kReps > 0) continue;  // warm-up
    CK(cudaMemcpy(h.data(), dcycles, h.size() * sizeof(long long), cudaMemcpyDeviceToHost));
    for (int b = 0; b < sms; ++b) {
      long long m = 0;
      for (int w = 0; w < warps; ++w) m = std::max(m, h[size_t(b) * warps + w]);
      slowest.push_back(double(m));
    }
  }
  return median(slowest);
}

template <int T>
void rows(FILE* f, int sms, uint32_t* dout, long long* dcycles) {
  const double per_warp = double(kTrips) * kSteps * kChains * 2;  // class instructions per warp
  for (int W : {1, 2, 4, 8}) {
    if (kReps == 0 && (W == 2 || W == 4)) continue;
    const double c = run<T>(sms, W, dout, dcycles);
    ROW(f, "%s,%d,%.0f,%.0f,%.3f\n", kNames[T], W, per_warp, c, c / (per_warp * W));
  }
}

}  // namespace

int main(int argc, char** argv) {
  FILE* f = open_csv(argc, argv, "pipe_dual.csv",
                     "test,warps_per_scheduler,instructions_per_warp,cycles_median,cycles_per_instruction_per_scheduler");
  const int sms = sm_count();
  if (argc > 2 && std::string(argv[2]) == "ncu") kReps = 0;
  uint32_t* dout;
  long long* dcycles;
  CK(cudaMalloc(&dout, size_t(sms) * 1024 * sizeof(uint32_t)));
  CK(cudaMalloc(&dcycles, size_t(sms) * 32 * sizeof(long long)));
  rows<ALU>(f, sms, dout, dcycles);
  rows<IMAD>(f, sms, dout, dcycles);
  rows<I2FP>(f, sms, dout, dcycles);
  rows<CS2R>(f, sms, dout, dcycles);
  rows<LEA>(f, sms, dout, dcycles);
  rows<ADD>(f, sms, dout, dcycles);
  fclose(f);
  return 0;
}

// Issue interval and latency of each instruction class of isa/lower.h (ICLASS_LIST), for the
// issue core's iclass_<name>_interval / iclass_<name>_latency constants.
//
// Every benchmark times one long loop of ONE kind of SASS instruction: each loop trip is 256
// of them (kPerTrip), written as inline PTX with data dependences so that ptxas can neither
// fold, hoist nor dedupe them (tests/hw/run_calib.sh checks the SASS of every timed loop and
// writes what it found into check.txt). clock64() is read once before and once after the loop;
// nothing is subtracted. Modes:
//
//   dep    one dependent chain per warp (chains = 1): at 1 warp per scheduler the cycles per
//          instruction are the latency. Where the instruction has no input to chain through
//          (stores, cp.async, commit/wait, mbarrier arrive, S2R, BAR) it is the same
//          instruction back to back in one warp, on one address.
//   indep  `chains` independent chains (or addresses) interleaved per warp: once the pipe
//          saturates, the scheduler's issue interval is cycles / (instructions_per_warp * W).
//
// W = warps per scheduler = 1, 2, 4, 8, 16: a block of 4W warps, one block per SM on every SM.
// A block cannot hold 64 warps, so W = 16 is two blocks of 1024 threads per SM; the two start
// their loops at the same SM clock (a per-SM rendezvous in global memory, then a spin to a
// common clock64() target). Mode indep_1warp: the indep loop with one warp on the whole SM.
// cycles_median is the SM's loop time, i.e. its slowest warp's t1 - t0 (all warps start together
// after a __syncthreads), median over SMs and launches; warp 0's time (the schedulers favour it,
// so it finishes early at saturation) and the fastest warp's are printed beside it in the log.
// Known limit: where one block alone saturates a scheduler's issue (FFMA, DEPBAR), some warps of
// the second block at W = 16 read their start clock late and the slowest warp's t1 - t0 misses
// that time (traces/h100/README.md: use W <= 8 there); absolute start/end clocks would fix it.
//
// Usage: iclass OUTDIR  ->  iclass.csv   (ICLASS_ONLY=ldsm,mma: only the classes named)
#include <cuda_fp16.h>
#include <type_traits>
#include <utility>
#include "common.cuh"

namespace {

constexpr int kReps = 3;          // timed launches per configuration (after one warm-up launch)
constexpr int kPerTrip = 256;     // class instructions per loop trip
constexpr int kTrips = 32;        // loop trips: 8192 class instructions per warp
constexpr int kSmemBytes = 40 * 1024;
constexpr int kMaxWarps = 32;     // per block
constexpr uint32_t kSrcRegion = 1u << 20;        // cp.async source: 1 MiB swept, L2-resident
constexpr uint32_t kSrcPad = 256 * 512;          // one trip of 16-byte copies past the end

struct Params {
  uint32_t q[4];         // run-time integer operands (the compiler cannot fold them)
  float f[4];            // run-time float operands
  int trips;             // loop trips
  int inner;             // BRA loop count; inner-loop count of the BSSY arms
  int flag;              // BSSY: 1 = odd lanes take the if-arm (divergent), 0 = converged
  int zero;              // 0
  unsigned long long* gchase;  // LDG: self-pointers, [block][warp][chain][lane]
  uint32_t* gstore;            // STG targets, [block][warp][chain][lane]
  const char* gsrc;            // cp.async source (kSrcRegion + kSrcPad bytes)
  uint32_t* out;               // results, keeps every chain alive
  long long* cycles;           // [block][warp] loop cycles
  int* smid;                   // [block] the SM it ran on
  unsigned* rv_count;          // W = 16 rendezvous, per SM id
  long long* rv_target;
  int blocks_per_sm;
  int* err;
  int* late;           // blocks that reached the common start after it had passed
  long long* start;    // [block] warp 0's clock64() at the start of the timed loop
};

// ---------------------------------------------------------------- helpers

template <class F, int... I>
__device__ __forceinline__ void static_for_impl(F&& f, std::integer_sequence<int, I...>) {
  (f(std::integral_constant<int, I>{}), ...);
}
template <int N, class F>
__device__ __forceinline__ void static_for(F&& f) {
  static_for_impl(f, std::make_integer_sequence<int, N>{});
}

#define CV(v) (decltype(v)::value)

// Steps of one trip: S steps, each over C chains (S * C * per-step instructions = kPerTrip).
template <int S, int C, class F>
__device__ __forceinline__ void steps(F&& f) {
  static_for<S>([&](auto j) { static_for<C>([&](auto c) { f(j, c); }); });
}

__device__ __forceinline__ uint32_t smem_addr(const void* p) { return uint32_t(__cvta_generic_to_shared(p)); }
__device__ __forceinline__ int lane_id() { return threadIdx.x & 31; }
__device__ __forceinline__ int warp_id() { return threadIdx.x >> 5; }
__device__ __forceinline__ int gtid() { return blockIdx.x * blockDim.x + threadIdx.x; }

// All warps of the block (and, at two blocks per SM, of both blocks) leave here together.
__device__ void start_together(const Params& p) {
  if (p.blocks_per_sm > 1 && threadIdx.x == 0) {
    unsigned smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    volatile long long* tgt = p.rv_target + smid;
    const unsigned old = atomicAdd(&p.rv_count[smid], 1u);
    long long target = 0;
    if (old + 1 == unsigned(p.blocks_per_sm)) {
      // The last block to arrive sets the start, 5000 cycles ahead (a poll from L2 takes
      // well under that); a plain volatile store, no fence (a fence can take longer).
      target = clock64() + 5000;
      *tgt = target;
    } else {
      const long long t = clock64();
      while ((target = *tgt) == 0) {
        if (clock64() - t > 40000000) { atomicAdd(p.err, 1); break; }
      }
    }
    if (target && clock64() > target) atomicAdd(p.late, 1);  // saw the start too late
    if (target) while (clock64() < target) {}
  }
  __syncthreads();
  if (threadIdx.x == 0) p.start[blockIdx.x] = clock64();
}

// ---------------------------------------------------------------- the instruction classes
// Each Op: setup (untimed), trip<C>() (the timed loop body: kPerTrip class instructions),
// finish (untimed). x[] are the chains.

// alu: IADD3 x = x + a + b (a, b rotate over four run-time values).
struct OpIadd3 {
  uint32_t x[8], q[4];
  __device__ void setup(const Params& p, unsigned char*) {
    for (int i = 0; i < 4; ++i) q[i] = p.q[i];
    for (int c = 0; c < 8; ++c) x[c] = threadIdx.x + c;
  }
  template <int C> __device__ __forceinline__ void trip(const Params&) {
    steps<kPerTrip / C, C>([&](auto j, auto c) {
      asm volatile("add.s32 %0, %0, %1;\n\tadd.s32 %0, %0, %2;" : "+r"(x[CV(c)]) : "r"(q[CV(j) % 4]), "r"(q[(CV(j) + 1) % 4]));
    });
  }
  __device__ void finish(const Params& p) { uint32_t s = 0; for (int c = 0; c < 8; ++c) s += x[c]; p.out[gtid()] = s; }
};

// alu: LOP3 x = (x & a) ^ b.
struct OpLop3 : OpIadd3 {
  template <int C> __device__ __forceinline__ void trip(const Params&) {
    steps<kPerTrip / C, C>([&](auto j, auto c) {
      asm volatile("lop3.b32 %0, %0, %1, %2, 0x6a;" : "+r"(x[CV(c)]) : "r"(q[CV(j) % 4]), "r"(q[(CV(j) + 1) % 4]));
    });
  }
};

// imad: IMAD x = x * a + b.
struct OpImad : OpIadd3 {
  template <int C> __device__ __forceinline__ void trip(const Params&) {
    steps<kPerTrip / C, C>([&](auto j, auto c) {
      asm volatile("mad.lo.u32 %0, %0, %1, %2;" : "+r"(x[CV(c)]) : "r"(q[CV(j) % 4]), "r"(q[(CV(j) + 1) % 4]));
    });
  }
};

// imad: IMAD.WIDE.U32 d = hi(d) * a + base (64-bit result; its high half is the next input:
// with the low half ptxas narrows the chain to 32-bit IMADs; base is a loop-invariant 64-bit
// run-time value, as in an address computation).
struct OpImadWide {
  unsigned long long d[8], base;
  uint32_t q[4];
  __device__ void setup(const Params& p, unsigned char*) {
    for (int i = 0; i < 4; ++i) q[i] = p.q[i];
    for (int c = 0; c < 8; ++c) d[c] = threadIdx.x + c;
    base = reinterpret_cast<unsigned long long>(p.out);
  }
  template <int C> __device__ __forceinline__ void trip(const Params&) {
    steps<kPerTrip / C, C>([&](auto j, auto c) {
      asm volatile("{\n\t.reg .u32 lo, hi;\n\tmov.b64 {lo, hi}, %0;\n\tmad.wide.u32 %0, hi, %1, %2;\n\t}"
                   : "+l"(d[CV(c)]) : "r"(q[CV(j) % 4]), "l"(base));
    });
  }
  __device__ void finish(const Params& p) { unsigned long long s = 0; for (int c = 0; c < 8; ++c) s += d[c]; p.out[gtid()] = uint32_t(s ^ (s >> 32)); }
};

// fma: FFMA x = x * a + b.
struct OpFfma {
  float x[8], f[4];
  __device__ void setup(const Params& p, unsigned char*) {
    for (int i = 0; i < 4; ++i) f[i] = p.f[i];
    for (int c = 0; c < 8; ++c) x[c] = float(threadIdx.x + c);
  }
  template <int C> __device__ __forceinline__ void trip(const Params&) {
    steps<kPerTrip / C, C>([&](auto j, auto c) {
      asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(x[CV(c)]) : "f"(f[CV(j) % 4]), "f"(f[(CV(j) + 1) % 4]));
    });
  }
  __device__ void finish(const Params& p) { float s = 0; for (int c = 0; c < 8; ++c) s += x[c]; p.out[gtid()] = __float_as_uint(s); }
};

// conv: I2F then F2I (two conversions per step, the chain goes through both).
struct OpI2fF2i : OpIadd3 {
  template <int C> __device__ __forceinline__ void trip(const Params&) {
    steps<kPerTrip / 2 / C, C>([&](auto, auto c) {
      asm volatile("{\n\t.reg .f32 f;\n\tcvt.rn.f32.s32 f, %0;\n\tcvt.rzi.s32.f32 %0, f;\n\t}" : "+r"(x[CV(c)]));
    });
  }
};

// conv: MUFU.RSQ x = 1/sqrt(x).
// (Not rcp: ptxas folds rcp.approx(rcp.approx(x)) to x and deleted a whole chain of them.)
struct OpRsq : OpFfma {
  template <int C> __device__ __forceinline__ void trip(const Params&) {
    steps<kPerTrip / C, C>([&](auto, auto c) { asm volatile("rsqrt.approx.ftz.f32 %0, %0;" : "+f"(x[CV(c)])); });
  }
  __device__ void setup(const Params& p, unsigned char* s) { OpFfma::setup(p, s); for (int c = 0; c < 8; ++c) x[c] += 1.5f; }
};

// uniform: the IADD3 chain on values that are the same in every thread (kernel parameters
// only), for ptxas to place in the uniform datapath (UIADD3) if it will.
struct OpUniform : OpIadd3 {
  __device__ void setup(const Params& p, unsigned char*) {
    for (int i = 0; i < 4; ++i) q[i] = p.q[i];
    for (int c = 0; c < 8; ++c) x[c] = p.q[c % 4] + c;
  }
};

// s2r: two reads of %smid per step, summed into the chain by one IADD3. ptxas makes one of
// them S2R and the other S2UR (the uniform-datapath read); reads of constant special
// registers (%laneid, %tid) are merged into one by ptxas, so %smid (documented as volatile).
struct OpS2r : OpIadd3 {
  template <int C> __device__ __forceinline__ void trip(const Params&) {
    steps<kPerTrip / 2 / C, C>([&](auto, auto c) {
      asm volatile("{\n\t.reg .u32 a, b;\n\tmov.u32 a, %%smid;\n\tmov.u32 b, %%smid;\n\tadd.s32 %0, %0, a;\n\tadd.s32 %0, %0, b;\n\t}"
                   : "+r"(x[CV(c)]));
    });
  }
};

#define REP2(s) s s
#define REP4(s) REP2(s) REP2(s)
#define REP8(s) REP4(s) REP4(s)
#define REP7(s) REP4(s) REP2(s) s
#define REP32(s) REP8(s) REP8(s) REP8(s) REP8(s)
#define REP256(s) REP32(s) REP32(s) REP32(s) REP32(s) REP32(s) REP32(s) REP32(s) REP32(s)

// branch, dep: a uniform loop whose only work is its counter: per trip one taken BRA (plus the
// counter's IADD3 and ISETP). Runs p.inner trips in one call (p.trips = 1).
// branch, indep: the same loop unrolled 8 times, with an exit test after every decrement:
// per 8 trips 7 not-taken BRA and 1 taken BRA.
// kReg: the counter starts from a value that depends on threadIdx (p.zero = 0 at run time), so
// ptxas keeps it in a regular register (IADD3, ISETP on R) instead of the uniform datapath.
template <bool kReg>
struct OpBra {
  uint32_t x, n;
  __device__ void setup(const Params& p, unsigned char*) {
    x = threadIdx.x;
    n = kReg ? p.inner + (threadIdx.x & p.zero) : p.inner;
  }
  template <int C> __device__ __forceinline__ void trip(const Params& p) {
    if constexpr (C == 1) {
      asm volatile("{\n\t.reg .pred p;\n\t.reg .u32 c;\n\tmov.u32 c, %1;\n"
                   "BRA_DEP_LOOP:\n\tsub.u32 c, c, 1;\n\tsetp.ne.u32 p, c, 0;\n\t@p bra.uni BRA_DEP_LOOP;\n\t"
                   "add.u32 %0, %0, c;\n\t}"
                   : "+r"(x) : "r"(n));
    } else {
      asm volatile("{\n\t.reg .pred p;\n\t.reg .u32 c;\n\tmov.u32 c, %1;\n"
                   "BRA_IND_LOOP:\n\t"
                   REP7("sub.u32 c, c, 1;\n\tsetp.eq.u32 p, c, 0;\n\t@p bra.uni BRA_IND_DONE;\n\t")
                   "sub.u32 c, c, 1;\n\tsetp.ne.u32 p, c, 0;\n\t@p bra.uni BRA_IND_LOOP;\n"
                   "BRA_IND_DONE:\n\tadd.u32 %0, %0, c;\n\t}"
                   : "+r"(x) : "r"(n));
    }
  }
  __device__ void finish(const Params& p) { p.out[gtid()] = x; }
};

// branch: a divergent if/else per trip (odd lanes take the if-arm when p.flag = 1; with
// p.flag = 0 every lane takes the else-arm: the same SASS, converged). Each arm is a loop of
// p.inner trips (1) so that ptxas cannot if-convert it: ptxas closes the if/else with BSSY
// before the branch and BSYNC at the join.
struct OpBssy {
  uint32_t x[8], q[4];
  __device__ void setup(const Params& p, unsigned char*) {
    for (int i = 0; i < 4; ++i) q[i] = p.q[i];
    for (int c = 0; c < 8; ++c) x[c] = threadIdx.x + c;
  }
  template <int C> __device__ __forceinline__ void trip(const Params& p) {
    // The condition is recomputed by an asm volatile every trip, so that the compiler cannot
    // unswitch the loop on it (it is loop-invariant) and take the divergence out of the loop.
    uint32_t cond;
    asm volatile("and.b32 %0, %1, %2;" : "=r"(cond) : "r"(uint32_t(lane_id())), "r"(uint32_t(p.flag)));
    if (cond != 0) {
      if constexpr (C == 1)
        asm volatile("{\n\t.reg .pred q;\n\t.reg .u32 k;\n\tmov.u32 k, %3;\n"
                     "BSSY_T1:\n\tmad.lo.u32 %0, %0, %1, %2;\n\tsub.u32 k, k, 1;\n\tsetp.ne.u32 q, k, 0;\n\t@q bra.uni BSSY_T1;\n\t}"
                     : "+r"(x[0]) : "r"(q[0]), "r"(q[1]), "r"(p.inner));
      else
        asm volatile("{\n\t.reg .pred q;\n\t.reg .u32 k;\n\tmov.u32 k, %10;\n"
                     "BSSY_T8:\n\tmad.lo.u32 %0, %0, %8, %9;\n\tmad.lo.u32 %1, %1, %8, %9;\n\tmad.lo.u32 %2, %2, %8, %9;\n\t"
                     "mad.lo.u32 %3, %3, %8, %9;\n\tmad.lo.u32 %4, %4, %8, %9;\n\tmad.lo.u32 %5, %5, %8, %9;\n\t"
                     "mad.lo.u32 %6, %6, %8, %9;\n\tmad.lo.u32 %7, %7, %8, %9;\n\t"
                     "sub.u32 k, k, 1;\n\tsetp.ne.u32 q, k, 0;\n\t@q bra.uni BSSY_T8;\n\t}"
                     : "+r"(x[0]), "+r"(x[1]), "+r"(x[2]), "+r"(x[3]), "+r"(x[4]), "+r"(x[5]), "+r"(x[6]), "+r"(x[7])
                     : "r"(q[0]), "r"(q[1]), "r"(p.inner));
    } else {
      if constexpr (C == 1)
        asm volatile("{\n\t.reg .pred q;\n\t.reg .u32 k;\n\tmov.u32 k, %3;\n"
                     "BSSY_E1:\n\tmad.lo.u32 %0, %0, %1, %2;\n\tsub.u32 k, k, 1;\n\tsetp.ne.u32 q, k, 0;\n\t@q bra.uni BSSY_E1;\n\t}"
                     : "+r"(x[0]) : "r"(q[2]), "r"(q[3]), "r"(p.inner));
      else
        asm volatile("{\n\t.reg .pred q;\n\t.reg .u32 k;\n\tmov.u32 k, %10;\n"
                     "BSSY_E8:\n\tmad.lo.u32 %0, %0, %8, %9;\n\tmad.lo.u32 %1, %1, %8, %9;\n\tmad.lo.u32 %2, %2, %8, %9;\n\t"
                     "mad.lo.u32 %3, %3, %8, %9;\n\tmad.lo.u32 %4, %4, %8, %9;\n\tmad.lo.u32 %5, %5, %8, %9;\n\t"
                     "mad.lo.u32 %6, %6, %8, %9;\n\tmad.lo.u32 %7, %7, %8, %9;\n\t"
                     "sub.u32 k, k, 1;\n\tsetp.ne.u32 q, k, 0;\n\t@q bra.uni BSSY_E8;\n\t}"
                     : "+r"(x[0]), "+r"(x[1]), "+r"(x[2]), "+r"(x[3]), "+r"(x[4]), "+r"(x[5]), "+r"(x[6]), "+r"(x[7])
                     : "r"(q[2]), "r"(q[3]), "r"(p.inner));
    }
  }
  __device__ void finish(const Params& p) { uint32_t s = 0; for (int c = 0; c < 8; ++c) s += x[c]; p.out[gtid()] = s; }
};

// lds: a pointer chase in shared memory, each lane its own word (no bank conflict): every
// word holds its own address, so x = lds[x] stays put. Layout [warp][chain][lane].
struct OpLds {
  uint32_t x[8];
  __device__ void setup(const Params&, unsigned char* smem) {
    uint32_t* w = reinterpret_cast<uint32_t*>(smem);
    for (int c = 0; c < 8; ++c) {
      const int i = (warp_id() * 8 + c) * 32 + lane_id();
      w[i] = smem_addr(&w[i]);
      x[c] = smem_addr(&w[i]);
    }
  }
  template <int C> __device__ __forceinline__ void trip(const Params&) {
    steps<kPerTrip / C, C>([&](auto, auto c) { asm volatile("ld.shared.u32 %0, [%0];" : "+r"(x[CV(c)])); });
  }
  __device__ void finish(const Params& p) { uint32_t s = 0; for (int c = 0; c < 8; ++c) s += x[c]; p.out[gtid()] = s; }
};


// ldsm: ldmatrix.sync.aligned.m8n8.x4.shared.b16 (LDSM.16.M88.4). Lane L gives the address of
// row L%8 of matrix L/8; a matrix row is 16 bytes. kConflict = false: the 32 rows are 512
// contiguous bytes (each phase of 8 rows covers the 32 banks once: conflict-free, 4 wavefronts).
// kConflict = true: rows 128 bytes apart, so the 8 rows of a phase fall on the same 4 banks
// (8-way conflict, 32 wavefronts). All warps read the same region per chain (loads only).
// Every chain goes through its results: thread t receives word t%4 of row t/4 of matrix 0 in its
// first register, and that word holds the address lane 4*(t/4)+t%4 = t gives, so the first
// register is the thread's own row address again. (A first version gave the independent chains a
// fixed address: ptxas then kept one LDSM per chain and loop trip, 8 instead of 256, and
// run_calib.sh's check dropped those rows. The .trans form, LDSM.16.MT88.4, spreads a row over
// several threads' registers, so it cannot chain this way; it is not timed here.)
template <bool kConflict>
struct OpLdsm {
  static constexpr int kRowStride = kConflict ? 128 : 16;
  static constexpr int kRegion = 32 * kRowStride;  // bytes per chain
  uint32_t x[8], r[4];
  __device__ void setup(const Params&, unsigned char* smem) {
    const int L = lane_id();
    for (int c = 0; c < 8; ++c) {
      unsigned char* base = smem + c * kRegion;
      const uint32_t mine = smem_addr(base + L * kRowStride);  // row L%8 of matrix L/8
      // matrix 0 is rows 0..7: row L/4, word L%4 holds lane L's address
      reinterpret_cast<uint32_t*>(base + (L / 4) * kRowStride)[L % 4] = mine;
      x[c] = mine;
    }
    r[0] = r[1] = r[2] = 0;
  }
  template <int C> __device__ __forceinline__ void trip(const Params&) {
    steps<kPerTrip / C, C>([&](auto, auto c) {
      uint32_t a, b, d, e;
      asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                   : "=r"(a), "=r"(b), "=r"(d), "=r"(e) : "r"(x[CV(c)]));
      x[CV(c)] = a;  // the next address is the loaded one
      r[0] ^= b; r[1] ^= d; r[2] ^= e;
    });
  }
  __device__ void finish(const Params& p) { uint32_t s = r[0] + r[1] + r[2]; for (int c = 0; c < 8; ++c) s += x[c]; p.out[gtid()] = s; }
};

// ldsm, indep only: ldmatrix .x4 (kTrans: .trans, LDSM.16.MT88.4) with rows kStride bytes apart
// (16: conflict-free, 64: 4-way, 128: 8-way), 8 chains of fixed rows. Each LDSM's address is
// the chain's row XOR p.zero * (trip * 64 + step + 1) (0 at run time): ptxas cannot tell the 32
// LDSMs of a chain in one trip apart from their addresses, so it keeps all 256 (with fixed
// addresses it kept one per chain and trip). The IMAD/LOP3 per LDSM go to other pipes; at 2+ warps
// per scheduler the loop is bound by the shared path, which is what these rows time.
template <bool kTrans, int kStride>
struct OpLdsmX {
  uint32_t base[8], zero, k, r[4];
  __device__ void setup(const Params& p, unsigned char* smem) {
    for (int c = 0; c < 8; ++c) base[c] = smem_addr(smem + c * 32 * kStride + lane_id() * kStride);
    zero = uint32_t(p.zero);
    k = 0;
    r[0] = r[1] = r[2] = r[3] = 0;
  }
  template <int C> __device__ __forceinline__ void trip(const Params&) {
    const uint32_t z = zero * (k++ * 64u);
    steps<kPerTrip / C, C>([&](auto j, auto c) {
      const uint32_t a = base[CV(c)] ^ (z + zero * uint32_t(CV(j) + 1));
      uint32_t d0, d1, d2, d3;
      if constexpr (kTrans)
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                     : "=r"(d0), "=r"(d1), "=r"(d2), "=r"(d3) : "r"(a));
      else
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                     : "=r"(d0), "=r"(d1), "=r"(d2), "=r"(d3) : "r"(a));
      r[0] ^= d0; r[1] ^= d1; r[2] ^= d2; r[3] ^= d3;
    });
  }
  __device__ void finish(const Params& p) { p.out[gtid()] = r[0] + r[1] + r[2] + r[3]; }
};

// sts: stores, each lane its own word; chain c stores at +c*128 bytes. chains = 1 stores to one
// address with st.volatile.shared (still STS in SASS): ptxas merges back-to-back plain stores to
// one address into one.
struct OpSts {
  uint32_t a, v;
  __device__ void setup(const Params&, unsigned char* smem) {
    a = smem_addr(smem + ((warp_id() * 8) * 32 + lane_id()) * 4);
    v = threadIdx.x;
  }
  template <int C> __device__ __forceinline__ void trip(const Params&) {
    steps<kPerTrip / C, C>([&](auto, auto c) {
      if constexpr (C == 1) asm volatile("st.volatile.shared.u32 [%0], %1;" :: "r"(a), "r"(v) : "memory");
      else asm volatile("st.shared.u32 [%0+%2], %1;" :: "r"(a), "r"(v), "n"(CV(c) * 128) : "memory");
    });
  }
  __device__ void finish(const Params& p) { p.out[gtid()] = v; }
};

// ldg: a pointer chase through global memory, each lane its own 8-byte self-pointer (a warp
// reads 256 contiguous bytes per LDG). .cg: L2 (the buffer is L2-resident, 16.5 MiB);
// .ca: L1 hit after the first trip.
template <bool kL1>
struct OpLdg {
  unsigned long long x[8];
  __device__ void setup(const Params& p, unsigned char*) {
    for (int c = 0; c < 8; ++c)
      x[c] = reinterpret_cast<unsigned long long>(p.gchase + ((size_t(blockIdx.x) * kMaxWarps + warp_id()) * 8 + c) * 32 + lane_id());
  }
  template <int C> __device__ __forceinline__ void trip(const Params&) {
    steps<kPerTrip / C, C>([&](auto, auto c) {
      if constexpr (kL1) asm volatile("ld.global.ca.u64 %0, [%0];" : "+l"(x[CV(c)]));
      else asm volatile("ld.global.cg.u64 %0, [%0];" : "+l"(x[CV(c)]));
    });
  }
  __device__ void finish(const Params& p) { unsigned long long s = 0; for (int c = 0; c < 8; ++c) s += x[c]; p.out[gtid()] = uint32_t(s); }
};

// stg: coalesced 4-byte stores (a warp writes one 128-byte line); chain c at +c*128 bytes.
// chains = 1 alternates between two lines (ptxas merges back-to-back stores to one address;
// st.volatile would change the SASS to STG.E.STRONG.SYS).
struct OpStg {
  uint32_t* a;
  uint32_t v;
  __device__ void setup(const Params& p, unsigned char*) {
    a = p.gstore + (size_t(blockIdx.x) * kMaxWarps + warp_id()) * 8 * 32 + lane_id();
    v = threadIdx.x;
  }
  template <int C> __device__ __forceinline__ void trip(const Params&) {
    steps<kPerTrip / C, C>([&](auto j, auto c) {
      constexpr int kOff = C == 1 ? (CV(j) % 2) * 128 : CV(c) * 128;
      asm volatile("st.global.u32 [%0+%2], %1;" :: "l"(a), "r"(v), "n"(kOff) : "memory");
    });
  }
  __device__ void finish(const Params& p) { p.out[gtid()] = v; }
};

// ldgsts: cp.async of kBytes per lane, no commit or wait in the loop (commit_group +
// wait_group 0 after the timed end). Destination: the same shared words (chains = 1) or 8
// (chains = 8). Sources:
//   kSweep   L2: the source sweeps a 1 MiB L2-resident region (each warp its own stream, spread
//            over the region, consecutive copies read consecutive lines), so .ca copies (4 B)
//            miss L1 too. The immediate offset of LDGSTS reaches 4 KiB: every 32 copies one
//            64-bit address add (IADD3 + IMAD.X), and per trip the advance and wrap.
//   !kSweep  the same 8 lines per warp (immediate offsets only): with .cg (16 B, L1 bypassed)
//            every copy reads L2; with .ca they hit L1.
template <int kBytes, bool kSweep, bool kCa>
struct OpLdgsts {
  uint32_t dst, off;
  const char* src;
  __device__ void setup(const Params& p, unsigned char* smem) {
    constexpr int kSlots = kSmemBytes / 2 / (8 * 32 * kBytes);  // warps sharing destinations
    dst = smem_addr(smem + ((warp_id() % kSlots) * 8 * 32 + lane_id()) * kBytes);
    const int nw = blockDim.x >> 5;
    // sweep: streams spread over the region; fixed: 16 compact 4 KiB windows (warps share them),
    // so that the .ca windows stay in L1 without set conflicts
    off = kSweep ? ((uint32_t(warp_id()) * (kSrcRegion / nw) + blockIdx.x * 4096u) % kSrcRegion) & ~511u
                 : uint32_t(warp_id() % 16) * 4096u;
    src = p.gsrc + off + lane_id() * kBytes;
  }
  template <int C> __device__ __forceinline__ void trip(const Params& p) {
    steps<kPerTrip / C, C>([&](auto j, auto c) {
      constexpr int kStep = CV(j) * C + CV(c);
      constexpr int kSrcOff = (kSweep ? kStep : kStep % 8) * 32 * kBytes;
      constexpr int kDstOff = CV(c) * 32 * kBytes;
      if constexpr (kCa)
        asm volatile("cp.async.ca.shared.global [%0+%2], [%1+%3], %4;" :: "r"(dst), "l"(src), "n"(kDstOff), "n"(kSrcOff), "n"(kBytes) : "memory");
      else
        asm volatile("cp.async.cg.shared.global [%0+%2], [%1+%3], 16;" :: "r"(dst), "l"(src), "n"(kDstOff), "n"(kSrcOff) : "memory");
    });
    if constexpr (kSweep) {
      off += kPerTrip * 32 * kBytes;
      if (off >= kSrcRegion) off -= kSrcRegion;
      src = p.gsrc + off + lane_id() * kBytes;
    }
  }
  __device__ void finish(const Params& p) {
    asm volatile("cp.async.commit_group;\n\tcp.async.wait_group 0;" ::: "memory");
    p.out[gtid()] = off;
  }
};

// depbar: cp.async.wait_group 0 with nothing outstanding (DEPBAR.LE SB0, 0x0).
// ldgdepbar: cp.async.commit_group of empty groups (LDGDEPBAR).
template <bool kCommit>
struct OpDepbar {
  __device__ void setup(const Params&, unsigned char*) {}
  template <int C> __device__ __forceinline__ void trip(const Params&) {
    steps<kPerTrip, 1>([&](auto, auto) {
      if constexpr (kCommit) asm volatile("cp.async.commit_group;" ::: "memory");
      else asm volatile("cp.async.wait_group 0;" ::: "memory");
    });
  }
  __device__ void finish(const Params& p) {
    if constexpr (kCommit) asm volatile("cp.async.wait_group 0;" ::: "memory");
    p.out[gtid()] = 0;
  }
};

// syncs (arrive): every lane arrives on its warp's mbarrier (chain c: the warp's c-th barrier),
// initialised to 2^20 - 1 arrivals so no phase ever completes (8192 x 32 = 262144 arrivals).
struct OpArrive {
  uint32_t bar;
  __device__ void setup(const Params&, unsigned char* smem) {
    bar = smem_addr(smem + warp_id() * 8 * 8);
    if (lane_id() < 8) asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(bar + lane_id() * 8), "r"((1u << 20) - 1) : "memory");
    __syncwarp();
  }
  template <int C> __device__ __forceinline__ void trip(const Params&) {
    steps<kPerTrip / C, C>([&](auto, auto c) {
      asm volatile("{\n\t.reg .b64 st;\n\tmbarrier.arrive.shared::cta.b64 st, [%0+%1];\n\t}" :: "r"(bar), "n"(CV(c) * 8) : "memory");
    });
  }
  __device__ void finish(const Params& p) { p.out[gtid()] = bar; }
};

// syncs (phasechk): mbarrier.try_wait.parity on a phase that has completed (count 1, one
// arrival before the loop), as consumer_wait compiles it: the try_wait, then its retry branch
// (@!P BRA, never taken). chains = 8: eight try_waits on eight barriers, then the eight branches.
struct OpPhasechk {
  uint32_t bar, x;
  __device__ void setup(const Params&, unsigned char* smem) {
    bar = smem_addr(smem + warp_id() * 8 * 8);
    x = 0;
    if (lane_id() < 8) {
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bar + lane_id() * 8) : "memory");
      asm volatile("{\n\t.reg .b64 st;\n\tmbarrier.arrive.shared::cta.b64 st, [%0];\n\t}" :: "r"(bar + lane_id() * 8) : "memory");
    }
    __syncwarp();
  }
  template <int C> __device__ __forceinline__ void trip(const Params&) {
    if constexpr (C == 1) {
      asm volatile("{\n\t.reg .pred p;\n\t"
                   REP256("mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\n\t@!p bra.uni PC1_FAIL;\n\t")
                   "bra.uni PC1_DONE;\n"
                   "PC1_FAIL:\n\tadd.u32 %0, %0, 1;\n"
                   "PC1_DONE:\n\t}"
                   : "+r"(x) : "r"(bar) : "memory");
    } else {
#define PC8_TW(k) "mbarrier.try_wait.parity.shared::cta.b64 p" #k ", [%1+" #k "*8], 0;\n\t"
#define PC8_BR(k) "@!p" #k " bra.uni PC8_FAIL;\n\t"
#define PC8_STEP PC8_TW(0) PC8_TW(1) PC8_TW(2) PC8_TW(3) PC8_TW(4) PC8_TW(5) PC8_TW(6) PC8_TW(7) \
                 PC8_BR(0) PC8_BR(1) PC8_BR(2) PC8_BR(3) PC8_BR(4) PC8_BR(5) PC8_BR(6) PC8_BR(7)
      asm volatile("{\n\t.reg .pred p0, p1, p2, p3, p4, p5, p6, p7;\n\t"
                   REP32(PC8_STEP)
                   "bra.uni PC8_DONE;\n"
                   "PC8_FAIL:\n\tadd.u32 %0, %0, 1;\n"
                   "PC8_DONE:\n\t}"
                   : "+r"(x) : "r"(bar) : "memory");
    }
  }
  __device__ void finish(const Params& p) { p.out[gtid()] = x; }
};

// bar: bar.sync 0 by every warp of the block (BAR.SYNC 0x0). Same code for both modes.
struct OpBar {
  __device__ void setup(const Params&, unsigned char*) {}
  template <int C> __device__ __forceinline__ void trip(const Params&) {
    steps<kPerTrip, 1>([&](auto, auto) { asm volatile("bar.sync 0;" ::: "memory"); });
  }
  __device__ void finish(const Params& p) { p.out[gtid()] = 0; }
};

// shfl: SHFL.IDX chain x = shfl(x, lane ^ 1).
struct OpShfl {
  uint32_t x[8], src;
  __device__ void setup(const Params& p, unsigned char*) {
    src = lane_id() ^ (p.q[0] & 31);  // q[0] = 1
    for (int c = 0; c < 8; ++c) x[c] = threadIdx.x + c;
  }
  template <int C> __device__ __forceinline__ void trip(const Params&) {
    steps<kPerTrip / C, C>([&](auto, auto c) {
      asm volatile("shfl.sync.idx.b32 %0, %0, %1, 0x1f, 0xffffffff;" : "+r"(x[CV(c)]) : "r"(src));
    });
  }
  __device__ void finish(const Params& p) { uint32_t s = 0; for (int c = 0; c < 8; ++c) s += x[c]; p.out[gtid()] = s; }
};

// mma: HMMA m16n8k16, f16 inputs, f32 accumulators: D = A*B + D (chains = 1 or 4).
struct OpMma {
  float d[4][4];
  uint32_t a[4], b[2];
  __device__ void setup(const Params& p, unsigned char*) {
    for (int i = 0; i < 4; ++i) a[i] = p.q[i] * 0x3c003c00u;  // q = 1, 3, 5, 7: finite halves
    b[0] = a[0]; b[1] = a[1];
    for (int c = 0; c < 4; ++c) for (int i = 0; i < 4; ++i) d[c][i] = 0.f;
  }
  template <int C> __device__ __forceinline__ void trip(const Params&) {
    steps<kPerTrip / C, C>([&](auto, auto c) {
      asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                   : "+f"(d[CV(c)][0]), "+f"(d[CV(c)][1]), "+f"(d[CV(c)][2]), "+f"(d[CV(c)][3])
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    });
  }
  __device__ void finish(const Params& p) {
    float s = 0; for (int c = 0; c < 4; ++c) for (int i = 0; i < 4; ++i) s += d[c][i];
    p.out[gtid()] = __float_as_uint(s);
  }
};

// ---------------------------------------------------------------- the timed kernel

template <class Op, int C>
__global__ void __launch_bounds__(1024, 2) iclass_kernel(Params p) {
  extern __shared__ __align__(16) unsigned char smem[];
  Op op;
  op.setup(p, smem);
  start_together(p);  // ends with __syncthreads
  const long long t0 = clock64();
#pragma unroll 1
  for (int t = 0; t < p.trips; ++t) op.template trip<C>(p);
  const long long t1 = clock64();
  op.finish(p);
  if (lane_id() == 0) p.cycles[blockIdx.x * kMaxWarps + warp_id()] = t1 - t0;
  if (threadIdx.x == 0) {
    unsigned smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    p.smid[blockIdx.x] = int(smid);
  }
}

__global__ void init_chase(unsigned long long* g, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    g[i] = reinterpret_cast<unsigned long long>(g + i);
}

// Keeps the GPU busy for a while before the measurements, so that its clock has ramped up.
__global__ void spin(long long cycles, int* sink) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {}
  if (threadIdx.x == 1024) sink[0] = 0;
}

using KernelFn = void (*)(Params);

// One instruction kind: its dep kernel (chains = 1) and its indep kernel (chains = ci); either
// may be absent. tag: the kernels' mangled Op name (run_calib.sh finds their SASS by it);
// expect: a regular expression for the measured opcode (run_calib.sh checks that the timed
// loop holds kPerTrip of them per trip and drops the rows of a kernel where it does not;
// "-" = not checked, for the branch loops).
struct Bench {
  const char* cls;
  const char* sass;
  const char* tag;
  const char* expect;
  KernelFn dep;
  KernelFn indep;
  int ci;
  int per_warp;  // class instructions per warp, 0: kPerTrip * kTrips
  int trips;     // loop trips (0: kTrips)
  int inner;     // Params.inner
  int flag;      // Params.flag
};

using Ldgsts4L2 = OpLdgsts<4, true, true>;
using Ldgsts16L2 = OpLdgsts<16, false, false>;
using Ldgsts4L1 = OpLdgsts<4, false, true>;
using Ldgsts16L1 = OpLdgsts<16, false, true>;

#define BENCH(cls, sass, tag, expect, Op, CI) \
  {cls, sass, tag, expect, iclass_kernel<Op, 1>, iclass_kernel<Op, CI>, CI, 0, 0, 1, 1}

constexpr int kBraLoops = 8192;   // BRA loop trips per warp
constexpr int kBssyTrips = 2048;  // if/else trips per warp

const Bench kBenches[] = {
    BENCH("alu", "IADD3", "7OpIadd3", "^IADD3$", OpIadd3, 8),
    BENCH("alu", "LOP3", "6OpLop3", "^LOP3", OpLop3, 8),
    BENCH("imad", "IMAD", "6OpImad", "^IMAD$", OpImad, 8),
    BENCH("imad", "IMAD.WIDE", "10OpImadWide", "^IMAD\\.WIDE", OpImadWide, 8),
    BENCH("fma", "FFMA", "6OpFfma", "^FFMA$", OpFfma, 8),
    BENCH("conv", "I2F+F2I", "8OpI2fF2i", "^(I2F|F2I)", OpI2fF2i, 8),
    BENCH("conv", "MUFU.RSQ", "5OpRsq", "^MUFU\\.RSQ", OpRsq, 8),
    BENCH("uniform", "UIADD3", "9OpUniform", "^UIADD3$", OpUniform, 8),
    BENCH("s2r", "S2R+S2UR", "5OpS2r", "^S2U?R$", OpS2r, 8),
    {"branch", "BRA", "5OpBraILb0EE", "-", iclass_kernel<OpBra<false>, 1>, iclass_kernel<OpBra<false>, 8>, 8, kBraLoops, 1, kBraLoops, 1},
    {"branch", "BRA(R)", "5OpBraILb1EE", "-", iclass_kernel<OpBra<true>, 1>, iclass_kernel<OpBra<true>, 8>, 8, kBraLoops, 1, kBraLoops, 1},
    {"branch", "BSSY+BSYNC", "6OpBssy", "-", iclass_kernel<OpBssy, 1>, iclass_kernel<OpBssy, 8>, 8, kBssyTrips, kBssyTrips, 1, 1},
    {"branch", "BSSY+BSYNC(converged)", "6OpBssy", "-", iclass_kernel<OpBssy, 1>, iclass_kernel<OpBssy, 8>, 8, kBssyTrips, kBssyTrips, 1, 0},
    BENCH("lds", "LDS", "5OpLds", "^LDS$", OpLds, 8),
    BENCH("sts", "STS", "5OpSts", "^STS$", OpSts, 8),
    BENCH("ldg", "LDG(L2)", "5OpLdgILb0EE", "^LDG", OpLdg<false>, 8),
    BENCH("ldg", "LDG(L1)", "5OpLdgILb1EE", "^LDG", OpLdg<true>, 8),
    BENCH("stg", "STG", "5OpStg", "^STG", OpStg, 8),
    BENCH("ldgsts", "LDGSTS(4B;L2)", "8OpLdgstsILi4ELb1ELb1EE", "^LDGSTS", Ldgsts4L2, 8),
    BENCH("ldgsts", "LDGSTS(16B;L2)", "8OpLdgstsILi16ELb0ELb0EE", "^LDGSTS", Ldgsts16L2, 8),
    BENCH("ldgsts", "LDGSTS(4B;L1)", "8OpLdgstsILi4ELb0ELb1EE", "^LDGSTS", Ldgsts4L1, 8),
    BENCH("ldgsts", "LDGSTS(16B;L1)", "8OpLdgstsILi16ELb0ELb1EE", "^LDGSTS", Ldgsts16L1, 8),
    {"depbar", "DEPBAR", "8OpDepbarILb0EE", "^DEPBAR", iclass_kernel<OpDepbar<false>, 1>, iclass_kernel<OpDepbar<false>, 1>, 1, 0, 0, 1, 1},
    {"depbar", "LDGDEPBAR", "8OpDepbarILb1EE", "^LDGDEPBAR$", iclass_kernel<OpDepbar<true>, 1>, iclass_kernel<OpDepbar<true>, 1>, 1, 0, 0, 1, 1},
    BENCH("syncs", "SYNCS.ARRIVE", "8OpArrive", "^SYNCS\\.ARRIVE", OpArrive, 8),
    BENCH("syncs", "SYNCS.PHASECHK", "10OpPhasechk", "^SYNCS\\.PHASECHK", OpPhasechk, 8),
    {"bar", "BAR.SYNC", "5OpBar", "^BAR\\.SYNC", iclass_kernel<OpBar, 1>, iclass_kernel<OpBar, 1>, 1, 0, 0, 1, 1},
    BENCH("shfl", "SHFL", "6OpShfl", "^SHFL", OpShfl, 8),
    BENCH("mma", "HMMA", "5OpMma", "^HMMA", OpMma, 4),
    BENCH("ldsm", "LDSM.16.M88.4", "6OpLdsmILb0EE", "^LDSM", OpLdsm<false>, 8),
    BENCH("ldsm", "LDSM.16.M88.4(8-way)", "6OpLdsmILb1EE", "^LDSM", OpLdsm<true>, 8),
    {"ldsm", "LDSM.16.M88.4(x)", "7OpLdsmXILb0ELi16EE", "^LDSM", nullptr, iclass_kernel<OpLdsmX<false, 16>, 8>, 8, 0, 0, 1, 1},
    {"ldsm", "LDSM.16.M88.4(x;4-way)", "7OpLdsmXILb0ELi64EE", "^LDSM", nullptr, iclass_kernel<OpLdsmX<false, 64>, 8>, 8, 0, 0, 1, 1},
    {"ldsm", "LDSM.16.M88.4(x;8-way)", "7OpLdsmXILb0ELi128EE", "^LDSM", nullptr, iclass_kernel<OpLdsmX<false, 128>, 8>, 8, 0, 0, 1, 1},
    {"ldsm", "LDSM.16.MT88.4(x)", "7OpLdsmXILb1ELi16EE", "^LDSM", nullptr, iclass_kernel<OpLdsmX<true, 16>, 8>, 8, 0, 0, 1, 1},
    {"ldsm", "LDSM.16.MT88.4(x;4-way)", "7OpLdsmXILb1ELi64EE", "^LDSM", nullptr, iclass_kernel<OpLdsmX<true, 64>, 8>, 8, 0, 0, 1, 1},
    {"ldsm", "LDSM.16.MT88.4(x;8-way)", "7OpLdsmXILb1ELi128EE", "^LDSM", nullptr, iclass_kernel<OpLdsmX<true, 128>, 8>, 8, 0, 0, 1, 1},
};

struct Config {
  const char* mode;
  int W;        // warps per scheduler (column)
  int bs, bps;  // block size, blocks per SM
};

}  // namespace

int main(int argc, char** argv) {
  const int sms = sm_count();
  const int max_blocks = 2 * sms;
  Params p{};
  p.q[0] = 1; p.q[1] = 3; p.q[2] = 5; p.q[3] = 7;
  p.f[0] = 1.0000001f; p.f[1] = 0.5f; p.f[2] = 0.9999999f; p.f[3] = 0.25f;
  const size_t chase_n = size_t(max_blocks) * kMaxWarps * 8 * 32;
  CK(cudaMalloc(&p.gchase, chase_n * sizeof(unsigned long long)));
  CK(cudaMalloc(&p.gstore, chase_n * sizeof(uint32_t)));
  char* gsrc;
  CK(cudaMalloc(&gsrc, kSrcRegion + kSrcPad));
  CK(cudaMemset(gsrc, 0, kSrcRegion + kSrcPad));
  p.gsrc = gsrc;
  CK(cudaMalloc(&p.out, size_t(max_blocks) * 1024 * sizeof(uint32_t)));
  CK(cudaMalloc(&p.cycles, size_t(max_blocks) * kMaxWarps * sizeof(long long)));
  CK(cudaMalloc(&p.smid, size_t(max_blocks) * sizeof(int)));
  CK(cudaMalloc(&p.rv_count, 1024 * sizeof(unsigned)));
  CK(cudaMalloc(&p.rv_target, 1024 * sizeof(long long)));
  CK(cudaMalloc(&p.err, sizeof(int)));
  CK(cudaMemset(p.err, 0, sizeof(int)));
  CK(cudaMalloc(&p.late, sizeof(int)));
  CK(cudaMemset(p.late, 0, sizeof(int)));
  CK(cudaMalloc(&p.start, size_t(max_blocks) * sizeof(long long)));
  init_chase<<<1024, 256>>>(p.gchase, chase_n);
  CK_LAUNCH();
  spin<<<sms, 128>>>(1000000000LL, reinterpret_cast<int*>(p.out));  // ~0.5 s at 1980 MHz
  CK_LAUNCH();

  FILE* f = open_csv(argc, argv, "iclass.csv",
                     "class,sass,warps_per_scheduler,mode,chains,instructions_per_warp,cycles_median,cycles_per_instruction");
  printf("# log columns: class,sass,W,mode,chains,sm_cycles_median(all warps done),warp0_median,fastest_warp_median,sm_min,sm_max,sms,start_skew_median,start_skew_max (two blocks per SM)\n");
  const Config configs[] = {
      {"dep", 1, 128, 1}, {"dep", 2, 256, 1}, {"dep", 4, 512, 1}, {"dep", 8, 1024, 1}, {"dep", 16, 1024, 2},
      {"indep", 1, 128, 1}, {"indep", 2, 256, 1}, {"indep", 4, 512, 1}, {"indep", 8, 1024, 1}, {"indep", 16, 1024, 2},
      {"indep_1warp", 1, 32, 1},
  };
  // ICLASS_ONLY=ldsm,mma: only those classes (a re-run that adds rows without re-timing the rest)
  const std::string only = getenv("ICLASS_ONLY") ? std::string(",") + getenv("ICLASS_ONLY") + "," : "";
  for (const Bench& b : kBenches) {
    if (!only.empty() && only.find(std::string(",") + b.cls + ",") == std::string::npos) continue;
    for (const Config& cf : configs) {
      const bool dep = cf.mode[0] == 'd';
      KernelFn fn = dep ? b.dep : b.indep;
      if (!fn) continue;
      const int chains = dep ? 1 : b.ci;
      CK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
      const int nw = cf.bs / 32;
      int occ = 0;
      CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, fn, cf.bs, kSmemBytes));
      if (occ < cf.bps) { fprintf(stderr, "%s %s W=%d: occupancy %d < %d, skipped\n", b.cls, b.sass, cf.W, occ, cf.bps); continue; }
      const int grid = sms * cf.bps;
      Params q = p;
      q.blocks_per_sm = cf.bps;
      q.flag = b.flag;
      q.trips = b.trips ? b.trips : kTrips;
      q.inner = b.inner;
      const long long per_warp = b.per_warp ? b.per_warp : (long long)kPerTrip * kTrips;
      std::vector<long long> sm_time, w0, wmin;
      std::vector<long long> cyc(size_t(grid) * kMaxWarps);
      std::vector<int> smid(grid);
      std::vector<long long> start(grid), skew;
      for (int r = 0; r <= kReps; ++r) {
        CK(cudaMemset(q.rv_count, 0, 1024 * sizeof(unsigned)));
        CK(cudaMemset(q.rv_target, 0, 1024 * sizeof(long long)));
        fn<<<grid, cf.bs, kSmemBytes>>>(q);
        CK_LAUNCH();
        if (r == 0) continue;  // warm-up
        CK(cudaMemcpy(cyc.data(), q.cycles, cyc.size() * sizeof(long long), cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(smid.data(), q.smid, grid * sizeof(int), cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(start.data(), q.start, grid * sizeof(long long), cudaMemcpyDeviceToHost));
        // Two blocks per SM: how far apart (SM clock) did they start?
        std::vector<long long> first(1024, -1);
        for (int blk = 0; blk < grid; ++blk) {
          long long& s0 = first[smid[blk] & 1023];
          if (s0 < 0) s0 = start[blk];
          else skew.push_back(std::llabs(start[blk] - s0));
        }
        // All warps of an SM (both blocks at W = 16) start at the same clock: the SM's time is
        // its slowest warp's.
        std::vector<long long> per_sm(1024, -1);
        for (int blk = 0; blk < grid; ++blk) {
          long long mx = 0, mn = -1;
          for (int w = 0; w < nw; ++w) {
            const long long c = cyc[size_t(blk) * kMaxWarps + w];
            mx = std::max(mx, c);
            mn = mn < 0 ? c : std::min(mn, c);
          }
          long long& s = per_sm[smid[blk] & 1023];
          s = std::max(s, mx);
          w0.push_back(cyc[size_t(blk) * kMaxWarps]);
          wmin.push_back(mn);
        }
        for (long long s : per_sm)
          if (s >= 0) sm_time.push_back(s);
      }
      const double med = median(sm_time);
      ROW(f, "%s,%s,%d,%s,%d,%lld,%.1f,%.3f,K:NS_%sELi%dE:%s\n", b.cls, b.sass, cf.W, cf.mode, chains, per_warp, med,
          med / double(per_warp), b.tag, chains, b.expect);
      printf("# %s,%s,%d,%s,%d,%.1f,%.1f,%.1f,%lld,%lld,%zu,%.0f,%lld\n", b.cls, b.sass, cf.W, cf.mode, chains, med, median(w0),
             median(wmin), *std::min_element(sm_time.begin(), sm_time.end()),
             *std::max_element(sm_time.begin(), sm_time.end()), sm_time.size(), median(skew),
             skew.empty() ? 0LL : *std::max_element(skew.begin(), skew.end()));
    }
  }
  fclose(f);
  int err = 0;
  CK(cudaMemcpy(&err, p.err, sizeof(int), cudaMemcpyDeviceToHost));
  int late = 0;
  CK(cudaMemcpy(&late, p.late, sizeof(int), cudaMemcpyDeviceToHost));
  printf("# rendezvous timeouts: %d, blocks that saw the common start late: %d\n", err, late);
  return err ? 2 : 0;
}

// When does a waiting try_wait see another warp's completing arrival?  (mbarrier, one block, one SM)
//
// Warp 0 starts an mbarrier.try_wait.parity loop on a phase that warp 1 completes (count 32, the
// warp's arrive) a chosen number of cycles later or earlier.  For each offset of the arrive from the
// try_wait, the cycles from the try_wait's start and from the arrive's issue to the try_wait's
// success: a try_wait that is still in the SYNCS unit when the phase completes returns at its own
// latency; one that was suspended is woken (mbarrier_wake.csv's 94 cycles from the arrive).  No clock
// read sits between the try_wait and the arrive other than the stamps themselves.
//
// A second table asks whether an arrival that does not complete the phase ends the wait: warp 0
// waits on a phase of 64 arrivals, warp 1's 32 arrive at gap1 (an arrive, or its threads' 4-byte
// cp.async copies' arrive-on: cp.async.mbarrier.arrive.noinc, landing some hundreds of cycles
// later) and warp 2's complete it at gap2; warp 0 counts its try_wait's returns of false and
// stamps the first.  The partitioned pipeline's consumers wait on a phase its producers' copies
// complete one thread at a time (traces/h100/validation_pcsamp: its retries are rare on the H100).
//
// Usage: trywait_window OUTDIR -> OUTDIR/trywait_window.csv
//        trywait_window OUTDIR partial -> OUTDIR/trywait_partial.csv
#include <string>
#include "common.cuh"

namespace {

constexpr int kReps = 64;
constexpr int kLead = 96;  // the try_wait starts this long after the common start; the arrive at gap

__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__global__ void window_kernel(int gap, long long* stamps) {
  __shared__ alignas(8) unsigned long long bar;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 32;" ::"r"(smem_addr(&bar)) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  for (int r = 0; r < kReps; ++r) {
    __syncthreads();
    const long long t0 = clock64();
    if (warp == 0) {  // the whole warp waits: no divergence around the block barrier
      long long ta;
      do { ta = clock64(); } while (ta < t0 + kLead);
      unsigned ok = 0;
      do {
        asm volatile(
            "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
            : "=r"(ok) : "r"(smem_addr(&bar)), "r"(unsigned(r & 1)) : "memory");
      } while (!ok);
      const long long td = clock64();
      if (lane == 0) {
        stamps[r * 5 + 0] = ta;
        stamps[r * 5 + 2] = td;
        stamps[r * 5 + 3] = t0;
      }
    }
    if (warp == 1) {  // the whole warp arrives: the count is 32
      long long tb;
      do { tb = clock64(); } while (tb < t0 + kLead + gap);
      asm volatile("{ .reg .b64 st; mbarrier.arrive.shared::cta.b64 st, [%0]; }" ::"r"(smem_addr(&bar)) : "memory");
      if (lane == 0) {
        stamps[r * 5 + 1] = tb;
        stamps[r * 5 + 4] = t0;
      }
    }
  }
}

// warp 0 waits on a 64-arrival phase; warp 1 arrives (copy: through its copies' arrive-on) at
// lead + gap1, warp 2 at lead + gap2.  stamps per rep: try start, first false return, success,
// tries, warp 1's arrive issue, warp 2's arrive issue.
__global__ void partial_kernel(int gap1, int gap2, bool copy, const int* src, long long* stamps) {
  __shared__ alignas(8) unsigned long long bar;
  __shared__ int landing[32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 64;" ::"r"(smem_addr(&bar)) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  for (int r = 0; r < kReps; ++r) {
    __syncthreads();
    const long long t0 = clock64();
    long long* s = stamps + r * 6;
    if (warp == 0) {
      long long ta;
      do { ta = clock64(); } while (ta < t0 + kLead);
      unsigned ok = 0;
      long long first_false = 0, tries = 0;
      do {
        asm volatile(
            "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
            : "=r"(ok) : "r"(smem_addr(&bar)), "r"(unsigned(r & 1)) : "memory");
        ++tries;
        if (!ok && !first_false) first_false = clock64();
      } while (!ok);
      const long long td = clock64();
      if (lane == 0) s[0] = ta, s[1] = first_false, s[2] = td, s[3] = tries;
    }
    if (warp == 1) {
      long long tb;
      do { tb = clock64(); } while (tb < t0 + kLead + gap1);
      if (copy) {
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(smem_addr(&landing[lane])),
                     "l"(src + (size_t(r) * 32 + lane) * 64) : "memory");
        asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(smem_addr(&bar)) : "memory");
      } else {
        asm volatile("{ .reg .b64 st; mbarrier.arrive.shared::cta.b64 st, [%0]; }" ::"r"(smem_addr(&bar)) : "memory");
      }
      if (lane == 0) s[4] = tb;
    }
    if (warp == 2) {
      long long tc;
      do { tc = clock64(); } while (tc < t0 + kLead + gap2);
      asm volatile("{ .reg .b64 st; mbarrier.arrive.shared::cta.b64 st, [%0]; }" ::"r"(smem_addr(&bar)) : "memory");
      if (lane == 0) s[5] = tc;
    }
  }
}

}  // namespace

int partial(int argc, char** argv) {
  FILE* f = open_csv(argc, argv, "trywait_partial.csv",
                     "variant,gap1,gap2,tries_median,first_false_after_try_median,done_after_try_median,"
                     "done_after_last_arrive_median,reps_with_false");
  long long* d;
  int* src;
  CK(cudaMalloc(&d, kReps * 6 * sizeof(long long)));
  CK(cudaMalloc(&src, size_t(kReps) * 32 * 64 * sizeof(int)));
  CK(cudaMemset(src, 1, size_t(kReps) * 32 * 64 * sizeof(int)));
  L2Flusher flusher;
  std::vector<long long> h(kReps * 6);
  for (int copy : {0, 1})
    for (int gap1 : {200, 1000})
      for (int gap2 : {2000, 6000, 12000}) {
        flusher.flush();  // the copies come from DRAM
        partial_kernel<<<1, 96>>>(gap1, gap2, copy, src, d);
        CK_LAUNCH();
        CK(cudaMemcpy(h.data(), d, h.size() * sizeof(long long), cudaMemcpyDeviceToHost));
        std::vector<long long> tries, ff, dt, da;
        int with_false = 0;
        for (int r = 4; r < kReps; ++r) {
          const long long* s = &h[r * 6];
          tries.push_back(s[3]);
          if (s[1]) ff.push_back(s[1] - s[0]), ++with_false;
          dt.push_back(s[2] - s[0]);
          da.push_back(s[2] - std::max(s[4], s[5]));
        }
        ROW(f, "%s,%d,%d,%.1f,%.1f,%.1f,%.1f,%d\n", copy ? "copy" : "arrive", gap1, gap2, median(tries),
            ff.empty() ? -1.0 : median(ff), median(dt), median(da), with_false);
      }
  fclose(f);
  CK(cudaFree(d));
  CK(cudaFree(src));
  return 0;
}

int main(int argc, char** argv) {
  if (argc > 2 && std::string(argv[2]) == "partial") return partial(argc, argv);
  FILE* f = open_csv(argc, argv, "trywait_window.csv",
                     "gap_target,arrive_after_try_median,wake_after_try_median,wake_after_arrive_median,wake_after_try_min,wake_after_try_max,reps");
  long long* d;
  CK(cudaMalloc(&d, kReps * 5 * sizeof(long long)));
  std::vector<long long> h(kReps * 5);
  for (int gap = -48; gap <= 320; gap += 8) {
    window_kernel<<<1, 64>>>(gap, d);
    CK_LAUNCH();
    CK(cudaMemcpy(h.data(), d, h.size() * sizeof(long long), cudaMemcpyDeviceToHost));
    std::vector<long long> ab, wt, wa;
    for (int r = 4; r < kReps; ++r) {  // the first phases warm the code
      ab.push_back(h[r * 5 + 1] - h[r * 5 + 0]);
      wt.push_back(h[r * 5 + 2] - h[r * 5 + 0]);
      wa.push_back(h[r * 5 + 2] - h[r * 5 + 1]);
      if (gap == 64 && r < 12)
        printf("# r %d: t0 warp0 %lld warp1 %lld, ta %lld tb %lld td %lld\n", r, h[r * 5 + 3] - h[4 * 5 + 3],
               h[r * 5 + 4] - h[4 * 5 + 3], h[r * 5 + 0] - h[4 * 5 + 3], h[r * 5 + 1] - h[4 * 5 + 3], h[r * 5 + 2] - h[4 * 5 + 3]);
    }
    ROW(f, "%d,%.1f,%.1f,%.1f,%lld,%lld,%d\n", gap, median(ab), median(wt), median(wa),
        *std::min_element(wt.begin(), wt.end()), *std::max_element(wt.begin(), wt.end()), kReps - 4);
  }
  fclose(f);
  CK(cudaFree(d));
  return 0;
}

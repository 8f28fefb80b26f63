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
// A third table asks what wakes a diverged warp whose every path waits: warp 0's lanes 0-15 (path
// A) wait on barrier X, lanes 16-31 (path B) on barrier Y, each in its own try_wait loop; warp 1
// completes X at gap_x (an arrive, or its 32 threads' 4-byte copies from DRAM through their
// arrive-on), warp 2 completes Y at gap_y.  If a path's completion did not end the other path's
// suspended try_wait, the first path would go on only at the second's completion or the ~7,900-cycle
// limit.  This is the partitioned pipeline's state once its paths fall out of step: the consumers
// wait on the copies' barrier, the producers on the consumers' release.
//
// Usage: trywait_window OUTDIR -> OUTDIR/trywait_window.csv
//        trywait_window OUTDIR partial -> OUTDIR/trywait_partial.csv
//        trywait_window OUTDIR paths -> OUTDIR/trywait_paths.csv
//        trywait_window OUTDIR rejoin -> OUTDIR/trywait_rejoin.csv
//        trywait_window OUTDIR rejoin_fine -> OUTDIR/trywait_rejoin_fine.csv (lanes swapped too)
//        trywait_window OUTDIR siblings -> OUTDIR/trywait_siblings.csv
//        trywait_window OUTDIR restep -> OUTDIR/trywait_restep.csv
//        trywait_window OUTDIR restep_fine -> OUTDIR/trywait_restep_fine.csv (gaps 20 cycles apart)
#include <array>
#include <string>
#include <vector>
#include "common.cuh"

namespace {

constexpr int kReps = 64;
constexpr int kLead = 96;  // the try_wait starts this long after the common start; the arrive at gap

__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// Thread 0 inits the block's n barriers, 32 arrivals each, and the block waits for it.
template <int N>
__device__ __forceinline__ void init_barriers(unsigned long long (&bar)[N]) {
  if (threadIdx.x == 0) {
    for (int i = 0; i < N; ++i)
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 32;" ::"r"(smem_addr(&bar[i])) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
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

// One diverged warp, a try_wait loop per path on a barrier of its own (see the header).  stamps per
// rep: per path (A then B) its first try, first false return, success, tries; then X's and Y's
// completing arrive.
// P only makes the two paths' loops differ, so that the compiler keeps them apart (a branch of the
// warp each) instead of one loop on a selected address.  Bare: the first try sits before the loop, as
// in libcu++'s barrier and pipeline waits (pipelines.sass: a TRYWAIT, and only if it fails the loop of
// YIELD and TRYWAIT), so ptxas puts no YIELD before it; otherwise every try follows a YIELD.
__device__ __forceinline__ unsigned try_wait(unsigned bar, unsigned parity) {
  unsigned ok;
  asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
               : "=r"(ok) : "r"(bar), "r"(parity) : "memory");
  return ok;
}

template <int P, bool Bare>
__device__ __forceinline__ void wait_path(unsigned bar, unsigned parity, long long* s) {
  const long long start = clock64();
  unsigned ok = 0;
  long long first_false = 0, tries = 0;
  if (Bare) {
    ok = try_wait(bar, parity);
    tries += P + 1;
    if (!ok) first_false = clock64();
  }
  while (!ok) {
    ok = try_wait(bar, parity);
    tries += P + 1;
    if (!ok && !first_false) first_false = clock64();
  }
  const long long done = clock64();
  s[0] = start, s[1] = first_false, s[2] = done, s[3] = tries / (P + 1);
}

template <bool Bare>
__global__ void paths_kernel(int gap_x, int gap_y, bool copy, int b_mode, const int* src, long long* stamps) {
  const bool b_waits = b_mode == 1;
  // One wait per launch and block: in a loop, the block barrier between reps lets a warp whose path
  // finished run into the next rep while its other path still waits (seen on the H100), so the
  // reps' stamps would mix.  Each block on its own SM is one sample.
  __shared__ alignas(8) unsigned long long bar[2];
  __shared__ int landing[32];
  __shared__ long long path_stamps[2][4];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  init_barriers(bar);
  const long long t0 = clock64();
  long long* s = stamps + blockIdx.x * 16;
  if (lane == 0) s[10 + warp] = t0;
  if (warp == 0) {
    long long ta;
    do { ta = clock64(); } while (ta < t0 + kLead);
    long long mine[4];
    const int path = lane < 16 ? 0 : 1;
    if (path == 0) {
      wait_path<0, Bare>(smem_addr(&bar[0]), 0u, mine);
    } else if (b_waits) {
      wait_path<1, Bare>(smem_addr(&bar[1]), 0u, mine);
    } else if (b_mode == 2) {  // B runs a chain of gap_y dependent FMAs first, then goes to the join
      mine[0] = clock64();
      float x = float(lane);
      for (int i = 0; i < gap_y; ++i) x = fmaf(x, 1.0001f, 0.5f);
      mine[1] = __float_as_int(x) == 0x7fffffff;  // keeps the chain
      mine[2] = clock64();
      mine[3] = 0;
    } else {  // B goes straight to the join, where it waits for A
      mine[0] = mine[2] = clock64();
      mine[1] = 0, mine[3] = 0;
    }
    const long long joined = clock64();
    if (lane == 0 || lane == 16) {
      for (int i = 0; i < 4; ++i) path_stamps[path][i] = mine[i];
      s[13 + path] = joined;
    }
    __syncwarp();
    if (lane == 0)
      for (int i = 0; i < 8; ++i) s[i] = path_stamps[i / 4][i % 4];
  }
  if (warp == 1) {
    long long tb;
    do { tb = clock64(); } while (tb < t0 + kLead + gap_x);
    if (copy) {
      asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(smem_addr(&landing[lane])),
                   "l"(src + (size_t(blockIdx.x) * 32 + lane) * 64) : "memory");
      asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(smem_addr(&bar[0])) : "memory");
    } else {
      asm volatile("{ .reg .b64 st; mbarrier.arrive.shared::cta.b64 st, [%0]; }" ::"r"(smem_addr(&bar[0])) : "memory");
    }
    if (lane == 0) s[8] = tb;
  }
  if (warp == 2) {
    long long tc;
    do { tc = clock64(); } while (tc < t0 + kLead + gap_y);
    if (b_waits)
      asm volatile("{ .reg .b64 st; mbarrier.arrive.shared::cta.b64 st, [%0]; }" ::"r"(smem_addr(&bar[1])) : "memory");
    else
      tc = t0;  // warp 2 has nothing to do
    if (lane == 0) s[9] = tc;
  }
}

// The barrier at b gets this warp's arrivals gap cycles after t0; lane 0 stamps when (from t0).
__device__ __forceinline__ void arrive_at(unsigned long long* b, long long t0, int gap, int lane, long long* stamp) {
  long long t;
  do { t = clock64(); } while (t < t0 + gap);
  asm volatile("{ .reg .b64 st; mbarrier.arrive.shared::cta.b64 st, [%0]; }" ::"r"(smem_addr(b)) : "memory");
  if (lane == 0) *stamp = t - t0;
}

// Do a diverged warp's paths come back into step?  The partitioned pipeline's shape, one warp: each
// trip runs a P region (lanes 0-15) and then a C region (lanes 16-31), each behind its own join.  P
// waits (libcu++'s shape) on barrier X in trip p_trip, which warp 1 completes at gap_x; C waits on Y in
// trip c_trip, which warp 2 completes at gap_y.  A path whose wait polls lets the other past the joins
// (trywait_paths.csv), so the paths fall out of step; whether the one behind catches up and runs with
// the other again shows in the trips after both waits: each path stamps every trip (shared memory).
constexpr int kTrips = 8;

// After warp 0's trips: its paths' stamps, from t0, to global memory (lane 0, once both paths are done).
__device__ __forceinline__ void copy_trip_stamps(const long long (&trip_stamps)[2][kTrips], long long t0, int lane,
                                                 long long* s) {
  __syncwarp();
  if (lane == 0)
    for (int i = 0; i < 2 * kTrips; ++i) s[i] = trip_stamps[i / kTrips][i % kTrips] - t0;
}

// Swap: P is lanes 16-31 and C lanes 0-15 (P's region still first in each trip), to tell whether what
// happens to the lanes waiting at a join while the other path polls follows the lanes or the regions.
template <bool Swap>
__global__ void rejoin_kernel(int p_trip, int c_trip, int gap_x, int gap_y, long long* stamps) {
  __shared__ alignas(8) unsigned long long bar[2];
  __shared__ long long trip_stamps[2][kTrips];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  init_barriers(bar);
  const long long t0 = clock64();
  long long* s = stamps + blockIdx.x * (2 * kTrips + 2);
  if (warp == 0) {
    long long mine[4];
    // Two conditions written out (not one and its negation), as in the unswapped kernel: given a flag
    // and its negation nvcc makes one if/else of the regions (the first run of rejoin_fine).
    const int p_first = Swap ? 16 : 0, c_first = Swap ? 0 : 16;
    for (int i = 0; i < kTrips; ++i) {
      if (Swap ? lane >= 16 : lane < 16) {
        if (i == p_trip) wait_path<0, true>(smem_addr(&bar[0]), 0u, mine);
        const long long t = clock64();
        if (lane == p_first) trip_stamps[0][i] = t;
      }
      if (Swap ? lane < 16 : lane >= 16) {
        if (i == c_trip) wait_path<1, true>(smem_addr(&bar[1]), 0u, mine);
        const long long t = clock64();
        if (lane == c_first) trip_stamps[1][i] = t;
      }
    }
    copy_trip_stamps(trip_stamps, t0, lane, s);
  }
  if (warp == 1) arrive_at(&bar[0], t0, gap_x, lane, &s[2 * kTrips]);
  if (warp == 2) arrive_at(&bar[1], t0, gap_y, lane, &s[2 * kTrips + 1]);
}

// Does a loop around the producer region bring the paths back into step?  The partitioned
// pipeline's shape (the guide's with_specialized_staging_unified): per trip an inner fetch loop,
// whose counter f persists across trips (for (; f < n && f < trip + 2; ++f)), holding the P region
// (lanes 0-15), then the C region (lanes 16-31).  P waits (libcu++'s shape) in fetch p_fetch on
// barrier X, which warp 1 completes gap_x cycles after the start: short gaps end the wait within a
// poll or two, long ones after many.  Each path stamps each trip (P: its last fetch of the trip, C:
// its region); shape 0 is the same loops without the inner loop (P's region once per trip, as in
// rejoin_kernel).  Whether C waits for P after the wait shows in the trips after it.
__global__ void restep_kernel(int shape, int p_fetch, int gap_x, long long* stamps) {
  __shared__ alignas(8) unsigned long long bar[1];
  __shared__ long long trip_stamps[2][kTrips];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  init_barriers(bar);
  const long long t0 = clock64();
  long long* s = stamps + blockIdx.x * (2 * kTrips + 1);
  if (warp == 0) {
    long long mine[4];
    size_t f = 0;
    const size_t n = kTrips + 1;
    for (int i = 0; i < kTrips; ++i) {
      if (shape) {
        for (; f < n && f < size_t(i) + 2; ++f) {
          if (lane < 16) {
            if (int(f) == p_fetch) wait_path<0, true>(smem_addr(&bar[0]), 0u, mine);
            const long long t = clock64();
            if (lane == 0) trip_stamps[0][i] = t;
          }
        }
      } else if (lane < 16) {
        if (i == p_fetch) wait_path<0, true>(smem_addr(&bar[0]), 0u, mine);
        const long long t = clock64();
        if (lane == 0) trip_stamps[0][i] = t;
      }
      if (lane >= 16) {
        const long long t = clock64();
        if (lane == 16) trip_stamps[1][i] = t;
      }
    }
    copy_trip_stamps(trip_stamps, t0, lane, s);
  }
  if (warp == 1) arrive_at(&bar[0], t0, gap_x, lane, &s[2 * kTrips]);
}


// Does a path wait at the end of its region for the other path inside the next trip's fetch loop?
// The partitioned pipeline's shape (restep_kernel's shape 1, whose fetch loop and the region after it
// ptxas may give one convergence-barrier register, as pipelines.sass gives the guide's fetch loop and
// consumer region B0) with a wait in each region: C (lanes 16-31) waits on Y in trip c_trip, P (lanes
// 0-15) on X in fetch p_fetch.  With C's wait long P goes ahead (trywait_rejoin_fine.csv) into the next
// trip's fetch loop and waits there on X; when Y comes C stamps its trip and reaches its region's join.
// If that join waits for P (a barrier register P set on entering the fetch loop), C's next stamp comes
// after X; if not, C runs its next trip at once.
__global__ void siblings_kernel(int p_fetch, int c_trip, int gap_x, int gap_y, long long* stamps) {
  __shared__ alignas(8) unsigned long long bar[2];
  __shared__ long long trip_stamps[2][kTrips];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  init_barriers(bar);
  const long long t0 = clock64();
  long long* s = stamps + blockIdx.x * (2 * kTrips + 2);
  if (warp == 0) {
    long long mine[4];
    size_t f = 0;
    const size_t n = kTrips + 1;
    for (int i = 0; i < kTrips; ++i) {
      for (; f < n && f < size_t(i) + 2; ++f) {
        if (lane < 16) {
          if (int(f) == p_fetch) wait_path<0, true>(smem_addr(&bar[0]), 0u, mine);
          const long long t = clock64();
          if (lane == 0) trip_stamps[0][i] = t;
        }
      }
      if (lane >= 16) {
        if (i == c_trip) wait_path<1, true>(smem_addr(&bar[1]), 0u, mine);
        const long long t = clock64();
        if (lane == 16) trip_stamps[1][i] = t;
      }
    }
    copy_trip_stamps(trip_stamps, t0, lane, s);
  }
  if (warp == 1) arrive_at(&bar[0], t0, gap_x, lane, &s[2 * kTrips]);
  if (warp == 2) arrive_at(&bar[1], t0, gap_y, lane, &s[2 * kTrips + 1]);
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

// Each path's success after its own barrier's completing arrive, and after the other's; which path
// tried first; how many tries each took.
int paths(int argc, char** argv) {
  FILE* f = open_csv(argc, argv, "trywait_paths.csv",
                     "first_try,variant,gap_x,gap_y,a_first_try_minus_b_median,a_done_after_x_median,b_done_after_y_median,"
                     "a_done_after_try_median,b_done_after_try_median,a_tries_median,b_tries_median,"
                     "a_first_false_after_try_median,b_first_false_after_try_median,b_joined_after_a_done_median,reps");
  long long* d;
  int* src;
  const int sms = sm_count();
  CK(cudaMalloc(&d, size_t(sms) * 16 * sizeof(long long)));
  CK(cudaMalloc(&src, size_t(sms) * 32 * 64 * sizeof(int)));
  CK(cudaMemset(src, 1, size_t(sms) * 32 * 64 * sizeof(int)));
  L2Flusher flusher;
  std::vector<long long> h(size_t(sms) * 16);
  const std::vector<std::array<int, 2>> gaps = {{500, 3000}, {3000, 500}, {500, 12000}, {12000, 500}, {1500, 1500}, {200, 800},
                         {800, 200},  {3000, 3000}, {6000, 12000}, {12000, 6000}, {12000, 20000}, {20000, 12000}};
  paths_kernel<false><<<sms, 96>>>(500, 500, false, 1, src, d);  // warms the code
  paths_kernel<true><<<sms, 96>>>(500, 500, false, 1, src, d);
  CK_LAUNCH();
  // solo: only A waits; B goes to the join (the partitioned pipeline in step: the consumers wait, the
  // producers are at the join).  gap_y is then unused.
  const std::vector<std::array<int, 2>> solo_gaps = {{50, 0}, {100, 0}, {150, 0}, {200, 0}, {250, 0}, {300, 0}, {500, 0}, {1000, 0}, {3000, 0}, {9000, 0}};
  // busy: B runs gap_y dependent FMAs (~4 cycles each) before the join while A polls: whether A's polls go on
  // while the warp's other path runs
  const std::vector<std::array<int, 2>> busy_gaps = {{300, 250}, {300, 750}, {1000, 750}, {300, 0}};
  for (int bare : {0, 1})
  for (int b_mode : {1, 0, 2})
  for (int copy : {0, 1})
    for (const auto& g : b_mode == 1 ? gaps : b_mode == 0 ? solo_gaps : busy_gaps) {
      if (b_mode == 2 && copy) break;
      const bool b_waits = b_mode == 1;
      flusher.flush();
      if (bare)
        paths_kernel<true><<<sms, 96>>>(g[0], g[1], copy, b_mode, src, d);
      else
        paths_kernel<false><<<sms, 96>>>(g[0], g[1], copy, b_mode, src, d);
      CK_LAUNCH();
      CK(cudaMemcpy(h.data(), d, h.size() * sizeof(long long), cudaMemcpyDeviceToHost));
      std::vector<long long> order, ax, by, at, bt, atr, btr, aff, bff, bj;
      for (int r = 0; r < sms; ++r) {
        const long long* s = &h[r * 16];
        if (r < 4)  // a few reps whole, relative to A's first try: the medians hide which path gave way
          printf("# %s %s %d/%d r%d: A try 0 false %lld done %lld tries %lld | B try %lld false %lld done %lld tries %lld | X %lld Y %lld | t0 %lld %lld %lld | joined %lld %lld\n",
                 bare ? "bare" : "yield", b_mode == 2 ? "busy_arrive" : b_waits ? (copy ? "copy" : "arrive") : (copy ? "solo_copy" : "solo_arrive"), g[0], g[1], r, s[1] ? s[1] - s[0] : -1, s[2] - s[0], s[3], s[4] - s[0],
                 s[5] ? s[5] - s[0] : -1, s[6] - s[0], s[7], s[8] - s[0], s[9] - s[0], s[10] - s[0], s[11] - s[0],
                 s[12] - s[0], s[13] - s[0], s[14] - s[0]);
        order.push_back(s[0] - s[4]);
        ax.push_back(s[2] - s[8]);
        by.push_back(s[6] - s[9]);
        at.push_back(s[2] - s[0]);
        bt.push_back(s[6] - s[4]);
        atr.push_back(s[3]);
        btr.push_back(s[7]);
        aff.push_back(s[1] ? s[1] - s[0] : -1);
        bff.push_back(s[5] ? s[5] - s[4] : -1);
        bj.push_back(s[14] - s[2]);
      }
      ROW(f, "%s,%s,%d,%d,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%d\n", bare ? "bare" : "yield",
          b_mode == 2 ? "busy_arrive" : b_waits ? (copy ? "copy" : "arrive") : (copy ? "solo_copy" : "solo_arrive"), g[0], g[1],
          median(order), median(ax), median(by), median(at), median(bt), median(atr), median(btr), median(aff),
          median(bff), median(bj), sms);
    }
  fclose(f);
  CK(cudaFree(d));
  CK(cudaFree(src));
  return 0;
}

// Per case and trip, the median over blocks of each path's stamp (cycles from the block's start).
// rejoin_fine: the one-wait cases with C's wait ending 50 cycles apart from just before its try to
// ~500 cycles after it, and p_only and c_only again, each with the lanes as in rejoin and swapped.
int rejoin(int argc, char** argv, bool fine) {
  FILE* f = open_csv(argc, argv, fine ? "trywait_rejoin_fine.csv" : "trywait_rejoin.csv",
                     fine ? "swap,case,p_trip,c_trip,gap_x,gap_y,trip,p_stamp_median,c_stamp_median,x_median,y_median,blocks"
                          : "case,p_trip,c_trip,gap_x,gap_y,trip,p_stamp_median,c_stamp_median,x_median,y_median,blocks");
  const int sms = sm_count();
  const int per = 2 * kTrips + 2;
  long long* d;
  CK(cudaMalloc(&d, size_t(sms) * per * sizeof(long long)));
  std::vector<long long> h(size_t(sms) * per);
  struct Case { const char* name; int p_trip, c_trip, gap_x, gap_y; };
  const Case cases[] = {
      {"none", -1, -1, 0, 0},                   // no wait: in step throughout
      {"p_only", 2, -1, 2000, 0},               // P polls in trip 2; C runs on to the end
      {"c_only", -1, 2, 0, 2000},               // C polls in trip 2
      {"p_then_c", 2, 4, 1000, 4000},           // P behind, then C polls in trip 4 while P catches up
      {"c_then_p", 4, 2, 4000, 1000},           // C behind, then P polls in trip 4 while C catches up
      {"p_then_c_late", 2, 5, 1000, 6000},
      {"c_then_p_late", 5, 2, 6000, 1000},
  };
  std::vector<Case> fine_cases = {{"none", -1, -1, 0, 0}, {"p_only", 2, -1, 2000, 0}, {"c_only", -1, 2, 0, 2000}};
  for (int gap = 800; gap <= 1400; gap += 50) fine_cases.push_back({"c_only", -1, 2, 0, gap});
  for (int gap = 700; gap <= 1300; gap += 50) fine_cases.push_back({"p_only", 2, -1, gap, 0});
  rejoin_kernel<false><<<sms, 96>>>(-1, -1, 0, 0, d);  // warms the code
  rejoin_kernel<true><<<sms, 96>>>(-1, -1, 0, 0, d);
  CK_LAUNCH();
  for (int swap = 0; swap < (fine ? 2 : 1); ++swap)
  for (const Case& c : fine ? fine_cases : std::vector<Case>(std::begin(cases), std::end(cases))) {
    if (swap)
      rejoin_kernel<true><<<sms, 96>>>(c.p_trip, c.c_trip, c.gap_x, c.gap_y, d);
    else
      rejoin_kernel<false><<<sms, 96>>>(c.p_trip, c.c_trip, c.gap_x, c.gap_y, d);
    CK_LAUNCH();
    CK(cudaMemcpy(h.data(), d, h.size() * sizeof(long long), cudaMemcpyDeviceToHost));
    for (int b = 0; b < 2; ++b) {
      printf("# %s block %d: P", c.name, b);
      for (int i = 0; i < kTrips; ++i) printf(" %lld", h[size_t(b) * per + i]);
      printf(" | C");
      for (int i = 0; i < kTrips; ++i) printf(" %lld", h[size_t(b) * per + kTrips + i]);
      printf(" | X %lld Y %lld\n", h[size_t(b) * per + 2 * kTrips], h[size_t(b) * per + 2 * kTrips + 1]);
    }
    std::vector<long long> x, y;
    for (int b = 0; b < sms; ++b) x.push_back(h[size_t(b) * per + 2 * kTrips]), y.push_back(h[size_t(b) * per + 2 * kTrips + 1]);
    for (int i = 0; i < kTrips; ++i) {
      std::vector<long long> ps, cs;
      for (int b = 0; b < sms; ++b) ps.push_back(h[size_t(b) * per + i]), cs.push_back(h[size_t(b) * per + kTrips + i]);
      if (fine) ROW(f, "%d,", swap);
      ROW(f, "%s,%d,%d,%d,%d,%d,%.1f,%.1f,%.1f,%.1f,%d\n", c.name, c.p_trip, c.c_trip, c.gap_x, c.gap_y, i, median(ps),
          median(cs), median(x), median(y), sms);
    }
  }
  fclose(f);
  CK(cudaFree(d));
  return 0;
}

// Per shape, gap and trip, the median over blocks of each path's stamp (cycles from the block's start).
// restep_fine: gaps 20 cycles apart from just before P's try to ~250 cycles after it (the coarse run
// has X ~10 or ~210 cycles after the try and nothing between), for where a wait stops re-stepping
// and when the released lanes go on.
int restep(int argc, char** argv, bool fine) {
  FILE* f = open_csv(argc, argv, fine ? "trywait_restep_fine.csv" : "trywait_restep.csv",
                     "shape,p_fetch,gap_x,trip,p_stamp_median,c_stamp_median,c_minus_p_median,x_median,blocks");
  const int sms = sm_count();
  const int per = 2 * kTrips + 1;
  long long* d;
  CK(cudaMalloc(&d, size_t(sms) * per * sizeof(long long)));
  std::vector<long long> h(size_t(sms) * per);
  restep_kernel<<<sms, 64>>>(1, -1, 0, d);  // warms the code
  CK_LAUNCH();
  std::vector<int> gaps[2];
  for (int shape : {0, 1}) {
    if (!fine) {
      gaps[shape] = {0, 500, 700, 800, 900, 1000, 1200, 1500, 2000, 3000};
      continue;
    }
    gaps[shape] = {0};
    const int first = shape ? 960 : 860;  // P's try is at ~990 (shape 1) or ~880 (shape 0)
    for (int gap = first; gap <= first + 300; gap += 20) gaps[shape].push_back(gap);
  }
  for (int shape : {0, 1})
    for (int gap : gaps[shape]) {
      const int p_fetch = gap ? 3 : -1;
      restep_kernel<<<sms, 64>>>(shape, p_fetch, gap, d);
      CK_LAUNCH();
      CK(cudaMemcpy(h.data(), d, h.size() * sizeof(long long), cudaMemcpyDeviceToHost));
      printf("# shape %d gap %d block 0: P", shape, gap);
      for (int i = 0; i < kTrips; ++i) printf(" %lld", h[i]);
      printf(" | C");
      for (int i = 0; i < kTrips; ++i) printf(" %lld", h[kTrips + i]);
      printf(" | X %lld\n", h[2 * kTrips]);
      std::vector<long long> x;
      for (int b = 0; b < sms; ++b) x.push_back(h[size_t(b) * per + 2 * kTrips]);
      for (int i = 0; i < kTrips; ++i) {
        std::vector<long long> ps, cs, diff;
        for (int b = 0; b < sms; ++b) {
          ps.push_back(h[size_t(b) * per + i]), cs.push_back(h[size_t(b) * per + kTrips + i]);
          diff.push_back(cs.back() - ps.back());
        }
        ROW(f, "%d,%d,%d,%d,%.1f,%.1f,%.1f,%.1f,%d\n", shape, p_fetch, gap, i, median(ps), median(cs), median(diff),
            median(x), sms);
      }
    }
  fclose(f);
  CK(cudaFree(d));
  return 0;
}

// Per case and trip, the median over blocks of each path's stamp (cycles from the block's start).
int siblings(int argc, char** argv) {
  FILE* f = open_csv(argc, argv, "trywait_siblings.csv",
                     "case,p_fetch,c_trip,gap_x,gap_y,trip,p_stamp_median,c_stamp_median,x_median,y_median,blocks");
  const int sms = sm_count();
  const int per = 2 * kTrips + 2;
  long long* d;
  CK(cudaMalloc(&d, size_t(sms) * per * sizeof(long long)));
  std::vector<long long> h(size_t(sms) * per);
  struct Case { const char* name; int p_fetch, c_trip, gap_x, gap_y; };
  const Case cases[] = {
      {"none", -1, -1, 0, 0},
      {"c_only", -1, 2, 0, 2000},        // C polls in trip 2: P goes ahead
      {"c_then_p", 4, 2, 3000, 2000},    // and P waits in fetch 4 (trip 3's) until after Y
      {"c_then_p_long", 4, 2, 4000, 2000},
      {"c_then_p_short", 4, 2, 2300, 2000},
      {"p_only", 4, -1, 3000, 0},        // P waits in fetch 4 alone
  };
  siblings_kernel<<<sms, 96>>>(-1, -1, 0, 0, d);  // warms the code
  CK_LAUNCH();
  for (const Case& c : cases) {
    siblings_kernel<<<sms, 96>>>(c.p_fetch, c.c_trip, c.gap_x, c.gap_y, d);
    CK_LAUNCH();
    CK(cudaMemcpy(h.data(), d, h.size() * sizeof(long long), cudaMemcpyDeviceToHost));
    std::vector<long long> x, y;
    for (int b = 0; b < sms; ++b) x.push_back(h[size_t(b) * per + 2 * kTrips]), y.push_back(h[size_t(b) * per + 2 * kTrips + 1]);
    for (int i = 0; i < kTrips; ++i) {
      std::vector<long long> ps, cs;
      for (int b = 0; b < sms; ++b) ps.push_back(h[size_t(b) * per + i]), cs.push_back(h[size_t(b) * per + kTrips + i]);
      ROW(f, "%s,%d,%d,%d,%d,%d,%.1f,%.1f,%.1f,%.1f,%d\n", c.name, c.p_fetch, c.c_trip, c.gap_x, c.gap_y, i, median(ps),
          median(cs), median(x), median(y), sms);
    }
  }
  fclose(f);
  CK(cudaFree(d));
  return 0;
}

int main(int argc, char** argv) {
  if (argc > 2 && std::string(argv[2]) == "partial") return partial(argc, argv);
  if (argc > 2 && std::string(argv[2]) == "paths") return paths(argc, argv);
  if (argc > 2 && std::string(argv[2]) == "rejoin") return rejoin(argc, argv, false);
  if (argc > 2 && std::string(argv[2]) == "rejoin_fine") return rejoin(argc, argv, true);
  if (argc > 2 && std::string(argv[2]) == "siblings") return siblings(argc, argv);
  if (argc > 2 && std::string(argv[2]) == "restep_fine") return restep(argc, argv, true);
  if (argc > 2 && std::string(argv[2]) == "restep") return restep(argc, argv, false);
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

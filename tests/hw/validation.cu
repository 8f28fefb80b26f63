// A validation set for smsim (traces/h100/validation.csv, validation_primitives.csv): the documented
// cuda::pipeline examples at the launches users run, not only pipelines.csv's one block per SM and
// 64 batches. Validation only: nothing here is fitted.
//
//  * the guide's kernels from examples.cuh (the same code as pipelines.cu): with_single_stage,
//    with_staging_unified<1,2,3,4,8>, with_staging_scope_thread<2,4>,
//    with_specialized_staging_unified<2>;
//    blocks_per_sm 1/2/4/8 (grid = SMs x blocks_per_sm), block 128/256 across the grid, 64/512/1024 at
//    a few points, k 0/32/128/512, input from DRAM (L2 flushed) and from L2 (where input + output
//    fit: at most 34.6 MB), batch_sz 64, plus long inputs (batch_sz 1552, one block per SM);
//  * primitive_copies (kernels/primitive_copies.json): one warp per SM; per batch each lane issues one
//    4-byte and sixteen 16-byte __pipeline_memcpy_async, in D divergent branches
//    (for g < D: if (lane % D == g) { copies; commit }) or converged (the commit after that loop),
//    then __pipeline_wait_prior(1) and compute(); wait_prior(0) for the last batch;
//  * diverged_commit (kernels/diverged_commit.json; the kernel of tests/hw/diverged_commit.cu) at 1
//    and 4 blocks per SM, modes direct (per_group 0) and per_group.
//
// Timing as pipelines.cu: thread 0's clock64 from kernel entry to after the loop plus a
// __syncthreads, / batch_sz; median, min, max over all blocks x reps. With several blocks per SM a
// block's time is not the SM's: cycles_per_batch_sm_span_median/_max give, per SM and repetition,
// its first block's start to its last block's end (one SM's clock64) / batch_sz, the median and
// the maximum over SMs x reps (= the block time at one block per SM). Co-residency: the occupancy
// API must allow blocks_per_sm blocks, and every block records %smid and its raw start and end
// clock64: each SM must have run exactly blocks_per_sm blocks of the launch, all overlapping in time
// (the latest start before the earliest end), in every repetition (resident_check ok / FAIL).
// Every output is checked bit for bit against the host (mismatches), on the first repetition of
// each source; primitive_copies also checks the 16-byte copies of its last two batches.
//
// Usage: validation OUTDIR [BUDGET_S] -> OUTDIR/validation.csv, OUTDIR/validation_primitives.csv
//                                      (no configuration starts after BUDGET_S seconds; 330)
//        validation OUTDIR holdout -> OUTDIR/holdout.csv (holdout_set: launches the set above leaves out)
//        validation OUTDIR primitives_holdout -> OUTDIR/holdout_primitives.csv (the over-wait kernels
//                                                at other occupancies)
//        validation --ncu OUTDIR [KERNEL:STAGES:BS:BPS:K[:D:PER_GROUP] ...]
//                                   -> one launch per profiled configuration (the list given, or
//                                      kNcu; D and PER_GROUP for primitive_copies and
//                                      diverged_commit, whose BS is then ignored), in the order of
//                                      OUTDIR/ncu_configs.csv (run it under ncu_profile.sh)
#include <cuda_pipeline.h>
#include <cassert>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include "common.cuh"

namespace {

constexpr int kReps = 5;

// Per block: block cycles, raw start and end clock64 (one SM's counter), %smid.
constexpr int kRec = 4;
__device__ __forceinline__ void stamp_end(long long t0, long long* rec) {
  __syncthreads();
  if (threadIdx.x == 0) {
    const long long t1 = clock64();
    unsigned smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    rec[kRec * blockIdx.x + 0] = t1 - t0;
    rec[kRec * blockIdx.x + 1] = t0;
    rec[kRec * blockIdx.x + 2] = t1;
    rec[kRec * blockIdx.x + 3] = smid;
  }
}

}  // namespace

// The guide's kernels, exactly as pipelines.cu times them; they call stamp_end above.
#include "examples.cuh"

namespace {

// ------------------------------------------------------------------ primitive_copies

constexpr int kPcStages = 2;    // __pipeline_wait_prior(1)
constexpr int kPcChunks = 16;   // sixteen 16-byte copies per lane and batch
constexpr int kPcBlock = 32;    // one warp
constexpr int kPcStageInts = kPcBlock + kPcChunks * 4 * kPcBlock;  // 4-byte part, then the 16-byte part

// kernels/primitive_copies.json. in_small: one int per thread and batch (the examples' layout);
// in_big: per batch and block 16 x blockDim int4, chunk j of thread t at j * blockDim + t.
// compute() is the examples' (LDS of the thread's 4-byte element, k FMAs, STG). After the timed
// region every thread xor-folds the 16-byte data of the last two batches into big_sink.
template <bool kPerGroup>
__global__ void primitive_copies(int* global_out, const int* in_small, const int4* in_big, int divergence,
                                 int batch_sz, int k, long long* rec, int* big_sink) {
  const long long t0 = clock64();
  __shared__ alignas(16) int shared[kPcStages * kPcStageInts];
  const int tid = threadIdx.x;
  const int group = (tid % 32) % divergence;
  const int grid_size = gridDim.x * blockDim.x;
  auto block_batch = [&](int batch) { return blockIdx.x * blockDim.x + grid_size * batch; };
  auto copies = [&](int batch) {
    int* st = shared + (batch % kPcStages) * kPcStageInts;
    __pipeline_memcpy_async(st + tid, in_small + block_batch(batch) + tid, 4);
    int4* dst = reinterpret_cast<int4*>(st + blockDim.x);
    const int4* src = in_big + size_t(block_batch(batch)) * kPcChunks;
#pragma unroll
    for (int j = 0; j < kPcChunks; ++j)
      __pipeline_memcpy_async(dst + j * blockDim.x + tid, src + j * blockDim.x + tid, 16);
  };
  for (int batch = 0; batch < batch_sz; ++batch) {
    for (int g = 0; g < divergence; ++g) {
      if (group == g) {
        copies(batch);
        if (kPerGroup) __pipeline_commit();
      }
    }
    if (!kPerGroup) __pipeline_commit();
    if (batch >= 1) {
      __pipeline_wait_prior(1);
      const int b = batch - 1;
      compute(global_out + block_batch(b), shared + (b % kPcStages) * kPcStageInts, tid, k);
    }
  }
  __pipeline_wait_prior(0);
  {
    const int b = batch_sz - 1;
    compute(global_out + block_batch(b), shared + (b % kPcStages) * kPcStageInts, tid, k);
  }
  stamp_end(t0, rec);
  // Not timed: the 16-byte copies of the last two batches, folded per thread.
  for (int s = 0; s < kPcStages; ++s) {
    const int* big = shared + s * kPcStageInts + blockDim.x;
    int x = 0;
    for (int j = 0; j < kPcChunks; ++j)
      for (int w = 0; w < 4; ++w) x ^= big[(j * blockDim.x + tid) * 4 + w];
    big_sink[(blockIdx.x * blockDim.x + tid) * kPcStages + s] = x;
  }
}

// ------------------------------------------------------------------ diverged_commit

// tests/hw/diverged_commit.cu's kernel, copied; only the end stamp is stamp_end (it also records
// %smid and the raw clocks). Mode 0 = "direct" (per_group 0), 2 = "per_group".
constexpr int kDcStages = 2;
template <int kMode>
__global__ void diverged_commit(int* global_out, const int* global_in, int divergence, int batch_sz, int k,
                                long long* cycles, float* work_sink) {
  const long long t0 = clock64();
  extern __shared__ int shared[];  // kDcStages * blockDim.x ints
  const int tid = threadIdx.x;
  const int group = (tid % 32) % divergence;
  const int grid_size = gridDim.x * blockDim.x;
  auto block_batch = [&](int batch) { return blockIdx.x * blockDim.x + grid_size * batch; };
  float work = float(tid);

  for (int fetch = 0; fetch < batch_sz + kDcStages - 1; ++fetch) {
    if (fetch < batch_sz) {
      for (int j = 0; j < group; ++j) work = fmaf(work, kMul, kAdd);
      __pipeline_memcpy_async(&shared[(fetch % kDcStages) * blockDim.x + tid], &global_in[block_batch(fetch) + tid], 4);
    }
    if (kMode == 1) __syncwarp();
    if (kMode == 2) {
      for (int g = 0; g < divergence; ++g)
        if (group == g) __pipeline_commit();
    } else {
      __pipeline_commit();
    }
    __syncwarp();
    if (fetch >= kDcStages - 1) {
      const int b = fetch - (kDcStages - 1);
      __pipeline_wait_prior(kDcStages - 1);
      float v = float(shared[(b % kDcStages) * blockDim.x + tid]);
      for (int i = 0; i < k; i += 8) {
#pragma unroll
        for (int j = 0; j < 8; ++j) v = fmaf(v, kMul, kAdd);
      }
      global_out[block_batch(b) + tid] = __float_as_int(v);
    }
  }
  stamp_end(t0, cycles);
  work_sink[blockIdx.x * blockDim.x + tid] = work;
}

// ------------------------------------------------------------------ helpers

__host__ __device__ inline uint64_t mix(uint64_t x) {  // splitmix64
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
constexpr int kRange = 1 << 15;      // inputs are random in [-kRange, kRange)
constexpr int kPoison = 0x7fbadbad;  // a NaN pattern no compute() result can take
__host__ __device__ inline int input_value(uint64_t seed, size_t i) {
  return int(mix(seed * 0x100000001b3ull + i) % (2u * kRange)) - kRange;
}

__global__ void fill_input(int* p, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = input_value(seed, i);
}
__global__ void fill_value(int* p, size_t n, int v) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) p[i] = v;
}
__global__ void clock_spin(unsigned long long ns, long long* out) {  // SM clock: clock64 over %globaltimer
  unsigned long long g0, g1, g;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g0));
  const long long c0 = clock64();
  do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g)); while (g - g0 < ns);
  const long long c1 = clock64();
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g1));
  out[0] = c1 - c0;
  out[1] = (long long)(g1 - g0);
}

double sm_clock_mhz() {
  long long* d;
  CK(cudaMalloc(&d, 2 * sizeof(long long)));
  std::vector<double> v;
  for (int i = 0; i < 3; ++i) {
    clock_spin<<<1, 1>>>(20000000ull, d);
    CK_LAUNCH();
    long long h[2];
    CK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    v.push_back(double(h[0]) / double(h[1]) * 1e3);
  }
  CK(cudaFree(d));
  return median(v);
}

// Runs f(lo, hi) over [0, n) on all host cores and sums the results.
template <typename F>
size_t parallel_count(size_t n, F f) {
  const unsigned nt = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
  std::vector<size_t> part(nt, 0);
  std::vector<std::thread> th;
  for (unsigned t = 0; t < nt; ++t)
    th.emplace_back([&, t] { part[t] = f(n * t / nt, n * (t + 1) / nt); });
  for (auto& x : th) x.join();
  size_t s = 0;
  for (size_t p : part) s += p;
  return s;
}

// table[x + kRange] = the chain of k FMAs from float(x), bits (host fmaf = FFMA, correctly rounded).
const std::vector<int>& chain_table(int k) {
  static std::map<int, std::vector<int>> cache;
  auto it = cache.find(k);
  if (it != cache.end()) return it->second;
  std::vector<int> t(2 * kRange);
  for (int x = -kRange; x < kRange; ++x) {
    float v = float(x);
    for (int i = 0; i < k; ++i) v = std::fmaf(v, kMul, kAdd);
    memcpy(&t[x + kRange], &v, 4);
  }
  return cache[k] = std::move(t);
}

// Residency: every SM ran exactly bps blocks, all overlapping. Returns "" if fine, else why.
std::string residency(const std::vector<long long>& rec, int nblocks, int sms, int bps) {
  std::map<long long, std::vector<int>> by_sm;
  for (int b = 0; b < nblocks; ++b) by_sm[rec[kRec * b + 3]].push_back(b);
  char why[256];
  if (int(by_sm.size()) != sms) {
    snprintf(why, sizeof why, "%zu SMs ran blocks (want %d)", by_sm.size(), sms);
    return why;
  }
  for (auto& [sm, bl] : by_sm) {
    if (int(bl.size()) != bps) {
      snprintf(why, sizeof why, "SM %lld ran %zu blocks (want %d)", sm, bl.size(), bps);
      return why;
    }
    long long last_start = LLONG_MIN, first_end = LLONG_MAX;
    for (int b : bl) {
      last_start = std::max(last_start, rec[kRec * b + 1]);
      first_end = std::min(first_end, rec[kRec * b + 2]);
    }
    if (last_start >= first_end) {
      snprintf(why, sizeof why, "SM %lld: a block started %lld cycles after another ended", sm, last_start - first_end);
      return why;
    }
  }
  return "";
}

struct Timing {
  std::vector<long long> cycles;  // block cycles, all blocks x reps
  std::vector<long long> spans;   // per SM and rep: its first block's start to its last block's end
  std::string resident_fail;      // first failure, "" = ok
  void add(const std::vector<long long>& rec, int nblocks, int sms, int bps) {
    std::map<long long, std::pair<long long, long long>> sm;
    for (int b = 0; b < nblocks; ++b) {
      cycles.push_back(rec[kRec * b]);
      auto it = sm.emplace(rec[kRec * b + 3], std::make_pair(LLONG_MAX, LLONG_MIN)).first;
      it->second.first = std::min(it->second.first, rec[kRec * b + 1]);
      it->second.second = std::max(it->second.second, rec[kRec * b + 2]);
    }
    for (auto& [id, se] : sm) spans.push_back(se.second - se.first);
    if (resident_fail.empty()) resident_fail = residency(rec, nblocks, sms, bps);
  }
  // cycles_per_batch_median,_min,_max,block_cycles_median,mismatches,resident_check,
  // cycles_per_batch_sm_span_median,_max
  void print(FILE* f, int batch_sz, size_t bad) const {
    const double med = median(cycles);
    ROW(f, "%.1f,%.1f,%.1f,%.0f,%zu,%s,%.1f,%.1f\n", med / batch_sz,
        double(*std::min_element(cycles.begin(), cycles.end())) / batch_sz,
        double(*std::max_element(cycles.begin(), cycles.end())) / batch_sz, med, bad,
        resident_fail.empty() ? "ok" : "FAIL", median(spans) / batch_sz,
        double(*std::max_element(spans.begin(), spans.end())) / batch_sz);
    if (!resident_fail.empty()) printf("  residency FAIL: %s\n", resident_fail.c_str());
  }
};

using PipeKernel = void (*)(int*, int const*, size_t, size_t, int, long long*);
struct Variant {
  const char* name;
  int stages;
  PipeKernel fn;
  bool half_written;  // the specialized example only produces block.size()/2 elements per block and batch
};
const Variant kVariants[] = {
    {"with_single_stage", 1, with_single_stage, false},
    {"with_staging_unified", 1, with_staging_unified<1>, false},
    {"with_staging_unified", 2, with_staging_unified<2>, false},
    {"with_staging_unified", 3, with_staging_unified<3>, false},
    {"with_staging_unified", 4, with_staging_unified<4>, false},
    {"with_staging_unified", 8, with_staging_unified<8>, false},
    {"with_staging_scope_thread", 2, with_staging_scope_thread<2>, false},
    {"with_staging_scope_thread", 4, with_staging_scope_thread<4>, false},
    {"with_specialized_staging_unified", 2, with_specialized_staging_unified<2>, true},
};
const Variant* find_variant(const char* name, int stages) {
  for (const Variant& v : kVariants)
    if (!strcmp(v.name, name) && v.stages == stages) return &v;
  fprintf(stderr, "no variant %s<%d>\n", name, stages);
  exit(1);
}

struct PipeConfig {
  const Variant* v;
  int bs, bps, k, batch_sz;
  bool dram, l2;
};
constexpr double kL2MaxFootprint = 36e6;  // input + output bytes for an L2 row (L2 is 50 MB)

struct Ctx {
  int sms;
  L2Flusher flusher;
  int *din = nullptr, *dout = nullptr, *hout = nullptr;
  size_t cap = 0;  // ints in din / dout / hout
  long long* drec = nullptr;
  std::vector<long long> rec;
  uint64_t seed = 20261125;
  size_t failures = 0;
  int resident_failures = 0, rows = 0;
  void ensure(size_t n) {
    if (n <= cap) return;
    if (din) { CK(cudaFree(din)); CK(cudaFree(dout)); CK(cudaFreeHost(hout)); }
    CK(cudaMalloc(&din, n * 4));
    CK(cudaMalloc(&dout, n * 4));
    CK(cudaMallocHost(&hout, n * 4));
    cap = n;
  }
  void fill(int* p, size_t n, uint64_t s) { fill_input<<<1024, 256>>>(p, n, s); CK_LAUNCH(); }
  void poison(int* p, size_t n) { fill_value<<<1024, 256>>>(p, n, kPoison); CK_LAUNCH(); }
  const std::vector<long long>& fetch_rec(int nblocks) {
    rec.resize(size_t(kRec) * nblocks);
    CK(cudaMemcpy(rec.data(), drec, rec.size() * sizeof(long long), cudaMemcpyDeviceToHost));
    return rec;
  }
};

void write_row(FILE* f, const char* lead, const PipeConfig& c, int grid_blocks, const char* src, const Timing& t,
               size_t bad) {
  ROW(f, "%s,%d,%d,%d,%d,%d,%s,%d,", lead, c.bs, c.bps, c.k, c.batch_sz, grid_blocks, src, kReps);
  t.print(f, c.batch_sz, bad);
}

size_t check_pipe(Ctx& x, uint64_t seed, size_t size, int k, int bs, size_t grid_size, bool half) {
  CK(cudaMemcpy(x.hout, x.dout, size * 4, cudaMemcpyDeviceToHost));
  const std::vector<int>& table = chain_table(k);
  const int* out = x.hout;
  return parallel_count(size, [&](size_t lo, size_t hi) {
    size_t bad = 0;
    for (size_t i = lo; i < hi; ++i) {
      const int t = int((i % grid_size) % size_t(bs));
      const bool written = !half || t < bs / 2;
      const int want = written ? table[input_value(seed, i) + kRange] : kPoison;
      if (out[i] != want) {
        if (bad < 2) fprintf(stderr, "  mismatch at %zu: got 0x%08x want 0x%08x\n", i, out[i], want);
        ++bad;
      }
    }
    return bad;
  });
}

void run_pipe(Ctx& x, FILE* f, const PipeConfig& c) {
  const Variant& v = *c.v;
  const size_t smem = size_t(v.stages) * c.bs * sizeof(int);
  int occ = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, v.fn, c.bs, smem));
  if (occ < c.bps) {
    printf("  skip %s<%d> block %d x %d per SM: occupancy allows %d\n", v.name, v.stages, c.bs, c.bps, occ);
    return;
  }
  const int nblocks = x.sms * c.bps;
  const size_t grid_size = size_t(nblocks) * c.bs;
  const size_t size = size_t(c.batch_sz) * grid_size;
  x.ensure(size);
  const uint64_t seed = ++x.seed;
  x.fill(x.din, size, seed);
  char lead[96];
  snprintf(lead, sizeof lead, "%s,%d", v.name, v.stages);
  for (int l2 = 0; l2 < 2; ++l2) {
    if (l2 ? !c.l2 : !c.dram) continue;
    Timing t;
    size_t bad = 0;
    for (int r = 0; r < kReps; ++r) {
      if (l2) {  // the warm-up launch puts the input in L2; the first repetition is poisoned after it
        v.fn<<<nblocks, c.bs, smem>>>(x.dout, x.din, size, c.batch_sz, c.k, x.drec);
        CK_LAUNCH();
        if (r == 0) x.poison(x.dout, size);
      } else {  // poisoned first, then L2 flushed: input and output start in DRAM in every repetition
        if (r == 0) x.poison(x.dout, size);
        x.flusher.flush();
      }
      v.fn<<<nblocks, c.bs, smem>>>(x.dout, x.din, size, c.batch_sz, c.k, x.drec);
      CK_LAUNCH();
      t.add(x.fetch_rec(nblocks), nblocks, x.sms, c.bps);
      if (r == 0) bad = check_pipe(x, seed, size, c.k, c.bs, grid_size, v.half_written);
    }
    x.failures += bad;
    x.resident_failures += !t.resident_fail.empty();
    x.rows++;
    write_row(f, lead, c, nblocks, l2 ? "L2" : "DRAM", t, bad);
  }
}

// primitive_copies at one warp per SM, or diverged_commit; from DRAM.
void run_primitive(Ctx& x, FILE* f, bool diverged_commit_kernel, int mode_or_per_group, int d, int bps) {
  const int bs = diverged_commit_kernel ? 128 : kPcBlock;
  const int batch_sz = diverged_commit_kernel ? 32 : 64;
  const int k = diverged_commit_kernel ? 64 : (mode_or_per_group >> 8);
  const int per_group = diverged_commit_kernel ? (mode_or_per_group == 2) : (mode_or_per_group & 1);
  const int nblocks = x.sms * bps;
  const size_t grid_size = size_t(nblocks) * bs;
  const size_t size = size_t(batch_sz) * grid_size;
  const size_t big_ints = diverged_commit_kernel ? 0 : size * kPcChunks * 4;
  x.ensure(size + big_ints);
  const uint64_t seed = ++x.seed;
  x.fill(x.din, size + big_ints, seed);  // in_small = din[0, size), in_big = din[size, ...)
  static int* dsink = nullptr;
  static float* dwork = nullptr;
  if (!dsink) {
    CK(cudaMalloc(&dsink, size_t(1) << 26));
    CK(cudaMalloc(&dwork, size_t(1) << 26));
  }
  void* fn;
  size_t smem = 0;
  if (diverged_commit_kernel) {
    fn = per_group ? (void*)diverged_commit<2> : (void*)diverged_commit<0>;
    smem = kDcStages * bs * sizeof(int);
  } else {
    fn = per_group ? (void*)primitive_copies<true> : (void*)primitive_copies<false>;
  }
  int occ = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, fn, bs, smem));
  if (occ < bps) {
    printf("  skip primitive kernel bps %d: occupancy %d\n", bps, occ);
    return;
  }
  Timing t;
  size_t bad = 0;
  for (int r = 0; r < kReps; ++r) {
    if (r == 0) { x.poison(x.dout, size); x.poison(dsink, grid_size * kPcStages); }
    x.flusher.flush();
    if (diverged_commit_kernel) {
      if (per_group)
        diverged_commit<2><<<nblocks, bs, smem>>>(x.dout, x.din, d, batch_sz, k, x.drec, dwork);
      else
        diverged_commit<0><<<nblocks, bs, smem>>>(x.dout, x.din, d, batch_sz, k, x.drec, dwork);
    } else {
      const int4* big = reinterpret_cast<const int4*>(x.din + size);
      if (per_group)
        primitive_copies<true><<<nblocks, bs>>>(x.dout, x.din, big, d, batch_sz, k, x.drec, dsink);
      else
        primitive_copies<false><<<nblocks, bs>>>(x.dout, x.din, big, d, batch_sz, k, x.drec, dsink);
    }
    CK_LAUNCH();
    t.add(x.fetch_rec(nblocks), nblocks, x.sms, bps);
    if (r == 0) {
      bad = check_pipe(x, seed, size, k, bs, grid_size, false);
      if (!diverged_commit_kernel) {  // the 16-byte copies of batches batch_sz-2 and batch_sz-1
        std::vector<int> sink(grid_size * kPcStages);
        CK(cudaMemcpy(sink.data(), dsink, sink.size() * 4, cudaMemcpyDeviceToHost));
        for (size_t th = 0; th < grid_size; ++th) {
          const size_t blk = th / bs, t_ = th % bs;
          for (int b = batch_sz - 2; b < batch_sz; ++b) {
            const size_t bb = blk * bs + grid_size * b;  // block_batch(b)
            int want = 0;
            for (int j = 0; j < kPcChunks; ++j)
              for (int w = 0; w < 4; ++w) want ^= input_value(seed, size + (bb * kPcChunks + j * bs + t_) * 4 + w);
            if (sink[th * kPcStages + b % kPcStages] != want) {
              if (bad < 2) fprintf(stderr, "  16-byte data of thread %zu batch %d wrong\n", th, b);
              ++bad;
            }
          }
        }
      }
    }
  }
  x.failures += bad;
  x.resident_failures += !t.resident_fail.empty();
  x.rows++;
  ROW(f, "%s,%d,%d,2,%d,%d,%d,%d,%d,DRAM,%d,", diverged_commit_kernel ? "diverged_commit" : "primitive_copies", d,
      per_group, bs, bps, k, batch_sz, nblocks, kReps);
  t.print(f, batch_sz, bad);
}

// ------------------------------------------------------------------ the sets

std::vector<PipeConfig> validation_set(int sms) {
  std::vector<PipeConfig> cs;
  auto add = [&](const char* name, int stages, int bs, int bps, int k, int batch_sz, bool l2_too) {
    const double footprint = 8.0 * batch_sz * sms * bps * bs;  // input + output bytes
    cs.push_back({find_variant(name, stages), bs, bps, k, batch_sz, true, l2_too && footprint <= kL2MaxFootprint});
  };
  // The grid: every example, block 256 and 128, 1/2/4/8 blocks per SM, k 0/32/128/512.
  for (int bs : {256, 128})
    for (int bps : {1, 2, 4, 8})
      for (const Variant& v : kVariants)
        for (int k : {0, 32, 128, 512}) add(v.name, v.stages, bs, bps, k, 64, true);
  // Other block sizes at a few points (skipped where they do not fit).
  const std::pair<int, int> others[] = {{64, 1}, {64, 8}, {512, 1}, {512, 4}, {1024, 1}, {1024, 2}};
  for (auto [bs, bps] : others)
    for (auto [name, stages] : {std::pair<const char*, int>{"with_staging_unified", 2}, {"with_staging_unified", 4},
                                {"with_single_stage", 1}, {"with_staging_scope_thread", 2}})
      for (int k : {0, 128}) add(name, stages, bs, bps, k, 64, true);
  // Long inputs: 1552 batches, one block per SM, from DRAM.
  for (int bs : {128, 256})
    for (int stages : {2, 4, 8})
      for (int k : {0, 128}) add("with_staging_unified", stages, bs, 1, k, 1552, false);
  return cs;
}

// A holdout set (session 14): launches the validation set leaves out, measured after the model it
// checks was built, to say how the model does on rows nobody looked at while building it: long
// inputs at 2 and 4 blocks per SM, 64-thread blocks at 2 and 4, 512 at 2, 1024 with 3 and 8 stages.
std::vector<PipeConfig> holdout_set(int sms) {
  std::vector<PipeConfig> cs;
  auto add = [&](const char* name, int stages, int bs, int bps, int k, int batch_sz, bool l2_too) {
    const double footprint = 8.0 * batch_sz * sms * bps * bs;
    cs.push_back({find_variant(name, stages), bs, bps, k, batch_sz, true, l2_too && footprint <= kL2MaxFootprint});
  };
  const std::pair<const char*, int> designs[] = {{"with_single_stage", 1}, {"with_staging_unified", 2},
                                                 {"with_staging_unified", 4}, {"with_staging_unified", 8},
                                                 {"with_staging_scope_thread", 2},
                                                 {"with_specialized_staging_unified", 2}};
  for (int bps : {2, 4})
    for (int bs : {128, 256})
      for (auto [name, stages] : designs)
        for (int k : {0, 128}) add(name, stages, bs, bps, k, 776, false);
  for (int bps : {2, 4})
    for (auto [name, stages] : designs)
      for (int k : {0, 32}) add(name, stages, 64, bps, k, 64, true);
  for (auto [name, stages] : designs)
    for (int k : {0, 32}) add(name, stages, 512, 2, k, 64, true);
  for (int stages : {3, 8})
    for (int k : {0, 128}) add("with_staging_unified", stages, 1024, 1, k, 64, true);
  return cs;
}

struct NcuConfig {
  const char* kernel;
  int stages, bs, bps, k, d, per_group;  // d, per_group: primitive_copies only
};
const NcuConfig kNcu[] = {
    {"with_staging_unified", 1, 256, 1, 0, 0, 0},  {"with_staging_unified", 1, 256, 8, 0, 0, 0},
    {"with_staging_unified", 2, 256, 1, 0, 0, 0},  {"with_staging_unified", 2, 256, 8, 0, 0, 0},
    {"with_staging_unified", 4, 256, 1, 0, 0, 0},  {"with_staging_unified", 4, 256, 8, 0, 0, 0},
    {"with_staging_unified", 2, 256, 1, 128, 0, 0}, {"with_staging_unified", 2, 256, 4, 128, 0, 0},
    {"with_single_stage", 1, 256, 1, 0, 0, 0},     {"with_staging_scope_thread", 2, 256, 8, 0, 0, 0},
    {"primitive_copies", 2, 32, 1, 0, 32, 1},      {"primitive_copies", 2, 32, 1, 0, 32, 0},
};

// extra: "kernel:stages:block_size:blocks_per_sm:k[:d:per_group]" arguments that replace kNcu.
int run_ncu(Ctx& x, const std::string& dir, int nextra, char** extra) {
  std::vector<NcuConfig> configs(std::begin(kNcu), std::end(kNcu));
  static std::vector<std::string> names;
  if (nextra > 0) {
    configs.clear();
    names.reserve(nextra);
    for (int i = 0; i < nextra; ++i) {
      char name[64];
      NcuConfig c{};
      const int got = sscanf(extra[i], "%63[^:]:%d:%d:%d:%d:%d:%d", name, &c.stages, &c.bs, &c.bps, &c.k, &c.d,
                             &c.per_group);
      const bool divergent = !strcmp(name, "primitive_copies") || !strcmp(name, "diverged_commit");
      if (divergent ? got != 7 || c.d < 1 || c.d > 32 : got != 5 || !find_variant(name, c.stages)) {
        fprintf(stderr, "validation --ncu: '%s' is not kernel:stages:block_size:blocks_per_sm:k[:d:per_group]\n",
                extra[i]);
        return 2;
      }
      names.emplace_back(name);
      c.kernel = names.back().c_str();
      configs.push_back(c);
    }
  }
  std::string path = dir + "/ncu_configs.csv";
  FILE* f = fopen(path.c_str(), "w");
  if (!f) { perror(path.c_str()); return 1; }
  fprintf(f, "ncu_order,kernel,stages,block_size,blocks_per_sm,k,batch_sz,source,divergence,per_group\n");
  int order = 0;
  // VALIDATION_BLOCKS=N: each configuration launched N times, every block's record (its SM, raw clock64 at
  // start and end) appended to OUTDIR/blocks.csv: how the blocks sharing an SM start and end
  const int block_reps = getenv("VALIDATION_BLOCKS") ? std::max(1, atoi(getenv("VALIDATION_BLOCKS"))) : 0;
  FILE* fb = nullptr;
  if (block_reps) {
    fb = fopen((dir + "/blocks.csv").c_str(), "w");
    if (!fb) { perror("blocks.csv"); return 1; }
    fprintf(fb, "ncu_order,rep,block,smid,start,end\n");
  }
  for (const NcuConfig& c : configs)
   for (int brep = 0; brep < std::max(1, block_reps); ++brep) {
    const bool prim = !strcmp(c.kernel, "primitive_copies"), dc = !strcmp(c.kernel, "diverged_commit");
    // as run_primitive runs them; VALIDATION_NCU_BATCH profiles an example at another length (1552: the long rows)
    const char* const long_batch = getenv("VALIDATION_NCU_BATCH");
    const int bs = prim ? kPcBlock : dc ? 128 : c.bs,
              batch_sz = dc ? 32 : prim || !long_batch ? 64 : std::max(1, atoi(long_batch));
    const int nblocks = x.sms * c.bps;
    const size_t grid_size = size_t(nblocks) * bs, size = size_t(batch_sz) * grid_size;
    const size_t big_ints = prim ? size * kPcChunks * 4 : 0;
    x.ensure(size + big_ints);
    x.fill(x.din, size + big_ints, ++x.seed);
    const bool l2 = getenv("VALIDATION_NCU_L2") != nullptr;  // profile with the input in L2 (a warm-up launch first)
    if (!l2) x.flusher.flush();
    if (prim || dc) {
      static int* dsink = nullptr;
      if (!dsink) CK(cudaMalloc(&dsink, size_t(1) << 26));
      const int4* big = reinterpret_cast<const int4*>(x.din + size);
      float* work = reinterpret_cast<float*>(dsink);
      if (dc && c.per_group)
        diverged_commit<2><<<nblocks, bs, kDcStages * bs * sizeof(int)>>>(x.dout, x.din, c.d, batch_sz, c.k, x.drec, work);
      else if (dc)
        diverged_commit<0><<<nblocks, bs, kDcStages * bs * sizeof(int)>>>(x.dout, x.din, c.d, batch_sz, c.k, x.drec, work);
      else if (c.per_group)
        primitive_copies<true><<<nblocks, bs>>>(x.dout, x.din, big, c.d, batch_sz, c.k, x.drec, dsink);
      else
        primitive_copies<false><<<nblocks, bs>>>(x.dout, x.din, big, c.d, batch_sz, c.k, x.drec, dsink);
    } else {
      const Variant& v = *find_variant(c.kernel, c.stages);
      if (l2) {
        v.fn<<<nblocks, c.bs, size_t(v.stages) * c.bs * 4>>>(x.dout, x.din, size, batch_sz, c.k, x.drec);
        CK_LAUNCH();
      }
      v.fn<<<nblocks, c.bs, size_t(v.stages) * c.bs * 4>>>(x.dout, x.din, size, batch_sz, c.k, x.drec);
    }
    CK_LAUNCH();
    if (fb) {
      const std::vector<long long>& rec = x.fetch_rec(nblocks);
      for (int b = 0; b < nblocks; ++b)
        fprintf(fb, "%d,%d,%d,%lld,%lld,%lld\n", order, brep, b, rec[kRec * b + 3], rec[kRec * b + 1], rec[kRec * b + 2]);
      if (brep + 1 < block_reps) continue;
    }
    fprintf(f, "%d,%s,%d,%d,%d,%d,%d,%s,%d,%d\n", order++, c.kernel, c.stages, bs, c.bps, c.k, batch_sz, l2 ? "L2" : "DRAM",
            prim || dc ? c.d : 0, prim || dc ? c.per_group : 0);
  }
  if (fb) fclose(fb);
  fclose(f);
  printf("ncu: %d launches\n", order);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool ncu = argc > 1 && !strcmp(argv[1], "--ncu");
  const std::string dir = argc > 1 + ncu ? argv[1 + ncu] : ".";
  setvbuf(stdout, nullptr, _IOLBF, 0);  // whole lines in the log, between stderr's mismatch reports
  Ctx x;
  x.sms = sm_count();
  CK(cudaMalloc(&x.drec, size_t(kRec) * x.sms * 8 * sizeof(long long)));
  if (ncu) return run_ncu(x, dir, argc - 3, argv + 3);
  if (argc > 2 && !strcmp(argv[2], "holdout")) {
    char* dirarg[2] = {argv[0], const_cast<char*>(dir.c_str())};
    FILE* f = open_csv(2, dirarg, "holdout.csv",
                       "kernel,stages,block_size,blocks_per_sm,k,batch_sz,grid_blocks,source,reps,cycles_per_batch_median,"
                       "cycles_per_batch_min,cycles_per_batch_max,block_cycles_median,mismatches,resident_check,"
                       "cycles_per_batch_sm_span_median,cycles_per_batch_sm_span_max");
    printf("sm_clock_MHz_before %.1f\n", sm_clock_mhz());
    for (const PipeConfig& c : holdout_set(x.sms)) run_pipe(x, f, c);
    fclose(f);
    printf("sm_clock_MHz_after %.1f\nholdout: %d rows, %zu mismatches, %d rows failed the residency check\n",
           sm_clock_mhz(), x.rows, x.failures, x.resident_failures);
    return 0;
  }

  if (argc > 2 && !strcmp(argv[2], "primitives_holdout")) {
    // Out of sample for the over-wait kernels: primitive_copies at 2, 4 and 8 warps per SM (blocks
    // of one warp) and diverged_commit at 2 and 8 blocks per SM, where validation_primitives.csv
    // has one warp and 1 and 4 blocks.
    char* dirarg[2] = {argv[0], const_cast<char*>(dir.c_str())};
    FILE* fp = open_csv(2, dirarg, "holdout_primitives.csv",
                        "kernel,divergence,per_group,stages,block_size,blocks_per_sm,k,batch_sz,grid_blocks,source,reps,"
                        "cycles_per_batch_median,cycles_per_batch_min,cycles_per_batch_max,block_cycles_median,"
                        "mismatches,resident_check,cycles_per_batch_sm_span_median,cycles_per_batch_sm_span_max");
    printf("sm_clock_MHz_before %.1f\n", sm_clock_mhz());
    for (int bps : {2, 4, 8})
      for (int per_group : {1, 0})
        for (int d : {1, 2, 4, 8, 16, 32}) run_primitive(x, fp, false, per_group, d, bps);
    for (int bps : {2, 8})
      for (int mode : {0, 2})
        for (int d : {1, 2, 4, 8, 16, 32}) run_primitive(x, fp, true, mode, d, bps);
    fclose(fp);
    printf("sm_clock_MHz_after %.1f\nprimitives_holdout: %d rows, %zu mismatches, %d rows failed the residency check\n",
           sm_clock_mhz(), x.rows, x.failures, x.resident_failures);
    return x.failures ? 2 : 0;
  }

  const auto t_start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count(); };
  const double budget_s = argc > 2 ? atof(argv[2]) : 330;  // stop starting configurations after this
  printf("sm_clock_MHz_before %.1f\n", sm_clock_mhz());

  char* dirarg[2] = {argv[0], const_cast<char*>(dir.c_str())};
  FILE* fp = open_csv(2, dirarg, "validation_primitives.csv",
                      "kernel,divergence,per_group,stages,block_size,blocks_per_sm,k,batch_sz,grid_blocks,source,reps,"
                      "cycles_per_batch_median,cycles_per_batch_min,cycles_per_batch_max,block_cycles_median,"
                      "mismatches,resident_check,cycles_per_batch_sm_span_median,cycles_per_batch_sm_span_max");
  for (int k : {0, 128})
    for (int per_group : {1, 0})
      for (int d : {1, 2, 4, 8, 16, 32}) run_primitive(x, fp, false, (k << 8) | per_group, d, 1);
  for (int bps : {1, 4})
    for (int mode : {0, 2})
      for (int d : {1, 2, 4, 8, 16, 32}) run_primitive(x, fp, true, mode, d, bps);
  fclose(fp);
  printf("primitives done at %.1f s\n", elapsed());

  FILE* f = open_csv(2, dirarg, "validation.csv",
                     "kernel,stages,block_size,blocks_per_sm,k,batch_sz,grid_blocks,source,reps,cycles_per_batch_median,"
                     "cycles_per_batch_min,cycles_per_batch_max,block_cycles_median,mismatches,resident_check,"
                     "cycles_per_batch_sm_span_median,cycles_per_batch_sm_span_max");
  int skipped_budget = 0;
  for (const PipeConfig& c : validation_set(x.sms)) {
    if (elapsed() > budget_s) { ++skipped_budget; continue; }
    run_pipe(x, f, c);
  }
  fclose(f);
  printf("sm_clock_MHz_after %.1f\n", sm_clock_mhz());
  printf("validation: %d rows, %zu mismatches, %d rows failed the residency check, %d configurations skipped for "
         "time, %.1f s\n",
         x.rows, x.failures, x.resident_failures, skipped_budget, elapsed());
  return x.failures ? 2 : 0;
}

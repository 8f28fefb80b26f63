// How a sub-partition's scheduler shares its issue slot between warps that are ready at once, at a
// finer grain than block_order.cu's end times: every warp runs the same FFMA loop and its lane 0
// stamps clock64 after each trip (CS2R, STS into shared memory; copied out at the end), so the
// stamps of the warps of one scheduler show who issued when.
//
//   indep: 8 independent chains, 4 FFMAs each a trip (32 FFMAs): a warp is ready every cycle.
//   dep:   one chain, 32 dependent FFMAs a trip: a warp is ready every FFMA latency.
//   one:   one block per SM of 4W warps (W per scheduler; warp w on scheduler w % 4).
//   two:   two blocks per SM of 4W warps each (dynamic shared memory keeps it at two), the block
//          that started first on the SM `first`.
//
// Rows of issue_order.csv: per mode, layout, W, block (first/second) and warp, the medians over SMs
// (pairs of blocks for `two`) and repetitions of its first and last stamps relative to the SM's
// earliest start, and of the cycles between its stamps in its first 16 trips and over all of them.
// issue_order_trips.csv: every stamp of two SMs (the first repetition) for a look at the order.
//
// issue_order_blocks.csv (session 27): the same loops at 2, 4 and 8 blocks per SM of W = 1 and 2
// warps per scheduler each (residency held by dynamic shared memory), the blocks ranked by when
// they started on their SM (rank 0 first): per mode, blocks per SM, W, rank and warp, the medians
// over SMs and repetitions of the block's start, the warp's first and last stamps (from the SM's
// earliest start) and its cycles between stamps.
//
// Usage: issue_order OUTDIR -> OUTDIR/issue_order.csv, OUTDIR/issue_order_trips.csv,
//        OUTDIR/issue_order_blocks.csv
#include "common.cuh"

namespace {

constexpr int kTrips = 96;
constexpr int kReps = 3;
constexpr int kMaxWarps = 32;

template <int kChains, int kUnroll>
__global__ void order_kernel(float* out, long long* rec, unsigned* smids) {
  extern __shared__ long long stamps[];  // [warp][trip]; the rest of the allocation only limits residency
  float v[kChains];
#pragma unroll
  for (int c = 0; c < kChains; ++c) v[c] = float(threadIdx.x + c);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();
  const long long t0 = clock64();
  for (int i = 0; i < kTrips; ++i) {
#pragma unroll
    for (int j = 0; j < kUnroll; ++j)
#pragma unroll
      for (int c = 0; c < kChains; ++c) v[c] = fmaf(v[c], 1.000001f, 0.5f);
    if (lane == 0) stamps[warp * kTrips + i] = clock64();
  }
  float s = 0.f;
#pragma unroll
  for (int c = 0; c < kChains; ++c) s += v[c];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
  __syncwarp();
  if (lane == 0) {
    long long* r = rec + (size_t(blockIdx.x) * kMaxWarps + warp) * (kTrips + 1);
    r[0] = t0;
    for (int i = 0; i < kTrips; ++i) r[1 + i] = stamps[warp * kTrips + i];
  }
  if (threadIdx.x == 0) {
    unsigned smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    smids[blockIdx.x] = smid;
  }
}

constexpr int kStride = kMaxWarps * (kTrips + 1);  // a block's records in rec

// The earliest start of block b's warps (4W of them) in the records h.
long long block_start(const std::vector<long long>& h, int b, int warps) {
  long long t = h[size_t(b) * kStride];
  for (int w = 0; w < warps; ++w) t = std::min(t, h[size_t(b) * kStride + size_t(w) * (kTrips + 1)]);
  return t;
}

// One launch of per_sm blocks per SM of 4W warps, each held to per_sm a SM by shmem bytes of dynamic
// shared memory: the records into h, and per SM that got per_sm blocks their indices, the earliest
// started first.
template <int kChains, int kUnroll>
std::vector<std::vector<int>> launch_ranked(int per_sm, int W, int sms, size_t shmem, float* dout, long long* drec,
                                            unsigned* dsm, std::vector<long long>& h) {
  const int warps = 4 * W, blocks = per_sm * sms;
  auto kern = order_kernel<kChains, kUnroll>;
  CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shmem)));
  h.assign(size_t(blocks) * kStride, 0);
  std::vector<unsigned> sm(blocks);
  kern<<<blocks, warps * 32, shmem>>>(dout, drec, dsm);
  CK_LAUNCH();
  CK(cudaMemcpy(h.data(), drec, h.size() * sizeof(long long), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(sm.data(), dsm, sm.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
  std::vector<std::vector<int>> on(sms), ranked;
  for (int b = 0; b < blocks; ++b) on[sm[b] % sms].push_back(b);
  for (auto& bs : on) {
    if (int(bs.size()) != per_sm) continue;
    std::sort(bs.begin(), bs.end(), [&](int a, int b) { return block_start(h, a, warps) < block_start(h, b, warps); });
    ranked.push_back(bs);
  }
  return ranked;
}

template <int kChains, int kUnroll>
void run(FILE* f, FILE* trips_f, const char* mode, int per_sm, int W, int sms, float* dout, long long* drec,
         unsigned* dsm) {
  const int warps = 4 * W;
  // residency: one block per SM takes 160 KB of shared memory, two 100 KB each
  const size_t shmem = per_sm == 1 ? 160 * 1024 : 100 * 1024;
  std::vector<long long> h;
  // per (block rank, warp): first stamp, last stamp, early spacing, spacing; from the SM's first start
  std::vector<std::vector<double>> first(2 * warps), last(2 * warps), early(2 * warps), all(2 * warps);
  int dumped = 0;
  for (int r = 0; r < kReps; ++r) {
    for (const auto& bs : launch_ranked<kChains, kUnroll>(per_sm, W, sms, shmem, dout, drec, dsm, h)) {
      const long long t0 = block_start(h, bs[0], warps);
      for (int k = 0; k < per_sm; ++k)
        for (int w = 0; w < warps; ++w) {
          const long long* p = &h[size_t(bs[k]) * kStride + size_t(w) * (kTrips + 1)];
          first[k * warps + w].push_back(double(p[1] - t0));
          last[k * warps + w].push_back(double(p[kTrips] - t0));
          early[k * warps + w].push_back(double(p[16] - p[1]) / 15.0);
          all[k * warps + w].push_back(double(p[kTrips] - p[1]) / double(kTrips - 1));
          if (r == 0 && dumped < 2)
            for (int i = 0; i < kTrips; ++i)
              fprintf(trips_f, "%s,%s,%d,%d,%s,%d,%d,%d,%lld\n", mode, per_sm == 1 ? "one" : "two", W, dumped,
                      k ? "second" : "first", w, w % 4, i, p[1 + i] - t0);
        }
      if (r == 0) ++dumped;
    }
  }
  for (int k = 0; k < per_sm; ++k)
    for (int w = 0; w < warps; ++w)
      ROW(f, "%s,%s,%d,%s,%d,%d,%.0f,%.0f,%.1f,%.1f,%zu\n", mode, per_sm == 1 ? "one" : "two", W,
          k ? "second" : "first", w, w % 4, median(first[k * warps + w]), median(last[k * warps + w]),
          median(early[k * warps + w]), median(all[k * warps + w]), first[k * warps + w].size());
}

// per_sm blocks per SM of 4W warps, ranked by their start on the SM: rows of issue_order_blocks.csv.
template <int kChains, int kUnroll>
void run_blocks(FILE* f, const char* mode, int per_sm, int W, int sms, float* dout, long long* drec,
                unsigned* dsm) {
  const int warps = 4 * W;
  // residency: per_sm blocks fit in the 228 KB of shared memory, one more does not
  const size_t shmem = per_sm == 2 ? 100 * 1024 : per_sm == 4 ? 50 * 1024 : 26 * 1024;
  std::vector<long long> h;
  std::vector<std::vector<double>> begin(per_sm), first(per_sm * warps), last(per_sm * warps), all(per_sm * warps);
  for (int r = 0; r < kReps; ++r) {
    for (const auto& bs : launch_ranked<kChains, kUnroll>(per_sm, W, sms, shmem, dout, drec, dsm, h)) {
      const long long t0 = block_start(h, bs[0], warps);
      for (int k = 0; k < per_sm; ++k) {
        begin[k].push_back(double(block_start(h, bs[k], warps) - t0));
        for (int w = 0; w < warps; ++w) {
          const long long* p = &h[size_t(bs[k]) * kStride + size_t(w) * (kTrips + 1)];
          first[k * warps + w].push_back(double(p[1] - t0));
          last[k * warps + w].push_back(double(p[kTrips] - t0));
          all[k * warps + w].push_back(double(p[kTrips] - p[1]) / double(kTrips - 1));
        }
      }
    }
  }
  for (int k = 0; k < per_sm; ++k)
    for (int w = 0; w < warps; ++w)
      ROW(f, "%s,%d,%d,%d,%d,%d,%.0f,%.0f,%.0f,%.1f,%zu\n", mode, per_sm, W, k, w, w % 4, median(begin[k]),
          median(first[k * warps + w]), median(last[k * warps + w]), median(all[k * warps + w]),
          first[k * warps + w].size());
}

}  // namespace

int main(int argc, char** argv) {
  FILE* f = open_csv(argc, argv, "issue_order.csv",
                     "mode,layout,warps_per_scheduler_per_block,block,warp,scheduler,first_stamp_median,"
                     "last_stamp_median,early_cycles_per_trip_median,cycles_per_trip_median,samples");
  std::string tp = std::string(argc > 1 ? argv[1] : ".") + "/issue_order_trips.csv";
  FILE* tf = fopen(tp.c_str(), "w");
  if (!tf) { perror(tp.c_str()); return 1; }
  fprintf(tf, "mode,layout,warps_per_scheduler_per_block,sm,block,warp,scheduler,trip,cycle\n");
  const int sms = sm_count();
  float* dout;
  long long* drec;
  unsigned* dsm;
  CK(cudaMalloc(&dout, size_t(2 * sms) * 1024 * sizeof(float)));
  CK(cudaMalloc(&drec, size_t(2 * sms) * kMaxWarps * (kTrips + 1) * sizeof(long long)));
  CK(cudaMalloc(&dsm, size_t(2 * sms) * sizeof(unsigned)));
  for (int per_sm : {1, 2})
    for (int W : {1, 2, 4}) {
      run<8, 4>(f, tf, "indep", per_sm, W, sms, dout, drec, dsm);
      run<1, 32>(f, tf, "dep", per_sm, W, sms, dout, drec, dsm);
    }
  fclose(tf);
  fclose(f);
  FILE* bf = open_csv(argc, argv, "issue_order_blocks.csv",
                      "mode,blocks_per_sm,warps_per_scheduler_per_block,rank,warp,scheduler,block_start_median,"
                      "first_stamp_median,last_stamp_median,cycles_per_trip_median,samples");
  CK(cudaFree(dout));
  CK(cudaFree(drec));
  CK(cudaFree(dsm));
  CK(cudaMalloc(&dout, size_t(8 * sms) * 1024 * sizeof(float)));
  CK(cudaMalloc(&drec, size_t(8 * sms) * kMaxWarps * (kTrips + 1) * sizeof(long long)));
  CK(cudaMalloc(&dsm, size_t(8 * sms) * sizeof(unsigned)));
  for (int per_sm : {2, 4, 8})
    for (int W : {1, 2}) {
      run_blocks<8, 4>(bf, "indep", per_sm, W, sms, dout, drec, dsm);
      run_blocks<1, 32>(bf, "dep", per_sm, W, sms, dout, drec, dsm);
    }
  fclose(bf);
  return 0;
}

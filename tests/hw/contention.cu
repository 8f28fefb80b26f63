// Two costs the pipeline examples pay that the anatomy stamps cannot isolate:
//
//   mod.csv:   a 64-bit `i % S` that indexes a per-thread array, as the examples' `fetch_batch %
//              stages_count` indexes shared_offset[]. Each trip's index waits for the last trip's
//              load, so a trip is one dependent chain: S = 4 takes a mask, S = 3 the compiler's
//              multiply-high sequence (IMAD.WIDE.U32 chain). The difference per trip is what a
//              `% 3` adds to the chain (machine field divide_latency).
//   issue.csv: four independent 64-bit counters with compare-and-wrap (the examples' loop and
//              index arithmetic) at 1, 2, 4 and 8 warps per sub-partition (block 128 .. 1024, one
//              block per SM). Alone, a warp's trip is bound by its dependences; with more warps
//              the sub-partition's dispatch saturates and a warp's trip grows with the warps
//              beside it. The slope per added warp, over the SASS instructions in a trip, is
//              the dispatch cycles one such instruction costs (smsim's *_instructions fields
//              count issue slots, so they are SASS instructions times this figure).
//
// Usage: contention OUTDIR  ->  mod.csv, issue.csv
#include <cassert>
#include "common.cuh"

namespace {

constexpr int kReps = 5;

template <int S>
__global__ void mod_chain(int* out, size_t trips, size_t one, long long* cycles) {
  size_t off[S];
  for (int s = 0; s < S; ++s) off[s] = size_t(s) * blockDim.x + one;
  size_t i = threadIdx.x;
  int acc = 0;
  __syncthreads();
  long long t0 = clock64();
  for (size_t n = 0; n < trips; ++n) {
    size_t o = off[i % S];
    acc += int(o);
    i += one + (o >> 62);  // o < 2^62: adds `one`, but only once this trip's load is back
  }
  __syncthreads();
  long long t1 = clock64();
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc + int(i);
  if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
}

__global__ void issue_mix(size_t* out, size_t trips, size_t bound, long long* cycles) {
  size_t a = threadIdx.x, b = a + 1, c = a + 2, d = a + 3;
  __syncthreads();
  long long t0 = clock64();
  for (size_t n = 0; n < trips; ++n) {
    a = a + 1 < bound ? a + 1 : 0;
    b = b + 3 < bound ? b + 3 : 1;
    c = c + 5 < bound ? c + 5 : 2;
    d = d + 7 < bound ? d + 7 : 3;
  }
  __syncthreads();
  long long t1 = clock64();
  out[blockIdx.x * blockDim.x + threadIdx.x] = a ^ b ^ c ^ d;
  if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
}

template <typename K, typename T>
double time_per_trip(K kernel, T* out, long long* dcyc, int sms, int bs, size_t trips, size_t arg) {
  std::vector<long long> all;
  std::vector<long long> cyc(sms);
  for (int r = 0; r < kReps; ++r) {
    kernel<<<sms, bs>>>(out, trips, arg, dcyc);
    CK_LAUNCH();
    CK(cudaMemcpy(cyc.data(), dcyc, sms * sizeof(long long), cudaMemcpyDeviceToHost));
    all.insert(all.end(), cyc.begin(), cyc.end());
  }
  return median(all) / double(trips);
}

}  // namespace

int main(int argc, char** argv) {
  const int sms = sm_count();
  long long* dcyc;
  int* dout;
  size_t* dout64;
  CK(cudaMalloc(&dcyc, sms * sizeof(long long)));
  CK(cudaMalloc(&dout, size_t(sms) * 1024 * sizeof(int)));
  CK(cudaMalloc(&dout64, size_t(sms) * 1024 * sizeof(size_t)));
  const size_t trips = 4096;

  FILE* f = open_csv(argc, argv, "mod.csv", "stages,block_size,grid_blocks,trips,reps,cycles_per_trip_median");
  for (int bs : {128, 256}) {
    double m3 = time_per_trip(mod_chain<3>, dout, dcyc, sms, bs, trips, 1);
    double m4 = time_per_trip(mod_chain<4>, dout, dcyc, sms, bs, trips, 1);
    ROW(f, "3,%d,%d,%zu,%d,%.2f\n", bs, sms, trips, kReps, m3);
    ROW(f, "4,%d,%d,%zu,%d,%.2f\n", bs, sms, trips, kReps, m4);
  }
  fclose(f);

  FILE* g = open_csv(argc, argv, "issue.csv",
                     "block_size,warps_per_subpartition,grid_blocks,trips,reps,cycles_per_trip_median");
  for (int bs : {128, 256, 512, 1024}) {
    double t = time_per_trip(issue_mix, dout64, dcyc, sms, bs, trips, size_t(1) << 40);
    ROW(g, "%d,%d,%d,%zu,%d,%.2f\n", bs, bs / 128, sms, trips, kReps, t);
  }
  fclose(g);
  cudaFree(dcyc);
  cudaFree(dout);
  cudaFree(dout64);
  return 0;
}

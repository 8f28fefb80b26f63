// What a warp split into D groups of lanes (group = lane % D) pays per group, beyond the groups'
// own work: the three shapes the study kernels use (tests/hw/validation.cu primitive_copies and
// diverged_commit), each timed as a loop trip against D = 1, 2, 4, 8, 16, 32.
//   if_chain   for (g = 0; g < D; ++g) if (group == g) { 12 dependent FFMAs }: one divergent if
//              per group, as primitive_copies commits (its body here a chain of known latency)
//   if_copies  for (g = 0; g < D; ++g) if (group == g) { four 16-byte __pipeline_memcpy_async };
//              then __pipeline_commit() and __pipeline_wait_prior(1): primitive_copies' body, the
//              source in L2 (two buffers of 8 KB a block, read again every trip)
//   exits      for (j = 0; j < group; ++j) one FFMA: group g leaves the loop after g trips, so
//              D - 1 groups leave it one after another (diverged_commit's extra work, as
//              traces/h100/diverged_commit.sass compiles it: 16-, 8- and 4-FFMA blocks, then up to
//              three predicated FFMAs)
//   split_loop for (j = 0; j < group; ++j) x = x * 3 + 7, not unrolled: D - 1 of the trips each
//              lose one group, which leaves the loop for its end while the rest go on
//   even_loop  the same loop run D - 1 times by every lane: the trips without the splits
// The FFMAs take immediate constants, as compute()'s do: an operand from a kernel parameter would
// be reloaded by an LDC at each block ptxas makes of the loop.
// D = 1 is the converged trip: the same code, every lane in the one group. One block per SM of
// 32 threads (one warp, as primitive_copies) or 128 (one warp per scheduler, as diverged_commit);
// each trip's cycles are the slope between 64 and 320 trips (the loop's entry and exit cancel),
// the median over every warp of 5 launches.
//
// Usage: groups OUTDIR [FIRST_SHAPE] -> OUTDIR/groups.csv
#include <cuda_pipeline.h>

#include "common.cuh"

namespace {

constexpr int kReps = 5;
constexpr int kCopies = 4;  // 16-byte copies per lane and trip in if_copies
enum Shape { kIfChain, kIfCopies, kExits, kSplitLoop, kEvenLoop, kShapes };
const char* const kShapeName[] = {"if_chain", "if_copies", "exits", "split_loop", "even_loop"};

template <int kShape>
__global__ void groups(int trips, int divergence, unsigned a, const int4* src, unsigned* out, long long* cycles) {
  __shared__ alignas(16) int4 stage[2][kCopies * 128];
  const int tid = threadIdx.x;
  const int group = (tid % 32) % divergence;
  float x = float(tid);
  unsigned y = tid;
  const int4* mine = src + size_t(blockIdx.x) * kCopies * blockDim.x;
  __syncthreads();
  const long long t0 = clock64();
  for (int i = 0; i < trips; ++i) {
    if (kShape == kIfChain) {
      for (int g = 0; g < divergence; ++g)
        if (group == g) {
#pragma unroll
          for (int j = 0; j < 12; ++j) x = fmaf(x, 1.000001f, 0.5f);
        }
    } else if (kShape == kIfCopies) {
      for (int g = 0; g < divergence; ++g)
        if (group == g) {
#pragma unroll
          for (int c = 0; c < kCopies; ++c)
            __pipeline_memcpy_async(&stage[i & 1][c * blockDim.x + tid], mine + c * blockDim.x + tid, 16);
        }
      __pipeline_commit();
      __pipeline_wait_prior(1);
    } else if (kShape == kExits) {
      for (int j = 0; j < group; ++j) x = fmaf(x, 1.000001f, 0.5f);
    } else {
      const int n = kShape == kSplitLoop ? group : divergence - 1;
#pragma unroll 1
      for (int j = 0; j < n; ++j) y = y * 3u + 7u;
    }
  }
  __pipeline_wait_prior(0);
  const long long t1 = clock64();
  unsigned bits = __float_as_uint(x) ^ y;
  if (kShape == kIfCopies) bits ^= unsigned(stage[0][tid].x ^ stage[1][tid].y);
  out[blockIdx.x * blockDim.x + tid] = bits ^ a;
  if (tid % 32 == 0) cycles[blockIdx.x * (blockDim.x / 32) + tid / 32] = t1 - t0;
}

using Kernel = void (*)(int, int, unsigned, const int4*, unsigned*, long long*);
Kernel kernel_for(int s) {
  switch (s) {
    case kIfChain: return groups<kIfChain>;
    case kIfCopies: return groups<kIfCopies>;
    case kExits: return groups<kExits>;
    case kSplitLoop: return groups<kSplitLoop>;
    default: return groups<kEvenLoop>;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int sms = sm_count();
  unsigned* dout;
  long long* dcyc;
  int4* dsrc;
  const size_t src_elems = size_t(sms) * kCopies * 128;
  CK(cudaMalloc(&dout, size_t(sms) * 128 * sizeof(unsigned)));
  CK(cudaMalloc(&dcyc, size_t(sms) * 4 * sizeof(long long)));
  CK(cudaMalloc(&dsrc, src_elems * sizeof(int4)));
  CK(cudaMemset(dsrc, 1, src_elems * sizeof(int4)));
  FILE* f = open_csv(argc, argv, "groups.csv",
                     "shape,block_size,divergence,trips_low,trips_high,cycles_low,cycles_high,cycles_per_trip");
  const int first = argc > 2 ? atoi(argv[2]) : 0;  // the first shape to time (a rerun of the new ones)
  for (int s = first; s < kShapes; ++s)
    for (int bs : {32, 128})
      for (int d : {1, 2, 4, 8, 16, 32}) {
        const int ts[2] = {64, 320};
        double c[2];
        for (int t = 0; t < 2; ++t) {
          std::vector<long long> all;
          for (int r = 0; r < kReps; ++r) {
            kernel_for(s)<<<sms, bs>>>(ts[t], d, 3u, dsrc, dout, dcyc);
            CK_LAUNCH();
            std::vector<long long> v(size_t(sms) * (bs / 32));
            CK(cudaMemcpy(v.data(), dcyc, v.size() * sizeof(long long), cudaMemcpyDeviceToHost));
            all.insert(all.end(), v.begin(), v.end());
          }
          c[t] = median(all);
        }
        ROW(f, "%s,%d,%d,%d,%d,%.1f,%.1f,%.3f\n", kShapeName[s], bs, d, ts[0], ts[1], c[0], c[1],
            (c[1] - c[0]) / (ts[1] - ts[0]));
      }
  fclose(f);
  return 0;
}

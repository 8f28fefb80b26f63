// Where the time of validation.cu's primitive_copies goes when several warps share an SM
// (traces/h100/overwait_stamps.csv): the same loop (block_size 32; per batch each lane issues one
// 4-byte and sixteen 16-byte __pipeline_memcpy_async in D divergent branches, committed per group
// or once after them, then __pipeline_wait_prior(1) and compute() with k = 0), at 1, 2, 4 and 8
// blocks per SM, with thread 0's clock64 read at four points of every batch: before the copies,
// after the last commit, after the wait and after compute. primitive_stamps.cu did this for one
// warp an SM and one commit; this asks what holdout_primitives.csv leaves open: at 2-8 warps an SM
// with per-group commits, which phase takes the time (the copies' issue, the over-wait, compute's
// load behind the fills), and whether the SM's warps wait in step (the spread of their wait ends
// within a batch, read off one SM's clock).
//
// Columns: issue/wait/compute/batch_median: a warp's phases, median over steady batches (8..61)
// x blocks x reps; wait_end_spread_median: per SM and batch, the latest warp's wait end less the
// earliest's, the median over SMs x batches x reps (0 at one warp); sm_batch_median: per SM and
// rep, (last block's end - first block's start) / batches, the median over SMs x reps;
// resident: every SM ran blocks_per_sm blocks, overlapping in time, in every rep (ok / FAIL).
//
// overwait_order.csv: for the first run of each row, every block of SMs 0-3: its %warpid and the
// start of batches 0, 8, 16, 32, 48, 63 and its end, from the SM's first block's start (SM clock).
//
// Usage: overwait_stamps OUTDIR -> OUTDIR/overwait_stamps.csv, OUTDIR/overwait_order.csv
#include <cuda_pipeline.h>
#include <climits>
#include <map>
#include "common.cuh"

namespace {

constexpr int kStages = 2, kChunks = 16, kBlock = 32, kBatches = 64, kReps = 3;
constexpr int kStageInts = kBlock + kChunks * 4 * kBlock;
constexpr int kMarks = 4;  // copies begin, committed, waited, computed
constexpr int kSteadyFrom = 8, kSteadyTo = kBatches - 2;

template <bool kPerGroup>
__global__ void overwait_stamps(int* global_out, const int* in_small, const int4* in_big, int divergence,
                                long long* marks, unsigned* smids) {
  __shared__ alignas(16) int shared[kStages * kStageInts];
  const int tid = threadIdx.x;
  const int group = (tid % 32) % divergence;
  const int grid_size = gridDim.x * blockDim.x;
  auto block_batch = [&](int batch) { return blockIdx.x * blockDim.x + grid_size * batch; };
  long long* m = marks + size_t(blockIdx.x) * kBatches * kMarks;
  for (int batch = 0; batch < kBatches; ++batch) {
    const long long t0 = clock64();
    for (int g = 0; g < divergence; ++g) {
      if (group == g) {
        int* st = shared + (batch % kStages) * kStageInts;
        __pipeline_memcpy_async(st + tid, in_small + block_batch(batch) + tid, 4);
        int4* dst = reinterpret_cast<int4*>(st + blockDim.x);
        const int4* src = in_big + size_t(block_batch(batch)) * kChunks;
#pragma unroll
        for (int j = 0; j < kChunks; ++j)
          __pipeline_memcpy_async(dst + j * blockDim.x + tid, src + j * blockDim.x + tid, 16);
        if (kPerGroup) __pipeline_commit();
      }
    }
    if (!kPerGroup) __pipeline_commit();
    const long long t1 = clock64();
    long long t2 = t1, t3 = t1;
    if (batch >= 1) {
      __pipeline_wait_prior(1);
      t2 = clock64();
      const int b = batch - 1;
      global_out[block_batch(b) + tid] = shared[(b % kStages) * kStageInts + tid];
      t3 = clock64();
    }
    if (tid == 0) {
      m[batch * kMarks + 0] = t0;
      m[batch * kMarks + 1] = t1;
      m[batch * kMarks + 2] = t2;
      m[batch * kMarks + 3] = t3;
    }
  }
  __pipeline_wait_prior(0);
  if (tid == 0) {
    unsigned smid, warpid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    asm volatile("mov.u32 %0, %%warpid;" : "=r"(warpid));
    smids[2 * blockIdx.x] = smid;
    smids[2 * blockIdx.x + 1] = warpid;  // the warp's slot on its SM (slot % 4: its scheduler, as far as PTX says)
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int sms = sm_count();
  const int max_bpm = 8;
  const size_t size = size_t(kBatches) * sms * max_bpm * kBlock;
  int *small_in, *out;
  int4* big_in;
  long long* marks;
  unsigned* smids;
  CK(cudaMalloc(&small_in, size * 4));
  CK(cudaMalloc(&big_in, size * kChunks * 16));
  CK(cudaMalloc(&out, size * 4));
  CK(cudaMalloc(&marks, size_t(sms) * max_bpm * kBatches * kMarks * 8));
  CK(cudaMalloc(&smids, size_t(sms) * max_bpm * 8));
  CK(cudaMemset(small_in, 1, size * 4));
  CK(cudaMemset(big_in, 2, size * kChunks * 16));
  L2Flusher flusher;
  FILE* order = open_csv(argc, argv, "overwait_order.csv",
                         "source,per_group,divergence,blocks_per_sm,sm,block,warpid,b0,b8,b16,b32,b48,b63,end");
  FILE* f = open_csv(argc, argv, "overwait_stamps.csv",
                     "source,per_group,divergence,blocks_per_sm,issue_median,wait_median,compute_median,"
                     "batch_median,wait_end_spread_median,sm_batch_median,resident");
  for (const char* source : {"DRAM", "L2"})
    for (int per_group : {1, 0})
      for (int bpm : {1, 2, 4, 8})
        for (int d : {1, 2, 4, 8, 16}) {
          const int grid = sms * bpm;
          std::vector<long long> h(size_t(grid) * kBatches * kMarks);
          std::vector<unsigned> sm(2 * size_t(grid));
          std::vector<double> issue, wait, comp, whole, spread, span;
          bool resident = true;
          for (int rep = 0; rep < kReps; ++rep) {
            flusher.flush();
            // "L2": the input read once before; it is larger than L2 (69-553 MB), so these are DRAM rows warmed up
            for (int launch = source[0] == 'L' ? 0 : 1; launch < 2; ++launch) {
              if (per_group)
                overwait_stamps<true><<<grid, kBlock>>>(out, small_in, big_in, d, marks, smids);
              else
                overwait_stamps<false><<<grid, kBlock>>>(out, small_in, big_in, d, marks, smids);
              CK_LAUNCH();
            }
            CK(cudaMemcpy(h.data(), marks, h.size() * 8, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(sm.data(), smids, sm.size() * 4, cudaMemcpyDeviceToHost));
            std::map<unsigned, std::vector<int>> by_sm;
            for (int b = 0; b < grid; ++b) by_sm[sm[2 * b]].push_back(b);
            if (order && rep == 0)  // which warp leads: every block of the first 4 SMs, a few batches' starts
              for (auto& [id, blocks] : by_sm) {
                if (id >= 4) continue;
                long long sm_first = LLONG_MAX;
                for (int b : blocks) sm_first = std::min(sm_first, h[size_t(b) * kBatches * kMarks]);
                for (int b : blocks) {
                  const long long* mb = &h[size_t(b) * kBatches * kMarks];
                  fprintf(order, "%s,%d,%d,%d,%u,%d,%u", source, per_group, d, bpm, id, b, sm[2 * b + 1]);
                  for (int i : {0, 8, 16, 32, 48, 63}) fprintf(order, ",%lld", mb[i * kMarks] - sm_first);
                  fprintf(order, ",%lld\n", mb[63 * kMarks + 3] - sm_first);
                }
              }
            for (auto& [id, blocks] : by_sm) {
              if (int(blocks.size()) != bpm) resident = false;
              long long first = LLONG_MAX, last = LLONG_MIN, latest_start = LLONG_MIN, earliest_end = LLONG_MAX;
              for (int b : blocks) {
                const long long* mb = &h[size_t(b) * kBatches * kMarks];
                const long long start = mb[0], end = mb[(kBatches - 1) * kMarks + 3];
                first = std::min(first, start);
                last = std::max(last, end);
                latest_start = std::max(latest_start, start);
                earliest_end = std::min(earliest_end, end);
              }
              if (latest_start >= earliest_end) resident = false;
              span.push_back(double(last - first) / kBatches);
              for (int i = kSteadyFrom; i < kSteadyTo; ++i) {
                long long lo = LLONG_MAX, hi = LLONG_MIN;
                for (int b : blocks) {
                  const long long* mi = &h[(size_t(b) * kBatches + i) * kMarks];
                  issue.push_back(double(mi[1] - mi[0]));
                  wait.push_back(double(mi[2] - mi[1]));
                  comp.push_back(double(mi[3] - mi[2]));
                  whole.push_back(double(mi[kMarks] - mi[0]));
                  lo = std::min(lo, mi[2]);
                  hi = std::max(hi, mi[2]);
                }
                spread.push_back(double(hi - lo));
              }
            }
          }
          ROW(f, "%s,%d,%d,%d,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%s\n", source, per_group, d, bpm, median(issue),
              median(wait), median(comp), median(whole), median(spread), median(span), resident ? "ok" : "FAIL");
        }
  fclose(f);
  fclose(order);
  return 0;
}

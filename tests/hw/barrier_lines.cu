// What a block-wide wait over its warps' DRAM lines costs beyond each warp waiting for its own, at
// 1, 2, 4 and 8 blocks per SM: the spread of the lines a block's copies bring (smsim's
// dram_spread and dram_spread_per_line), measured where it acts.
//
// roundtrip.cu's chase at every occupancy: each batch's source index adds the value the previous
// batch read (the input is zeros, which the compiler cannot know), so batches do not overlap.
//   cp_async  __pipeline_memcpy_async 4 B, commit, wait_prior(0): each warp waits for its own line
//   mbarrier  cuda::memcpy_async(4 B, bar) and bar.arrive_and_wait(): the block waits for the
//             slowest of its lines (one 128-byte line a warp)
// From DRAM (L2 flushed first) and from L2 (a warm-up launch first); batches and threads are chosen
// so the whole input (32 batches x 2,048 threads a SM at most) fits in L2 for the L2 rows. The
// spread's cost is (mbarrier DRAM - mbarrier L2) - (cp_async DRAM - cp_async L2): both modes
// share their loop, and the L2 rows take out each mode's own overhead (the barrier's arrive and
// wait, the pipeline's commit and wait).
//
// Grid = blocks_per_sm x SMs, all resident at once (at most 2,048 threads a SM); cycles per batch
// per warp, the median over every warp of every block and rep.
//
// Usage: barrier_lines OUTDIR  ->  barrier_lines.csv
#include "chase.cuh"
#include "common.cuh"

namespace {

using namespace chase_bench;

constexpr int kReps = 5;
constexpr int kBatches = 32;

}  // namespace

int main(int argc, char** argv) {
  const int sms = sm_count();
  L2Flusher flusher;
  FILE* f = open_csv(argc, argv, "barrier_lines.csv",
                     "mode,block_size,blocks_per_sm,grid_blocks,source,batches,reps,cycles_per_batch_median,"
                     "cycles_per_batch_p10,cycles_per_batch_p90");
  const int max_threads = 2048;
  const size_t size = size_t(kBatches) * sms * max_threads + max_threads;
  int *din, *dout;
  long long* dcyc;
  CK(cudaMalloc(&din, size * 4));
  CK(cudaMalloc(&dout, size_t(sms) * max_threads * 4));
  CK(cudaMemset(din, 0, size * 4));
  CK(cudaMalloc(&dcyc, size_t(sms) * (max_threads / 32) * sizeof(long long)));
  for (int block_wide = 0; block_wide < 2; ++block_wide)
    for (int bs : {64, 128, 256})
      for (int bpm : {1, 2, 4, 8})
        for (int l2 = 1; l2 >= 0; --l2) {
          const auto fn = block_wide ? chase<kMbarrier> : chase<kCpAsync>;
          const int blocks = bpm * sms, nw = bs / 32;
          std::vector<double> per_batch;
          for (int r = 0; r < kReps; ++r) {
            if (l2) {
              fn<<<blocks, bs, bs * sizeof(int)>>>(dout, din, kBatches, dcyc);
              CK_LAUNCH();
            } else {
              flusher.flush();
            }
            fn<<<blocks, bs, bs * sizeof(int)>>>(dout, din, kBatches, dcyc);
            CK_LAUNCH();
            std::vector<long long> c(size_t(blocks) * nw);
            CK(cudaMemcpy(c.data(), dcyc, c.size() * sizeof(long long), cudaMemcpyDeviceToHost));
            for (long long x : c) per_batch.push_back(double(x) / kBatches);
          }
          std::vector<int> out(size_t(blocks) * bs);
          CK(cudaMemcpy(out.data(), dout, out.size() * 4, cudaMemcpyDeviceToHost));
          for (int x : out)
            if (x != 0) { fprintf(stderr, "barrier_lines: wrong output %d\n", x); return 1; }
          std::sort(per_batch.begin(), per_batch.end());
          const size_t n = per_batch.size();
          ROW(f, "%s,%d,%d,%d,%s,%d,%d,%.1f,%.1f,%.1f\n", block_wide ? "mbarrier" : "cp_async", bs, bpm, blocks,
              l2 ? "L2" : "DRAM", kBatches, kReps, median(per_batch), per_batch[n / 10], per_batch[n * 9 / 10]);
        }
  fclose(f);
  return 0;
}

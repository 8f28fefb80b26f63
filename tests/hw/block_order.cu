// Which of two blocks on one SM a sub-partition's scheduler favours: each SM runs two blocks of
// 4 * W warps (W per scheduler each, 2 * W per scheduler in all), every warp the same loop of
// FFMAs from a start common to its block (a __syncthreads), stamping clock64 (per SM, so
// comparable between the two blocks) and %smid.  Per SM the block that started first is `first`;
// each warp's end is taken from the SM's earliest start, as a fraction of the SM's last end.  A
// greedy-then-oldest scheduler ends the first block's warps before the second's begin to run, a
// round robin ends them together (traces/h100/block_order.csv; warp_order.cu asks the same within
// one block).
//
// Usage: block_order OUTDIR -> OUTDIR/block_order.csv
#include "common.cuh"
#include "fma_loop.cuh"

namespace {

constexpr int kReps = 5;

template <int kChains>
__global__ void block_kernel(float* out, int trips, long long* rec) {
  long long t0, t1;
  const float s = fma_loop<kChains>(trips, &t0, &t1);
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
  if (threadIdx.x % 32 == 0) {
    unsigned smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    long long* r = rec + (blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32) * 3;
    r[0] = t0;
    r[1] = t1;
    r[2] = smid;
  }
}

template <int kChains>
void run(FILE* f, const char* mode, int W, int sms, float* dout, long long* drec) {
  const int warps = 4 * W, blocks = 2 * sms, trips = 256;
  std::vector<long long> h(size_t(blocks) * warps * 3);
  // per (first or second block, warp): end fractions; per rep and SM: the start gap
  std::vector<std::vector<double>> frac(2 * warps);
  std::vector<double> gap, last_all;
  for (int r = 0; r < kReps; ++r) {
    block_kernel<kChains><<<blocks, warps * 32>>>(dout, trips, drec);
    CK_LAUNCH();
    CK(cudaMemcpy(h.data(), drec, h.size() * sizeof(long long), cudaMemcpyDeviceToHost));
    std::vector<std::vector<int>> on(sms);
    for (int b = 0; b < blocks; ++b) on[h[size_t(b) * warps * 3 + 2] % sms].push_back(b);
    for (int sm = 0; sm < sms; ++sm) {
      if (on[sm].size() != 2) continue;  // an SM that ran one block, or three in turn: not a pair
      int b0 = on[sm][0], b1 = on[sm][1];
      auto start = [&](int b) {
        long long t = h[size_t(b) * warps * 3];
        for (int w = 0; w < warps; ++w) t = std::min(t, h[(size_t(b) * warps + w) * 3]);
        return t;
      };
      if (start(b1) < start(b0)) std::swap(b0, b1);
      const long long t0 = start(b0);
      long long last = 0;
      for (int b : {b0, b1})
        for (int w = 0; w < warps; ++w) last = std::max(last, h[(size_t(b) * warps + w) * 3 + 1] - t0);
      for (int k = 0; k < 2; ++k)
        for (int w = 0; w < warps; ++w)
          frac[k * warps + w].push_back(double(h[(size_t(k ? b1 : b0) * warps + w) * 3 + 1] - t0) / double(last));
      gap.push_back(double(start(b1) - t0));
      last_all.push_back(double(last));
    }
  }
  for (int k = 0; k < 2; ++k)
    for (int w = 0; w < warps; ++w)
      ROW(f, "%s,%d,%s,%d,%d,%.0f,%.0f,%.3f,%zu\n", mode, W, k ? "second" : "first", w, w % 4, median(gap),
          median(last_all), median(frac[k * warps + w]), gap.size());
}

}  // namespace

int main(int argc, char** argv) {
  FILE* f = open_csv(argc, argv, "block_order.csv",
                     "mode,warps_per_scheduler_per_block,block,warp,scheduler,second_start_cycles_median,"
                     "last_warp_cycles_median,end_fraction_median,pairs");
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  float* dout;
  long long* drec;
  CK(cudaMalloc(&dout, size_t(2 * sms) * 1024 * sizeof(float)));
  CK(cudaMalloc(&drec, size_t(2 * sms) * 32 * 3 * sizeof(long long)));
  for (int W : {1, 2, 4}) {
    run<1>(f, "dep", W, sms, dout, drec);
    run<8>(f, "indep", W, sms, dout, drec);
  }
  fclose(f);
  return 0;
}

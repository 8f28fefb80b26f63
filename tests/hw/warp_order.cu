// Which warps a sub-partition's scheduler favours: every warp of one block runs the same loop of
// FFMAs from a common start (a __syncthreads), and each stamps when it is done.  With W warps per
// scheduler and the FMA pipe saturated, a greedy scheduler finishes warps one after another in its
// order of preference, a round-robin one finishes them all together.  The per-warp end times, as
// a fraction of the last warp's, say which it is and in what order (warp w runs on scheduler w % 4).
//
// Usage: warp_order OUTDIR -> OUTDIR/warp_order.csv
#include "common.cuh"
#include "fma_loop.cuh"

namespace {

constexpr int kReps = 5;

template <int kChains>
__global__ void order_kernel(float* out, int trips, long long* done) {
  long long t0, t1;
  const float s = fma_loop<kChains>(trips, &t0, &t1);
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
  if (threadIdx.x % 32 == 0) {
    done[(blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32) * 2 + 0] = t0;
    done[(blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32) * 2 + 1] = t1;
  }
}

template <int kChains>
void run(FILE* f, const char* mode, int W, int sms, float* dout, long long* ddone) {
  const int warps = 4 * W, trips = 256;
  std::vector<long long> h(size_t(sms) * warps * 2);
  std::vector<std::vector<double>> frac(warps);
  std::vector<double> last_all;
  for (int r = 0; r < kReps; ++r) {
    order_kernel<kChains><<<sms, warps * 32>>>(dout, trips, ddone);
    CK_LAUNCH();
    CK(cudaMemcpy(h.data(), ddone, h.size() * sizeof(long long), cudaMemcpyDeviceToHost));
    for (int b = 0; b < sms; ++b) {
      long long t0 = h[size_t(b) * warps * 2], last = 0;
      for (int w = 0; w < warps; ++w) t0 = std::min(t0, h[(size_t(b) * warps + w) * 2]);
      for (int w = 0; w < warps; ++w) last = std::max(last, h[(size_t(b) * warps + w) * 2 + 1] - t0);
      for (int w = 0; w < warps; ++w)
        frac[w].push_back(double(h[(size_t(b) * warps + w) * 2 + 1] - t0) / double(last));
      last_all.push_back(double(last));
    }
  }
  for (int w = 0; w < warps; ++w)
    ROW(f, "%s,%d,%d,%d,%.0f,%.3f\n", mode, W, w, w % 4, median(last_all), median(frac[w]));
}

}  // namespace

int main(int argc, char** argv) {
  FILE* f = open_csv(argc, argv, "warp_order.csv",
                     "mode,warps_per_scheduler,warp,scheduler,last_warp_cycles_median,end_fraction_median");
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  float* dout;
  long long* ddone;
  CK(cudaMalloc(&dout, size_t(sms) * 1024 * sizeof(float)));
  CK(cudaMalloc(&ddone, size_t(sms) * 32 * 2 * sizeof(long long)));
  for (int W : {2, 4, 8}) {
    run<1>(f, "dep", W, sms, dout, ddone);
    run<8>(f, "indep", W, sms, dout, ddone);
  }
  fclose(f);
  return 0;
}

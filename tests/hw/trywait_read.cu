// When in its latency a TRYWAIT reads the barrier (traces/h100/trywait_read.csv): warps 1-3 of a block of
// 128 threads arrive on an mbarrier of 96 after `gap_arrive` dependent FMAs; lane 0 of warp 0, alone in an
// if (its warp diverged, the other lanes at the BSYNC) or with its whole warp, runs `gap_try` FMAs and
// then a raw try_wait.parity loop on the phase those arrivals complete. Thread 32 stamps its arrive,
// lane 0 its first TRYWAIT and the loop's end. Swept so that the try comes from ~100 cycles before the
// arrive to ~150 after: the offset at which the first try starts to pass is how much later than the
// arrive's issue a try must issue to see it (smsim: mbarrier_count_latency, read at the try's issue);
// a try that misses pays the retry loop. One block per SM, 132 SMs x 5 runs, medians.
//
// Usage: trywait_read OUTDIR -> OUTDIR/trywait_read.csv
#include <algorithm>
#include <vector>
#include "common.cuh"

namespace {

constexpr int kReps = 5, kGapArrive = 64;
constexpr float kMul = 1.000001f, kAdd = 0.5f;

__device__ __forceinline__ uint32_t smem_addr(const void* p) { return uint32_t(__cvta_generic_to_shared(p)); }

template <int K>
__global__ void trywait_read(int gap_try, int diverge, long long* out) {
  __shared__ alignas(8) unsigned long long bar;
  __shared__ long long t_arrive;
  const int tid = threadIdx.x, lane = tid % 32;
  if (tid == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 96;" ::"r"(smem_addr(&bar)));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  float v = float(tid);
  if (tid >= 32) {
    for (int i = 0; i < kGapArrive; ++i) v = fmaf(v, kMul, kAdd);
    const long long t = clock64() + (v == 0.25f);
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(&bar)) : "memory");
    if (tid == 32) t_arrive = t;
  } else {
    for (int i = 0; i < gap_try; ++i) v = fmaf(v, kMul, kAdd);
    uint32_t x = uint32_t(v);
#pragma unroll
    for (int i = 0; i < K; ++i) asm volatile("add.u32 %0, %0, 1;" : "+r"(x));  // K more dependent adds, ~4 cycles each
    if (!diverge || lane == int(x & 0)) {
      const long long t0 = clock64();
      uint32_t ok = 0;
      while (!ok)
        asm volatile(
            "{\n\t.reg .pred P;\n\tmbarrier.try_wait.parity.shared::cta.b64 P, [%1], 0;\n\tselp.u32 %0, 1, 0, P;\n\t}"
            : "=r"(ok)
            : "r"(smem_addr(&bar))
            : "memory");
      const long long t1 = clock64();
      if (lane == 0) {
        out[3 * blockIdx.x + 0] = t0;
        out[3 * blockIdx.x + 1] = t1 + (v == 0.25f);
      }
    }
  }
  __syncthreads();
  if (tid == 0) out[3 * blockIdx.x + 2] = t_arrive;
}

}  // namespace

int main(int argc, char** argv) {
  const int sms = sm_count();
  long long* dout;
  CK(cudaMalloc(&dout, 3 * size_t(sms) * 8));
  std::vector<long long> h(3 * size_t(sms));
  FILE* f = open_csv(argc, argv, "trywait_read.csv",
                     "diverged,gap_arrive_fmas,gap_try_fmas,extra_adds,try_after_arrive_median,loop_cycles_median,first_try_share");
  auto sweep = [&](auto kernel, int diverge, int gap, int k) {
    std::vector<double> off, loop;
    int fast = 0;
    for (int rep = 0; rep < kReps; ++rep) {
      kernel<<<sms, 128>>>(gap, diverge, dout);
      CK_LAUNCH();
      CK(cudaMemcpy(h.data(), dout, h.size() * 8, cudaMemcpyDeviceToHost));
      for (int b = 0; b < sms; ++b) {
        off.push_back(double(h[3 * b] - h[3 * b + 2]));
        loop.push_back(double(h[3 * b + 1] - h[3 * b]));
        fast += h[3 * b + 1] - h[3 * b] < 100;
      }
    }
    std::sort(off.begin(), off.end());
    std::sort(loop.begin(), loop.end());
    ROW(f, "%d,%d,%d,%d,%.1f,%.1f,%.3f\n", diverge, kGapArrive, gap, k, off[off.size() / 2], loop[loop.size() / 2],
        double(fast) / double(off.size()));
  };
  for (int diverge = 0; diverge < 2; ++diverge) {
    for (int gap = 0; gap <= 12; ++gap) sweep(trywait_read<0>, diverge, gap, 0);
    // from the gap whose try comes with the arrive, 4-cycle steps
    sweep(trywait_read<1>, diverge, 3, 1);
    sweep(trywait_read<2>, diverge, 3, 2);
    sweep(trywait_read<3>, diverge, 3, 3);
    sweep(trywait_read<4>, diverge, 3, 4);
    sweep(trywait_read<5>, diverge, 3, 5);
    sweep(trywait_read<6>, diverge, 3, 6);
    sweep(trywait_read<7>, diverge, 3, 7);
    sweep(trywait_read<8>, diverge, 3, 8);
    sweep(trywait_read<10>, diverge, 3, 10);
    sweep(trywait_read<12>, diverge, 3, 12);
  }
  fclose(f);
  return 0;
}

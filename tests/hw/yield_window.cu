// How long a diverged path's failed try_wait holds the warp's other path at the join. One warp:
// lanes 0-15 (path A) spin on an mbarrier (mbarrier.try_wait.parity in a loop, as libcu++'s waits
// compile) whose phase only lanes 16-31 (path B) complete, and only after the join of A's if;
// B waits at that join. On the H100 B goes on once A's wait has failed (the spinning path leaves
// the convergence barrier: traces/h100/specialized_trace.csv.gz), so the spin ends. A stamps clock64
// before its wait, B after the join: B - A is the wait's attempt, the time the failed wait holds B
// back, and B's way from the join to its stamp. The control waits on the other parity, which a
// fresh barrier reports complete at once: the same code with no spin, so the difference between
// the two is what the spin costs B. Repeated 64 times per warp on every SM; medians.
//
// Usage: yield_window OUTDIR -> OUTDIR/yield_window.csv (mode,cycles_b_after_a_median,reps)
#include <algorithm>
#include <vector>
#include "common.cuh"

namespace {

constexpr int kReps = 64;

__device__ __forceinline__ unsigned smem_u32(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }

__global__ void yield_window(long long* out, unsigned parity) {
  __shared__ alignas(8) unsigned long long mb[kReps];
  const int lane = threadIdx.x;
  if (lane == 0)
    for (int r = 0; r < kReps; ++r) asm volatile("mbarrier.init.shared.b64 [%0], %1;" ::"r"(smem_u32(&mb[r])), "r"(16));
  __syncwarp();
  for (int r = 0; r < kReps; ++r) {
    const unsigned addr = smem_u32(&mb[r]);
    long long t = 0;
    __syncwarp();
    if (lane < 16) {
      t = clock64();
      unsigned ok = 0;
      while (!ok)
        asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared.b64 p, [%1], %2;\n\tselp.u32 %0, 1, 0, p;\n\t}"
                     : "=r"(ok)
                     : "r"(addr), "r"(parity)
                     : "memory");
    }
    if (lane >= 16) {
      t = clock64();
      asm volatile("mbarrier.arrive.shared.b64 _, [%0];" ::"r"(addr) : "memory");
    }
    const long long ta = __shfl_sync(0xffffffffu, t, 0), tb = __shfl_sync(0xffffffffu, t, 16);
    if (lane == 0) out[size_t(blockIdx.x) * kReps + r] = tb - ta;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int sms = sm_count();
  long long* d;
  CK(cudaMalloc(&d, size_t(sms) * kReps * sizeof(long long)));
  FILE* f = open_csv(argc, argv, "yield_window.csv", "mode,cycles_b_after_a_median,reps");
  for (unsigned parity : {0u, 1u}) {
    yield_window<<<sms, 32>>>(d, parity);
    CK_LAUNCH();
    std::vector<long long> v(size_t(sms) * kReps);
    CK(cudaMemcpy(v.data(), d, v.size() * sizeof(long long), cudaMemcpyDeviceToHost));
    std::vector<long long> w;
    for (int b = 0; b < sms; ++b)
      for (int r = 8; r < kReps; ++r) w.push_back(v[size_t(b) * kReps + r]);
    std::sort(w.begin(), w.end());
    ROW(f, "%s,%lld,%zu\n", parity == 0 ? "spin" : "no_spin", w[w.size() / 2], w.size());
  }
  fclose(f);
  return 0;
}

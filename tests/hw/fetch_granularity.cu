// What the L2 brings in from DRAM for one 16-byte cp.async that misses: its 32-byte sector, the
// 64 bytes around it, or the whole 128-byte line. A later copy of a neighbouring byte is then an
// L2 hit or another DRAM trip. This decides what a diverged warp's groups pay when each reads its
// own 16 bytes of lines the others read too (kernels/primitive_copies.json at D >= 2).
//
//   fetch_granularity.csv  one thread per block, one block per SM (every SM at once, each in its
//                          own 2 MiB of a 1 GiB buffer, L2 flushed before each launch): a 16-byte
//                          cp.async.cg of byte 0 of a 128-byte line (a DRAM miss), wait_group 0, a
//                          pause of `gap` cycles, then one more 16-byte copy at byte `off` from the
//                          first, timed alone (issue to wait_group 0). off 0 and 16 are the same
//                          sector, 32 the other half of the first 64 bytes, 64 and 96 the line's
//                          second half, 128 and beyond other lines. Median over blocks and launches.
//                          Also cudaLimitMaxL2FetchGranularity as the driver reports it.
//
// Usage: fetch_granularity OUTDIR
#include "common.cuh"

namespace {

constexpr int kReps = 5;
constexpr size_t kRegion = 2u << 20;  // per block: its own DRAM pages, no neighbour's lines
constexpr size_t kBuffer = 1u << 30;

__global__ void probe(const char* buf, int off, int gap, long long* cycles) {
  __shared__ __align__(16) char s[32];
  const char* base = buf + size_t(blockIdx.x) * kRegion;
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(s));
  long long t0 = clock64();
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(base) : "memory");
  asm volatile("cp.async.commit_group;" ::: "memory");
  asm volatile("cp.async.wait_group 0;" ::: "memory");
  long long t1 = clock64();
  while (clock64() < t1 + gap) {
  }
  long long t2 = clock64();
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst + 16), "l"(base + off) : "memory");
  asm volatile("cp.async.commit_group;" ::: "memory");
  asm volatile("cp.async.wait_group 0;" ::: "memory");
  long long t3 = clock64();
  cycles[2 * blockIdx.x] = t1 - t0;
  cycles[2 * blockIdx.x + 1] = t3 - t2;
}

}  // namespace

int main(int argc, char** argv) {
  const int sms = sm_count();
  size_t gran = 0;
  CK(cudaDeviceGetLimit(&gran, cudaLimitMaxL2FetchGranularity));
  printf("cudaLimitMaxL2FetchGranularity %zu\n", gran);
  char* buf;
  CK(cudaMalloc(&buf, kBuffer));
  CK(cudaMemset(buf, 1, kBuffer));
  long long* d;
  CK(cudaMalloc(&d, sizeof(long long) * 2 * sms));
  L2Flusher flusher;
  FILE* f = open_csv(argc, argv, "fetch_granularity.csv",
                     "off,gap,blocks,reps,l2_fetch_granularity_limit,first_cycles_median,second_cycles_median,"
                     "second_cycles_min,second_cycles_max");
  const int offs[] = {0, 16, 32, 48, 64, 96, 128, 256, 4096};
  const int gaps[] = {2000};
  for (int gap : gaps)
    for (int off : offs) {
      std::vector<long long> first, second;
      for (int r = 0; r < kReps; ++r) {
        flusher.flush();
        probe<<<sms, 1>>>(buf, off, gap, d);  // the flush evicts the lines again
        CK_LAUNCH();
        std::vector<long long> h(2 * sms);
        CK(cudaMemcpy(h.data(), d, sizeof(long long) * 2 * sms, cudaMemcpyDeviceToHost));
        for (int b = 0; b < sms; ++b) {
          first.push_back(h[2 * b]);
          second.push_back(h[2 * b + 1]);
        }
      }
      ROW(f, "%d,%d,%d,%d,%zu,%.1f,%.1f,%lld,%lld\n", off, gap, sms, kReps, gran, median(first), median(second),
          *std::min_element(second.begin(), second.end()), *std::max_element(second.begin(), second.end()));
    }
  fclose(f);
  CK(cudaFree(d));
  CK(cudaFree(buf));
  return 0;
}

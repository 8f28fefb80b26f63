// A kernel written as a user would, not for calibration: a bulk-copy (TMA) ring of S stages where
// thread 0 both produces (waits on empty[s] by parity, mbarrier.arrive.expect_tx on full[s], one
// cp.async.bulk of the batch's 512 bytes completing on it) and, with the other 127 threads, consumes
// (waits on full[s] by parity, compute: LDS, k = 16 FMAs, STG, fence.proxy.async, arrive on
// empty[s]); each iteration b produces batch b and consumes batch b - (S - 1). Its smsim
// description is tests/semantics/tma_ring.json. 128 threads, 2 blocks per SM, 128 batches, input
// from DRAM (L2 flushed). traces/h100/tma_user.csv: per S, cycles per batch of a block (median over
// blocks x reps) and of an SM (first block start to last block end, median over SMs x reps).
//
// Usage: tma_user OUTDIR -> OUTDIR/tma_user.csv
#include <algorithm>
#include <vector>
#include "common.cuh"

namespace {

constexpr int kBlock = 128, kBatches = 128, kK = 16, kBps = 2, kReps = 5;
constexpr float kMul = 1.000001f, kAdd = 0.5f;

__device__ __forceinline__ uint32_t smem_addr(const void* p) { return uint32_t(__cvta_generic_to_shared(p)); }

__device__ __forceinline__ bool try_wait_parity(unsigned long long* bar, int parity) {
  uint32_t ok;
  asm volatile(
      "{\n\t.reg .pred P;\n\tmbarrier.try_wait.parity.shared::cta.b64 P, [%1], %2;\n\tselp.u32 %0, 1, 0, P;\n\t}"
      : "=r"(ok)
      : "r"(smem_addr(bar)), "r"(parity)
      : "memory");
  return ok != 0;
}

template <int S, bool kStamp = false>
__global__ void tma_ring(int* gout, const int* gin, long long* rec, long long* marks = nullptr) {
  const long long t0 = clock64();
  __shared__ alignas(128) int buf[S * kBlock];
  __shared__ alignas(8) unsigned long long full[S], empty[S];
  const int tid = threadIdx.x;
  const int grid_size = gridDim.x * blockDim.x;
  auto tile = [&](int b) { return blockIdx.x * blockDim.x + grid_size * b; };
  if (tid == 0) {
    for (int s = 0; s < S; ++s) {
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&full[s])));
      asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(&empty[s])), "r"(kBlock));
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  long long* m = kStamp && blockIdx.x == 0 && (tid == 0 || tid == 1 || tid == 32) ? marks + (tid == 32 ? 2 : tid) * 4 * (kBatches + S) : nullptr;
  for (int b = 0; b < kBatches + S - 1; ++b) {
    if (m) m[4 * b + 0] = clock64();
    if (tid == 0 && b < kBatches) {
      const int s = b % S;
      bool ok = b < S;
      while (!ok) ok = try_wait_parity(&empty[s], ((b / S) % 2) ^ 1);
      if (m) m[4 * b + 1] = clock64();
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(&full[s])),
                   "r"(kBlock * 4)
                   : "memory");
      asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                       smem_addr(&buf[s * kBlock])),
                   "l"(gin + tile(b)), "r"(kBlock * 4), "r"(smem_addr(&full[s]))
                   : "memory");
    }
    if (b >= S - 1) {
      const int c = b - (S - 1), cs = c % S;
      bool got = false;
      if (m) m[4 * b + 2] = clock64();
      while (!got) got = try_wait_parity(&full[cs], (c / S) % 2);
      if (m) m[4 * b + 3] = clock64();
      float v = float(buf[cs * kBlock + tid]);
#pragma unroll
      for (int i = 0; i < kK; ++i) v = fmaf(v, kMul, kAdd);
      gout[tile(c) + tid] = __float_as_int(v);
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(&empty[cs])) : "memory");
    }
  }
  __syncthreads();
  if (tid == 0) {
    const long long t1 = clock64();
    unsigned smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    rec[3 * blockIdx.x + 0] = t0;
    rec[3 * blockIdx.x + 1] = t1;
    rec[3 * blockIdx.x + 2] = smid;
  }
}

// Probe: how long a raw try_wait.parity loop takes on a phase that completed before it, in a converged
// warp and in a diverged one (lane 0 alone in an if): one warp per SM arrives on a barrier of 32, runs
// gap dependent FMAs, then times the loop (tma_user_probe.csv).
__global__ void trywait_probe(int diverge, int gap, long long* out) {
  __shared__ alignas(8) unsigned long long bar;
  const int lane = threadIdx.x;
  if (lane == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 32;" ::"r"(smem_addr(&bar)));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncwarp();
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(&bar)) : "memory");
  float v = float(lane);
  for (int i = 0; i < gap; ++i) v = fmaf(v, kMul, kAdd);
  long long t = 0;
  if (!diverge || lane == (int(v) & 0)) {
    const long long t0 = clock64();
    bool ok = false;
    while (!ok) ok = try_wait_parity(&bar, 0);
    t = clock64() - t0;
  }
  if (lane == 0) out[blockIdx.x] = t + (v == 1.5f);
}

template <int S>
void run(FILE* f, int sms, int* gout, const int* gin, long long* drec, L2Flusher& flusher) {
  const int nblocks = sms * kBps;
  std::vector<long long> rec(3 * size_t(nblocks));
  std::vector<double> block, span;
  for (int rep = 0; rep < kReps; ++rep) {
    flusher.flush();
    tma_ring<S><<<nblocks, kBlock>>>(gout, gin, drec);
    CK_LAUNCH();
    CK(cudaMemcpy(rec.data(), drec, rec.size() * 8, cudaMemcpyDeviceToHost));
    std::vector<std::pair<long long, long long>> first(sms, {LLONG_MAX, 0});
    for (int i = 0; i < nblocks; ++i) {
      block.push_back(double(rec[3 * i + 1] - rec[3 * i]) / kBatches);
      auto& sm = first[rec[3 * i + 2]];
      sm.first = std::min(sm.first, rec[3 * i]);
      sm.second = std::max(sm.second, rec[3 * i + 1]);
    }
    for (auto& sm : first)
      if (sm.second) span.push_back(double(sm.second - sm.first) / kBatches);
  }
  std::sort(block.begin(), block.end());
  std::sort(span.begin(), span.end());
  ROW(f, "%d,%d,%d,%d,%d,%.1f,%.1f\n", S, kBlock, kBps, kK, kBatches, block[block.size() / 2], span[span.size() / 2]);
}

}  // namespace

int main(int argc, char** argv) {
  const int sms = sm_count();
  const size_t n = size_t(kBatches) * sms * kBps * kBlock;
  int *gin, *gout;
  long long* drec;
  CK(cudaMalloc(&gin, n * 4));
  CK(cudaMalloc(&gout, n * 4));
  CK(cudaMalloc(&drec, 3 * size_t(sms) * kBps * 8));
  CK(cudaMemset(gin, 1, n * 4));
  L2Flusher flusher;
  FILE* f = open_csv(argc, argv, "tma_user.csv",
                     "stages,block_size,blocks_per_sm,k,batch_sz,cycles_per_batch_median,cycles_per_batch_sm_span_median");
  run<1>(f, sms, gout, gin, drec, flusher);
  run<2>(f, sms, gout, gin, drec, flusher);
  run<3>(f, sms, gout, gin, drec, flusher);
  run<4>(f, sms, gout, gin, drec, flusher);
  run<5>(f, sms, gout, gin, drec, flusher);
  run<6>(f, sms, gout, gin, drec, flusher);
  run<8>(f, sms, gout, gin, drec, flusher);
  fclose(f);
  // the stamped ring at S = 4 and 8, block 0: per iteration, threads 0 (producer and consumer), 1 (a
  // consumer of thread 0's warp) and 32 (a consumer of warp 1): iteration start, after the empty wait
  // (thread 0), before and after the full wait
  FILE* g = open_csv(argc, argv, "tma_user_stamps.csv",
                     "stages,thread,iteration,start,after_empty_wait,before_full_wait,after_full_wait");
  for (int S : {4, 8}) {
    long long* dmarks;
    const int per = 4 * (kBatches + 8), nm = 3 * per;
    CK(cudaMalloc(&dmarks, nm * 8));
    CK(cudaMemset(dmarks, 0, nm * 8));
    flusher.flush();
    if (S == 4)
      tma_ring<4, true><<<sms * kBps, kBlock>>>(gout, gin, drec, dmarks);
    else
      tma_ring<8, true><<<sms * kBps, kBlock>>>(gout, gin, drec, dmarks);
    CK_LAUNCH();
    std::vector<long long> hm(nm);
    CK(cudaMemcpy(hm.data(), dmarks, nm * 8, cudaMemcpyDeviceToHost));
    // the kernel strides each thread's marks by 4 * (kBatches + S)
    const int stride = 4 * (kBatches + S);
    const int tids[3] = {0, 1, 32};
    for (int t = 0; t < 3; ++t)
      for (int b = 0; b < kBatches + S - 1; ++b) {
        const long long* q = &hm[t * stride + 4 * b];
        ROW(g, "%d,%d,%d,%lld,%lld,%lld,%lld\n", S, tids[t], b, q[0] - hm[0], q[1] ? q[1] - hm[0] : -1,
            q[2] ? q[2] - hm[0] : -1, q[3] ? q[3] - hm[0] : -1);
      }
    CK(cudaFree(dmarks));
  }
  fclose(g);
  FILE* h = open_csv(argc, argv, "tma_user_probe.csv", "diverged,gap_fmas,trywait_loop_cycles_median");
  std::vector<long long> ho(sms);
  for (int d = 0; d < 2; ++d)
    for (int gap : {0, 4, 16, 64, 256}) {
      std::vector<double> all;
      for (int rep = 0; rep < kReps; ++rep) {
        trywait_probe<<<sms, 32>>>(d, gap, drec);
        CK_LAUNCH();
        CK(cudaMemcpy(ho.data(), drec, sms * 8, cudaMemcpyDeviceToHost));
        for (long long x : ho) all.push_back(double(x));
      }
      std::sort(all.begin(), all.end());
      ROW(h, "%d,%d,%.1f\n", d, gap, all[all.size() / 2]);
    }
  fclose(h);
  return 0;
}

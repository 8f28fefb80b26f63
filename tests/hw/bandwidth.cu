// Throughput microbenchmarks over every SM:
//
//   ldgsts_throughput.csv  many warps per SM streaming cp.async (LDGSTS) into a shared-memory
//                          ring, nothing else, on every SM and on one SM alone: bytes landed
//                          per cycle per SM, from DRAM (each
//                          block streams its own slice of 1 GiB once, L2 flushed first) and from
//                          L2 (each block re-reads its own 192 KiB slice, touched first; the
//                          shared-memory carve-out is set to the maximum so that L1 keeps
//                          ~28 KiB and the .ca copies of 4/8 B cannot hit in L1)
//   dram_bandwidth.csv     a plain streaming copy (16-byte loads and stores, two 1024-thread
//                          blocks per SM) and a streaming read (sum) over 1 GiB; bytes/cycle/SM
//                          uses the SM clock measured during the run (clock64 against
//                          %globaltimer in every block), not the nominal one
//
// Usage: bandwidth OUTDIR
#include "common.cuh"

namespace {

constexpr int kReps = 5;
constexpr int kStages = 8;  // cp.async groups in flight per thread: enough bytes for Little's law

__device__ __forceinline__ uint64_t globaltimer() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Each thread copies one kChunk-byte piece per stage; a stage is blockDim.x * kChunk bytes of
// the block's slice. The ring keeps kStages - 1 groups in flight behind the newest.
template <int kChunk>
__global__ void ldgsts_stream(const char* src, size_t slice_bytes, size_t wrap_bytes, int batches, long long* cycles) {
  extern __shared__ __align__(16) char ring[];
  const size_t stage_bytes = size_t(blockDim.x) * kChunk;
  const char* my = src + size_t(blockIdx.x) * slice_bytes;
  __syncthreads();
  long long t0 = clock64();
  for (int b = 0; b < batches; ++b) {
    const uint32_t dst = static_cast<uint32_t>(__cvta_generic_to_shared(ring + (b % kStages) * stage_bytes + threadIdx.x * kChunk));
    const char* g = my + (size_t(b) * stage_bytes) % wrap_bytes + threadIdx.x * kChunk;
    if (kChunk == 16) asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(g) : "memory");
    else              asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(dst), "l"(g), "n"(kChunk) : "memory");
    asm volatile("cp.async.commit_group;" ::: "memory");
    asm volatile("cp.async.wait_group %0;" ::"n"(kStages - 1) : "memory");
  }
  asm volatile("cp.async.wait_group 0;" ::: "memory");
  __syncthreads();
  long long t1 = clock64();
  if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
}

// The ring needs more than the default 48 KiB of dynamic shared memory; the maximum carve-out
// also shrinks L1, which keeps the L2-source runs out of L1.
template <int kChunk>
void launch_ldgsts_t(int blocks, int threads, size_t smem, const char* src, size_t slice, int batches, long long* cyc) {
  CK(cudaFuncSetAttribute(ldgsts_stream<kChunk>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  CK(cudaFuncSetAttribute(ldgsts_stream<kChunk>, cudaFuncAttributePreferredSharedMemoryCarveout, 100));
  ldgsts_stream<kChunk><<<blocks, threads, smem>>>(src, slice, slice, batches, cyc);
}
void launch_ldgsts(int chunk, int blocks, int threads, size_t smem, const char* src, size_t slice, int batches, long long* cyc) {
  if (chunk == 4) launch_ldgsts_t<4>(blocks, threads, smem, src, slice, batches, cyc);
  if (chunk == 8) launch_ldgsts_t<8>(blocks, threads, smem, src, slice, batches, cyc);
  if (chunk == 16) launch_ldgsts_t<16>(blocks, threads, smem, src, slice, batches, cyc);
}

__global__ void touch(const char* p, size_t bytes, uint32_t* sink) {
  uint32_t acc = 0;
  for (size_t i = (size_t(blockIdx.x) * blockDim.x + threadIdx.x) * 16; i < bytes; i += size_t(gridDim.x) * blockDim.x * 16)
    acc += __ldcg(reinterpret_cast<const uint32_t*>(p + i));
  if (acc == 0xdeadbeef) *sink = acc;
}

struct Stamp { long long c0, c1; uint64_t g0, g1; };

__device__ __forceinline__ void stamp_begin(Stamp* s) {
  if (threadIdx.x == 0) { s[blockIdx.x].c0 = clock64(); s[blockIdx.x].g0 = globaltimer(); }
}
__device__ __forceinline__ void stamp_end(Stamp* s) {
  __syncthreads();
  if (threadIdx.x == 0) { s[blockIdx.x].c1 = clock64(); s[blockIdx.x].g1 = globaltimer(); }
}

__global__ void copy_stream(const int4* __restrict__ src, int4* __restrict__ dst, size_t n, Stamp* st) {
  stamp_begin(st);
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    dst[i] = src[i];
  stamp_end(st);
}

__global__ void read_stream(const int4* __restrict__ src, size_t n, int* sink, Stamp* st) {
  stamp_begin(st);
  int acc = 0;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    int4 v = src[i];
    acc += v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x7fffffff) *sink = acc;
  stamp_end(st);
}

__global__ void fill(int4* p, size_t n) {
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = make_int4(int(i), int(i * 3), int(i * 7), int(i * 11));
}

}  // namespace

int main(int argc, char** argv) {
  const int sms = sm_count();
  L2Flusher flusher;
  const size_t big = size_t(1) << 30;
  char *a, *b;
  CK(cudaMalloc(&a, big));
  CK(cudaMalloc(&b, big));
  fill<<<sms * 4, 256>>>(reinterpret_cast<int4*>(a), big / 16);
  CK_LAUNCH();
  long long* dcyc;
  uint32_t* dsink;
  CK(cudaMalloc(&dcyc, sms * sizeof(long long)));
  CK(cudaMalloc(&dsink, 64));

  // ------------------------------------------------------------ LDGSTS
  {
    FILE* f = open_csv(argc, argv, "ldgsts_throughput.csv",
                       "source,chunk_bytes,threads_per_block,blocks,stages_in_flight,bytes_per_block,reps,"
                       "block_cycles_median,bytes_per_cycle_per_sm_median");
    const int threads = 1024;
    // All SMs at once (what a full grid sees: shares of L2 and DRAM bandwidth) and one SM
    // alone (the SM's own LDGSTS limit).
    for (int blocks : {sms, 1}) {
      for (int dram = 0; dram < 2; ++dram) {
        for (int chunk : {4, 8, 16}) {
          const size_t stage = size_t(threads) * chunk;
          const size_t slice = dram ? (big / sms) / stage * stage : (192u << 10);
          // DRAM: one pass over the block's slice of 1 GiB (at most 2048 stages of it, so 4 B
          // chunks stream a quarter of it), never re-read. L2: the 192 KiB slice, re-read.
          const int batches = dram ? int(std::min<size_t>(slice / stage, 2048)) : 2048;
          const size_t smem = kStages * stage;
          std::vector<long long> all;
          for (int r = 0; r < kReps; ++r) {
            if (dram) flusher.flush();
            else { touch<<<sms * 4, 256>>>(a, slice * sms, dsink); CK_LAUNCH(); }
            launch_ldgsts(chunk, blocks, threads, smem, a, slice, batches, dcyc);
            CK_LAUNCH();
            std::vector<long long> c(blocks);
            CK(cudaMemcpy(c.data(), dcyc, blocks * sizeof(long long), cudaMemcpyDeviceToHost));
            all.insert(all.end(), c.begin(), c.end());
          }
          const double bytes = double(batches) * stage;
          const double cyc = median(all);
          ROW(f, "%s,%d,%d,%d,%d,%.0f,%d,%.0f,%.2f\n", dram ? "DRAM" : "L2", chunk, threads, blocks, kStages, bytes,
              kReps, cyc, bytes / cyc);
        }
      }
    }
    fclose(f);
  }

  // ------------------------------------------------------------ DRAM streaming
  {
    FILE* f = open_csv(argc, argv, "dram_bandwidth.csv",
                       "kernel,bytes_moved,blocks,threads_per_block,reps,ms_median,GB_per_s_median,sm_clock_MHz_measured,"
                       "bytes_per_cycle_per_sm");
    const int blocks = sms * 2, threads = 1024;
    Stamp* dst_;
    CK(cudaMalloc(&dst_, blocks * sizeof(Stamp)));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int kind = 0; kind < 2; ++kind) {
      std::vector<double> ms, mhz;
      const size_t n = big / 16;
      for (int r = 0; r < kReps + 1; ++r) {  // the first run is a warm-up
        flusher.flush();
        CK(cudaEventRecord(e0));
        if (kind == 0) copy_stream<<<blocks, threads>>>(reinterpret_cast<int4*>(a), reinterpret_cast<int4*>(b), n, dst_);
        else read_stream<<<blocks, threads>>>(reinterpret_cast<int4*>(a), n, reinterpret_cast<int*>(dsink), dst_);
        CK(cudaEventRecord(e1));
        CK_LAUNCH();
        float t;
        CK(cudaEventElapsedTime(&t, e0, e1));
        std::vector<Stamp> st(blocks);
        CK(cudaMemcpy(st.data(), dst_, blocks * sizeof(Stamp), cudaMemcpyDeviceToHost));
        std::vector<double> m;
        for (const Stamp& s : st)
          if (s.g1 > s.g0) m.push_back(double(s.c1 - s.c0) / double(s.g1 - s.g0) * 1000.0);
        if (r == 0) continue;
        ms.push_back(t);
        mhz.push_back(median(m));
      }
      if (kind == 0) {  // the copy must have copied
        std::vector<int4> h(1 << 16);
        CK(cudaMemcpy(h.data(), b + big - h.size() * 16, h.size() * 16, cudaMemcpyDeviceToHost));
        size_t i0 = n - h.size();
        for (size_t i = 0; i < h.size(); ++i)
          if (h[i].x != int(i0 + i) || h[i].w != int((i0 + i) * 11)) { fprintf(stderr, "copy_stream: wrong data at %zu\n", i0 + i); return 1; }
      }
      const double bytes = kind == 0 ? 2.0 * big : 1.0 * big;
      const double t = median(ms), clk = median(mhz);
      ROW(f, "%s,%.0f,%d,%d,%d,%.4f,%.1f,%.0f,%.2f\n", kind == 0 ? "copy" : "read", bytes, blocks, threads, kReps, t,
          bytes / (t * 1e6), clk, bytes / (t * 1e-3 * clk * 1e6) / sms);
    }
    fclose(f);
  }
  printf("bandwidth: done\n");
  return 0;
}

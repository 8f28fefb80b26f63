// What the L2's write-backs to DRAM do to a DRAM read's latency (traces/h100/writeback.csv).
//
// A kernel whose output does not fit in L2 has its dirty lines written back to DRAM while it runs:
// do those writes load DRAM for the reads the way more reads would (the model's dram_load), or
// does DRAM drain them beside the reads?  The loop of inflight_latency.cu's lines mode (one stage:
// C = 4 copies of 16 bytes a thread from its grid-wide row of a 553 MB input, so every read comes from
// DRAM, __pipeline_wait_prior(0)), one block of
// W warps per SM on every SM, with after each batch S 16-byte stores a thread into an output of
// 512 MB (ten times the L2) or none. The L2 is filled with dirty lines first (a 256 MB write), so
// from the first batch every line a store brings in pushes one out to DRAM. Lane 0 of every warp
// of block 0 stamps each batch's first copy and its wait's end: the copy's latency, batches 16 to
// the end, against the same loop without the stores at the same W. The batch count keeps the
// grid's stores above 2 GB (each line in L2 is written back several times over).
//
// Usage: writeback OUTDIR -> OUTDIR/writeback.csv
//   columns: warps,stores,grid_blocks,batches,read_bytes_per_sm_batch,write_bytes_per_sm_batch,
//            cycles_per_batch,latency_median,latency_p10,latency_p90
#include <cuda_pipeline.h>
#include <cstdio>
#include <vector>
#include "common.cuh"

namespace {

constexpr int kCopies = 4;
constexpr int kMaxBatches = 4096;
constexpr size_t kOutBytes = size_t(512) << 20;

template <int S>
__global__ void reads_and_writebacks(const char* global_in, int rows, int4* global_out, size_t out_lines, int batches,
                                     long long* stamps, long long* cycles) {
  extern __shared__ __align__(16) char shared[];  // kCopies * blockDim.x * 16
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const size_t piece = size_t(blockDim.x) * 16, row = size_t(gridDim.x) * piece;
  const char* src = global_in + size_t(blockIdx.x) * piece + size_t(tid) * 16;
  const bool traced = blockIdx.x == 0 && lane == 0;
  long long* t = stamps + size_t(warp) * kMaxBatches * 2;
  const size_t threads = size_t(gridDim.x) * blockDim.x, me = size_t(blockIdx.x) * blockDim.x + tid;
  int4 acc = make_int4(0, 0, 0, 0);
  const long long t0 = clock64();
  for (int b = 0; b < batches; ++b) {
    if (traced) t[2 * b] = clock64();
#pragma unroll
    for (int c = 0; c < kCopies; ++c)
      __pipeline_memcpy_async(shared + (c * blockDim.x + tid) * 16, src + (size_t(b % rows) * kCopies + c) * row, 16);
    __pipeline_commit();
    __pipeline_wait_prior(0);
    const int4 v = *reinterpret_cast<const int4*>(shared + tid * 16);
    if (traced) t[2 * b + 1] = clock64();
    acc.x += v.x;
#pragma unroll
    for (int s = 0; s < S; ++s)  // the grid writes consecutive lines, wrapping around the output
      global_out[((size_t(b) * S + s) * threads + me) % out_lines] = acc;
  }
  __syncthreads();
  if (tid == 0) cycles[blockIdx.x] = clock64() - t0;
  if (acc.x == 0x7fffffff) global_out[0] = acc;  // keeps the reads
}

using Kernel = void (*)(const char*, int, int4*, size_t, int, long long*, long long*);
Kernel pick(int s) {
  switch (s) {
    case 0: return reads_and_writebacks<0>;
    case 2: return reads_and_writebacks<2>;
    default: return reads_and_writebacks<4>;
  }
}

__global__ void dirty(int4* out, size_t n) {
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    out[i] = make_int4(int(i), 1, 2, 3);
}

}  // namespace

int main(int argc, char** argv) {
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  FILE* f = open_csv(argc, argv, "writeback.csv",
                     "warps,stores,grid_blocks,batches,read_bytes_per_sm_batch,write_bytes_per_sm_batch,"
                     "cycles_per_batch,latency_median,latency_p10,latency_p90");
  const size_t in_bytes = size_t(64) * kCopies * sms * 1024 * 16;  // 553 MB on the H100, read round and round
  char* din;
  int4* dout;
  int4* dscratch;
  long long *dstamps, *dcyc;
  CK(cudaMalloc(&din, in_bytes));
  CK(cudaMemset(din, 1, in_bytes));
  CK(cudaMalloc(&dout, kOutBytes));
  CK(cudaMalloc(&dscratch, size_t(256) << 20));
  CK(cudaMalloc(&dstamps, size_t(32) * kMaxBatches * 2 * sizeof(long long)));
  CK(cudaMalloc(&dcyc, size_t(sms) * sizeof(long long)));
  std::vector<long long> stamps(size_t(32) * kMaxBatches * 2), cyc(sms);
  for (int warps : {1, 2, 4, 8, 16, 32})
    for (int s : {0, 2, 4}) {
      const int bs = warps * 32;
      const size_t per_batch = size_t(sms) * bs * 16 * (s ? s : 4);  // the batch count as if S were 4 at S = 0
      int batches = int((size_t(2) << 30) / per_batch) + 16;
      batches = batches > kMaxBatches ? kMaxBatches : batches;
      Kernel fn = pick(s);
      CK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, kCopies * bs * 16));
      dirty<<<sms * 4, 256>>>(dscratch, (size_t(256) << 20) / 16);  // L2 full of dirty lines
      CK_LAUNCH();
      CK(cudaMemset(dstamps, 0, stamps.size() * sizeof(long long)));
      const int rows = int(in_bytes / (size_t(kCopies) * sms * bs * 16));  // batches before the input repeats
      fn<<<sms, bs, size_t(kCopies) * bs * 16>>>(din, rows, dout, kOutBytes / 16, batches, dstamps, dcyc);
      CK_LAUNCH();
      CK(cudaMemcpy(stamps.data(), dstamps, stamps.size() * sizeof(long long), cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(cyc.data(), dcyc, sms * sizeof(long long), cudaMemcpyDeviceToHost));
      std::vector<long long> lat;
      for (int w = 0; w < warps; ++w)
        for (int b = 16; b < batches; ++b) lat.push_back(stamps[(size_t(w) * kMaxBatches + b) * 2 + 1] - stamps[(size_t(w) * kMaxBatches + b) * 2]);
      std::sort(lat.begin(), lat.end());
      std::sort(cyc.begin(), cyc.end());
      auto q = [&](double p) { return double(lat[size_t(p * (lat.size() - 1))]); };
      ROW(f, "%d,%d,%d,%d,%d,%d,%.1f,%.0f,%.0f,%.0f\n", warps, s, sms, batches, bs * 16 * kCopies, bs * 16 * s,
          double(cyc[sms / 2]) / batches, q(0.5), q(0.1), q(0.9));
    }
  fclose(f);
  return 0;
}

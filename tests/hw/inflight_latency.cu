// How long a per-thread copy (__pipeline_memcpy_async, LDGSTS) takes to land when the loop keeps
// S batches in flight. The guide-style loops that issue per-thread 4-byte copies two stages ahead
// (thread scope, the partitioned pipeline, diverged_commit) wait ~1,050-1,300 cycles for a copy
// from DRAM on the H100, where a single stage (one copy in flight) waits ~740-790 (roundtrip.csv).
// This loop isolates that: per batch each thread copies `bytes` from global_in[batch][tid] into
// its stage, commits, waits with __pipeline_wait_prior(S - 1), runs k dependent FMAs on the value
// and stores it. Lane 0 of every warp of block 0 stamps clock64 before its copy (issue) and after
// its wait (landed). A batch's latency is landed - issue of the same batch, counted only where the
// wait blocked (landed - wait start > 40 cycles): then it is when the copy landed, to within the
// wait's own cost.
//
// Usage: inflight_latency OUTDIR -> OUTDIR/inflight_latency.csv
//   columns: source,bytes,stages,k,block_size,grid_blocks,cycles_per_batch,waited_batches,
//            latency_median,latency_p10,latency_p90
//        inflight_latency OUTDIR spread -> OUTDIR/inflight_spread.csv only: a batch's copies across
//            the warps of a block, one stage from DRAM at 1-8 blocks per SM
//        inflight_latency OUTDIR occupancy -> OUTDIR/inflight_occupancy.csv only: the bare loop
//            (one copy and one store a thread and batch, from DRAM) at 1-8 blocks per SM of 4 or 8
//            warps, one and two stages: how a copy's wait grows with the warps of the whole SM
//        inflight_latency OUTDIR lines -> OUTDIR/inflight_lines.csv only: one stage, C copies of 4 or
//            16 bytes a thread and batch, 1-32 warps on every SM (or on one SM alone), from DRAM: a
//            copy's latency against the 128-byte lines the SM has in flight (warps x C x bytes / 4),
//            each copy from a grid-wide row (pattern rows) or from the block's own panel (panel)
//        inflight_latency OUTDIR sparse -> OUTDIR/inflight_sparse.csv only: the rows pattern with 16-byte
//            copies whose lanes read 16, 64 or 128 bytes apart: 4, 16 or 32 line requests a warp's copy
#include <cuda_pipeline.h>
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>
#include "common.cuh"

namespace {

constexpr int kBatches = 64, kWarpsTraced = 8;
enum { kIssue, kWaitStart, kLanded, kEvents };

template <int S, int BYTES>
__global__ void inflight(const char* global_in, int* global_out, int k, long long* tr, long long* cycles) {
  extern __shared__ __align__(16) char shared[];  // S * blockDim.x * BYTES
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const size_t row = size_t(gridDim.x) * blockDim.x * BYTES;  // one batch of the whole grid
  const char* src = global_in + size_t(blockIdx.x) * blockDim.x * BYTES + size_t(tid) * BYTES;
  const bool traced = blockIdx.x == 0 && lane == 0 && warp < kWarpsTraced;
  long long* t = tr + size_t(warp) * kBatches * kEvents;
  const long long t0 = clock64();
  for (int fetch = 0; fetch < kBatches + S - 1; ++fetch) {
    if (fetch < kBatches) {
      if (traced) t[fetch * kEvents + kIssue] = clock64();
      __pipeline_memcpy_async(shared + ((fetch % S) * blockDim.x + tid) * BYTES, src + fetch * row, BYTES);
    }
    __pipeline_commit();
    if (fetch >= S - 1) {
      const int b = fetch - (S - 1);
      if (traced) t[b * kEvents + kWaitStart] = clock64();
      __pipeline_wait_prior(S - 1);
      const int v0 = *reinterpret_cast<const int*>(shared + ((b % S) * blockDim.x + tid) * BYTES);
      if (traced) t[b * kEvents + kLanded] = clock64();
      float v = float(v0);
      for (int i = 0; i < k; i += 8) {
#pragma unroll
        for (int j = 0; j < 8; ++j) v = fmaf(v, 1.000001f, 0.5f);
      }
      global_out[(size_t(b) * gridDim.x + blockIdx.x) * blockDim.x + tid] = __float_as_int(v);
    }
  }
  __syncthreads();
  if (tid == 0) cycles[blockIdx.x] = clock64() - t0;
}

using Kernel = void (*)(const char*, int*, int, long long*, long long*);
template <int BYTES>
Kernel pick(int s) {
  switch (s) {
    case 1: return inflight<1, BYTES>;
    case 2: return inflight<2, BYTES>;
    default: return inflight<4, BYTES>;
  }
}


// The second table: no stamps; C independent 4-byte copies per thread and batch (consecutive rows of
// the input), the store kept or left out, 1 to 16 warps per block, one block per SM, from L2.
template <int S, int C, bool STORE>
__global__ void inflight_bare(const char* global_in, int* global_out, int k, long long* cycles) {
  extern __shared__ __align__(16) char shared[];  // S * C * blockDim.x * 4
  const int tid = threadIdx.x;
  const size_t row = size_t(gridDim.x) * blockDim.x * 4;
  const char* src = global_in + size_t(blockIdx.x) * blockDim.x * 4 + size_t(tid) * 4;
  const long long t0 = clock64();
  int acc = 0;
  for (int fetch = 0; fetch < kBatches + S - 1; ++fetch) {
    if (fetch < kBatches) {
#pragma unroll
      for (int c = 0; c < C; ++c)
        __pipeline_memcpy_async(shared + (((fetch % S) * C + c) * blockDim.x + tid) * 4, src + (fetch * C + c) * row, 4);
    }
    __pipeline_commit();
    if (fetch >= S - 1) {
      const int b = fetch - (S - 1);
      __pipeline_wait_prior(S - 1);
      int v = *reinterpret_cast<const int*>(shared + ((b % S) * C * blockDim.x + tid) * 4);
      float f = float(v);
      for (int i = 0; i < k; i += 8) {
#pragma unroll
        for (int j = 0; j < 8; ++j) f = fmaf(f, 1.000001f, 0.5f);
      }
      if (STORE)
        global_out[(size_t(b) * gridDim.x + blockIdx.x) * blockDim.x + tid] = __float_as_int(f);
      else
        acc += __float_as_int(f);
    }
  }
  __syncthreads();
  if (tid == 0) cycles[blockIdx.x] = clock64() - t0;
  if (!STORE && acc == 0x12345678) global_out[tid] = acc;  // keeps the loads
}

using BareKernel = void (*)(const char*, int*, int, long long*);
template <int C, bool STORE>
BareKernel pick_bare(int s) {
  switch (s) {
    case 1: return inflight_bare<1, C, STORE>;
    case 2: return inflight_bare<2, C, STORE>;
    case 4: return inflight_bare<4, C, STORE>;
    case 8: return inflight_bare<8, C, STORE>;
    default: return inflight_bare<16, C, STORE>;
  }
}

// The fourth table: one stage, C copies of BYTES a thread and batch, the store, one block per SM of
// any size; lane 0 of every warp of block 0 stamps before its first copy and after its wait. A copy
// reads its own grid-wide row of the input (PANEL false: the grid reads each row together) or the
// next piece of the block's own contiguous panel (PANEL true: as the GEMM's tiles are stored).
template <int C, int BYTES, bool PANEL>
__global__ void inflight_lines(const char* global_in, int* global_out, long long* tr, long long* cycles) {
  extern __shared__ __align__(16) char shared[];  // C * blockDim.x * BYTES
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const size_t piece = size_t(blockDim.x) * BYTES;
  const size_t row = PANEL ? piece : size_t(gridDim.x) * piece;
  const char* src = global_in + size_t(blockIdx.x) * (PANEL ? size_t(kBatches) * C * piece : piece) + size_t(tid) * BYTES;
  const bool traced = blockIdx.x == 0 && lane == 0;
  long long* t = tr + size_t(warp) * kBatches * kEvents;
  const long long t0 = clock64();
  for (int b = 0; b < kBatches; ++b) {
    if (traced) t[b * kEvents + kIssue] = clock64();
#pragma unroll
    for (int c = 0; c < C; ++c)
      __pipeline_memcpy_async(shared + (c * blockDim.x + tid) * BYTES, src + (size_t(b) * C + c) * row, BYTES);
    __pipeline_commit();
    __pipeline_wait_prior(0);
    const int v = *reinterpret_cast<const int*>(shared + tid * BYTES);
    if (traced) t[b * kEvents + kLanded] = clock64();
    global_out[(size_t(b) * gridDim.x + blockIdx.x) * blockDim.x + tid] = v;
  }
  __syncthreads();
  if (tid == 0) cycles[blockIdx.x] = clock64() - t0;
}

// The fifth table: as the fourth (one stage, C 16-byte copies a thread and batch, grid-wide rows),
// but lane l reads 16 bytes STRIDE bytes after lane l - 1: STRIDE 16 packs a warp's copy into 4
// lines (16 sectors), 64 spreads it over 16 lines (2 sectors each), 128 over 32 lines (one sector
// each, half of it read) - the same bytes asked as 4, 16 or 32 line requests, as a divergent group's
// copies ask them.
template <int C, int STRIDE>
__global__ void inflight_sparse(const char* global_in, int* global_out, long long* tr, long long* cycles) {
  extern __shared__ __align__(16) char shared[];  // C * blockDim.x * 16
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const size_t row = size_t(gridDim.x) * blockDim.x * STRIDE;
  const char* src = global_in + size_t(blockIdx.x) * blockDim.x * STRIDE + size_t(tid) * STRIDE;
  const bool traced = blockIdx.x == 0 && lane == 0;
  long long* t = tr + size_t(warp) * kBatches * kEvents;
  const long long t0 = clock64();
  for (int b = 0; b < kBatches; ++b) {
    if (traced) t[b * kEvents + kIssue] = clock64();
#pragma unroll
    for (int c = 0; c < C; ++c)
      __pipeline_memcpy_async(shared + (c * blockDim.x + tid) * 16, src + (size_t(b) * C + c) * row, 16);
    __pipeline_commit();
    __pipeline_wait_prior(0);
    const int v = *reinterpret_cast<const int*>(shared + tid * 16);
    if (traced) t[b * kEvents + kLanded] = clock64();
    global_out[(size_t(b) * gridDim.x + blockIdx.x) * blockDim.x + tid] = v;
  }
  __syncthreads();
  if (tid == 0) cycles[blockIdx.x] = clock64() - t0;
}

using LinesKernel = void (*)(const char*, int*, long long*, long long*);
template <int STRIDE>
LinesKernel pick_sparse(int c) {
  switch (c) {
    case 1: return inflight_sparse<1, STRIDE>;
    case 2: return inflight_sparse<2, STRIDE>;
    default: return inflight_sparse<4, STRIDE>;
  }
}
template <int BYTES, bool PANEL>
LinesKernel pick_lines(int c) {
  switch (c) {
    case 1: return inflight_lines<1, BYTES, PANEL>;
    case 2: return inflight_lines<2, BYTES, PANEL>;
    case 4: return inflight_lines<4, BYTES, PANEL>;
    default: return inflight_lines<8, BYTES, PANEL>;
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: inflight_latency OUTDIR\n");
    return 1;
  }
  const int sms = sm_count();
  const size_t in_bytes = size_t(kBatches) * sms * 1024 * 16;
  char* din;
  int* dout;
  long long *dtr, *dcyc;
  CK(cudaMalloc(&din, in_bytes));
  CK(cudaMalloc(&dout, size_t(kBatches) * sms * 2048 * 4));
  CK(cudaMalloc(&dtr, size_t(kWarpsTraced) * kBatches * kEvents * sizeof(long long)));
  CK(cudaMalloc(&dcyc, size_t(sms) * 8 * sizeof(long long)));
  CK(cudaMemset(din, 1, in_bytes));
  L2Flusher flusher;
  if (argc > 2 && std::string(argv[2]) == "spread") {
    // OUTDIR/inflight_spread.csv: one stage, 4-byte copies from DRAM, blocks of 8 warps at 1-8 blocks
    // per SM; the stamps of block 0's warps: a copy's latency over all warps and batches, and within
    // each batch how far its slowest warp's copy lands after the batch's median one (what a wait for
    // the whole block's copies pays beyond a warp's own).
    std::string path5 = std::string(argv[1]) + "/inflight_spread.csv";
    FILE* o = fopen(path5.c_str(), "w");
    fprintf(o, "source,stages,k,warps,blocks_per_sm,grid_blocks,latency_median,latency_p10,latency_p90,"
               "batch_max_over_median_mean,batch_max_over_min_mean\n");
    std::vector<long long> tr5(size_t(kWarpsTraced) * kBatches * kEvents);
    for (int bps : {1, 2, 4, 8})
      for (int k : {0, 32}) {
        const int bs = 256, grid = sms * bps;
        for (int rep = 0; rep < 3; ++rep) {
          flusher.flush();
          CK(cudaMemset(dtr, 0, tr5.size() * sizeof(long long)));
          inflight<1, 4><<<grid, bs, size_t(bs) * 4>>>(din, dout, k, dtr, dcyc);
          CK_LAUNCH();
        }
        CK(cudaMemcpy(tr5.data(), dtr, tr5.size() * sizeof(long long), cudaMemcpyDeviceToHost));
        std::vector<long long> all;
        double over_median = 0, over_min = 0;
        int nb = 0;
        for (int b = 8; b < kBatches; ++b) {
          std::vector<long long> lat;
          for (int w = 0; w < kWarpsTraced; ++w) {
            const long long* e = &tr5[(size_t(w) * kBatches + b) * kEvents];
            lat.push_back(e[kLanded] - e[kIssue]);
          }
          all.insert(all.end(), lat.begin(), lat.end());
          std::sort(lat.begin(), lat.end());
          over_median += double(lat.back()) - 0.5 * double(lat[3] + lat[4]);
          over_min += double(lat.back() - lat.front());
          nb++;
        }
        std::sort(all.begin(), all.end());
        auto q = [&](double p) { return double(all[size_t(p * (all.size() - 1))]); };
        fprintf(o, "DRAM,1,%d,8,%d,%d,%.0f,%.0f,%.0f,%.1f,%.1f\n", k, bps, grid, q(0.5), q(0.1), q(0.9),
                over_median / nb, over_min / nb);
        printf("DRAM,1,%d,8,%d,%d,%.0f,%.0f,%.0f,%.1f,%.1f\n", k, bps, grid, q(0.5), q(0.1), q(0.9), over_median / nb,
               over_min / nb);
      }
    fclose(o);
    return 0;
  }
  if (argc > 2 && std::string(argv[2]) == "sparse") {
    // OUTDIR/inflight_sparse.csv: as inflight_lines.csv's rows pattern, every SM, the lanes' 16
    // bytes STRIDE apart: a copy's latency against the line requests and the bytes in flight.
    std::string path7 = std::string(argv[1]) + "/inflight_sparse.csv";
    FILE* o = fopen(path7.c_str(), "w");
    const char* head = "source,stride,copies,warps,grid_blocks,lines_per_sm,sectors_per_sm,cycles_per_batch,"
                       "latency_median,latency_p10,latency_p90\n";
    fputs(head, o);
    printf("== inflight_sparse.csv\n%s", head);
    const size_t bytes_in = size_t(kBatches) * 4 * sms * 1024 * 128;
    char* big;
    CK(cudaMalloc(&big, bytes_in));
    CK(cudaMemset(big, 1, bytes_in));
    int* bout;
    CK(cudaMalloc(&bout, size_t(kBatches) * sms * 1024 * 4));
    long long* btr;
    std::vector<long long> tr7(size_t(32) * kBatches * kEvents), cyc7(sms);
    CK(cudaMalloc(&btr, tr7.size() * sizeof(long long)));
    for (int stride : {16, 64, 128})
      for (int c : {1, 2, 4})
        for (int warps : {1, 2, 4, 8, 16, 32}) {
          const int grid = sms;
          LinesKernel fn = stride == 16 ? pick_sparse<16>(c) : stride == 64 ? pick_sparse<64>(c) : pick_sparse<128>(c);
          const int bs = warps * 32;
          CK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, c * bs * 16));
          for (int rep = 0; rep < 2; ++rep) {
            flusher.flush();
            CK(cudaMemset(btr, 0, tr7.size() * sizeof(long long)));
            fn<<<grid, bs, size_t(c) * bs * 16>>>(big, bout, btr, dcyc);
            CK_LAUNCH();
          }
          CK(cudaMemcpy(tr7.data(), btr, tr7.size() * sizeof(long long), cudaMemcpyDeviceToHost));
          CK(cudaMemcpy(cyc7.data(), dcyc, grid * sizeof(long long), cudaMemcpyDeviceToHost));
          std::vector<long long> lat;
          for (int w = 0; w < warps; ++w)
            for (int b = 8; b < kBatches; ++b) {
              const long long* e = &tr7[(size_t(w) * kBatches + b) * kEvents];
              lat.push_back(e[kLanded] - e[kIssue]);
            }
          std::sort(lat.begin(), lat.end());
          std::sort(cyc7.begin(), cyc7.begin() + grid);
          auto q = [&](double p) { return double(lat[size_t(p * (lat.size() - 1))]); };
          const int lines = warps * c * 32 * stride / 128, sectors = warps * c * (stride == 16 ? 16 : 32);
          char line[256];
          snprintf(line, sizeof line, "DRAM,%d,%d,%d,%d,%d,%d,%.1f,%.0f,%.0f,%.0f\n", stride, c, warps, grid, lines, sectors,
                   double(cyc7[grid / 2]) / kBatches, q(0.5), q(0.1), q(0.9));
          fputs(line, o);
          fputs(line, stdout);
        }
    fclose(o);
    return 0;
  }
  if (argc > 2 && std::string(argv[2]) == "lines") {
    // OUTDIR/inflight_lines.csv: a copy's latency (issue of a warp's first copy to its wait's end,
    // every warp of block 0, batches 8-63) against the lines the SM has in flight at one stage.
    std::string path6 = std::string(argv[1]) + "/inflight_lines.csv";
    FILE* o = fopen(path6.c_str(), "w");
    fprintf(o, "source,pattern,bytes,copies,warps,grid_blocks,lines_per_sm,cycles_per_batch,latency_median,"
               "latency_p10,latency_p90\n");
    const size_t lines_in = size_t(kBatches) * 8 * sms * 1024 * 16;
    char* big;
    CK(cudaMalloc(&big, lines_in));
    CK(cudaMemset(big, 1, lines_in));
    int* bout;
    CK(cudaMalloc(&bout, size_t(kBatches) * sms * 1024 * 4));
    long long* btr;
    std::vector<long long> tr6(size_t(32) * kBatches * kEvents), cyc6(sms);
    CK(cudaMalloc(&btr, tr6.size() * sizeof(long long)));
    for (int panel : {0, 1})
    for (int bytes : {16, 4})
      for (int c : {1, 2, 4, 8})
        for (int warps : {1, 2, 4, 8, 16, 32})
          for (int grid : {sms, 1}) {
            if (bytes == 4 && (grid == 1 || c == 2 || c == 8)) continue;
            if (panel && (bytes == 4 || grid == 1)) continue;
            LinesKernel fn = bytes == 16 ? (panel ? pick_lines<16, true>(c) : pick_lines<16, false>(c))
                                         : pick_lines<4, false>(c);
            const int bs = warps * 32;
            CK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, c * bs * bytes));
            for (int rep = 0; rep < 2; ++rep) {
              flusher.flush();
              CK(cudaMemset(btr, 0, tr6.size() * sizeof(long long)));
              fn<<<grid, bs, size_t(c) * bs * bytes>>>(big, bout, btr, dcyc);
              CK_LAUNCH();
            }
            CK(cudaMemcpy(tr6.data(), btr, tr6.size() * sizeof(long long), cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(cyc6.data(), dcyc, grid * sizeof(long long), cudaMemcpyDeviceToHost));
            std::vector<long long> lat;
            for (int w = 0; w < warps; ++w)
              for (int b = 8; b < kBatches; ++b) {
                const long long* e = &tr6[(size_t(w) * kBatches + b) * kEvents];
                lat.push_back(e[kLanded] - e[kIssue]);
              }
            std::sort(lat.begin(), lat.end());
            std::sort(cyc6.begin(), cyc6.begin() + grid);
            auto q = [&](double p) { return double(lat[size_t(p * (lat.size() - 1))]); };
            const int lines = warps * c * bytes / 4;
            fprintf(o, "DRAM,%s,%d,%d,%d,%d,%d,%.1f,%.0f,%.0f,%.0f\n", panel ? "panel" : "rows", bytes, c, warps, grid, lines,
                    double(cyc6[grid / 2]) / kBatches, q(0.5), q(0.1), q(0.9));
            printf("DRAM,%s,%d,%d,%d,%d,%d,%.1f,%.0f,%.0f,%.0f\n", panel ? "panel" : "rows", bytes, c, warps, grid, lines,
                   double(cyc6[grid / 2]) / kBatches, q(0.5), q(0.1), q(0.9));
          }
    fclose(o);
    return 0;
  }
  if (argc > 2 && std::string(argv[2]) == "occupancy") {
    std::string path4 = std::string(argv[1]) + "/inflight_occupancy.csv";
    FILE* o = fopen(path4.c_str(), "w");
    fprintf(o, "source,stages,k,warps,blocks_per_sm,grid_blocks,cycles_per_batch_median,cycles_per_batch_max\n");
    std::vector<long long> cyc4(size_t(sms) * 8);
    for (int s : {1, 2})
      for (int warps : {4, 8})
        for (int bps : {1, 2, 4, 8})
          for (int k : {0, 32}) {
            const int bs = warps * 32, grid = sms * bps;
            BareKernel fn = pick_bare<1, true>(s);
            for (int rep = 0; rep < 3; ++rep) {
              flusher.flush();
              fn<<<grid, bs, size_t(s) * bs * 4>>>(din, dout, k, dcyc);
              CK_LAUNCH();
            }
            CK(cudaMemcpy(cyc4.data(), dcyc, grid * sizeof(long long), cudaMemcpyDeviceToHost));
            std::sort(cyc4.begin(), cyc4.begin() + grid);
            fprintf(o, "DRAM,%d,%d,%d,%d,%d,%.1f,%.1f\n", s, k, warps, bps, grid, double(cyc4[grid / 2]) / kBatches,
                    double(cyc4[grid - 1]) / kBatches);
            printf("DRAM,%d,%d,%d,%d,%d,%.1f,%.1f\n", s, k, warps, bps, grid, double(cyc4[grid / 2]) / kBatches,
                   double(cyc4[grid - 1]) / kBatches);
          }
    fclose(o);
    return 0;
  }
  std::string path = std::string(argv[1]) + "/inflight_latency.csv";
  FILE* f = fopen(path.c_str(), "w");
  fprintf(f,
          "source,bytes,stages,k,block_size,grid_blocks,cycles_per_batch,waited_batches,latency_median,latency_p10,"
          "latency_p90\n");
  std::vector<long long> tr(size_t(kWarpsTraced) * kBatches * kEvents), cyc(sms);
  for (int bytes : {4, 16})
    for (int bs : {128, 256})
      for (int grid : {sms, 1})
        for (int s : {1, 2, 4})
          for (int k : {0, 64, 256})
            for (int dram = 1; dram >= 0; --dram) {
              if (grid == 1 && (k != 0 || bs != 256)) continue;
              Kernel fn = bytes == 4 ? pick<4>(s) : pick<16>(s);
              for (int rep = 0; rep < 2; ++rep) {  // an L2 row keeps its second launch (warm)
                if (dram) flusher.flush();
                CK(cudaMemset(dtr, 0, tr.size() * sizeof(long long)));
                fn<<<grid, bs, size_t(s) * bs * bytes>>>(din, dout, k, dtr, dcyc);
                CK_LAUNCH();
              }
              CK(cudaMemcpy(tr.data(), dtr, tr.size() * sizeof(long long), cudaMemcpyDeviceToHost));
              CK(cudaMemcpy(cyc.data(), dcyc, grid * sizeof(long long), cudaMemcpyDeviceToHost));
              std::vector<long long> lat;
              for (int w = 0; w < std::min(kWarpsTraced, bs / 32); ++w)
                for (int b = 8; b < kBatches; ++b) {
                  const long long* e = &tr[(size_t(w) * kBatches + b) * kEvents];
                  if (e[kLanded] - e[kWaitStart] > 40) lat.push_back(e[kLanded] - e[kIssue]);
                }
              std::sort(lat.begin(), lat.end());
              std::sort(cyc.begin(), cyc.begin() + grid);
              auto q = [&](double p) { return lat.empty() ? -1.0 : double(lat[size_t(p * (lat.size() - 1))]); };
              fprintf(f, "%s,%d,%d,%d,%d,%d,%.1f,%zu,%.0f,%.0f,%.0f\n", dram ? "DRAM" : "L2", bytes, s, k, bs, grid,
                      double(cyc[grid / 2]) / kBatches, lat.size(), q(0.5), q(0.1), q(0.9));
              fflush(f);
            }
  fclose(f);
  printf("wrote %s\n", path.c_str());
  // OUTDIR/inflight_bare.csv: source,copies,store,stages,k,warps,cycles_per_batch
  std::string path2 = std::string(argv[1]) + "/inflight_bare.csv";
  FILE* g = fopen(path2.c_str(), "w");
  fprintf(g, "source,copies,store,stages,k,warps,grid_blocks,cycles_per_batch\n");
  for (int dram = 0; dram <= 1; ++dram)
    for (int c : {1, 4})
      for (int store = 1; store >= 0; --store)
        for (int s : {1, 2, 4})
          for (int warps : {1, 2, 4, 8, 16})
            for (int k : {0, 64}) {
              if (dram && (k != 0 || store == 0)) continue;
              if (c == 4 && warps == 16) continue;  // 69 MB of input: more than L2 holds
              BareKernel fn = c == 1 ? (store ? pick_bare<1, true>(s) : pick_bare<1, false>(s))
                                     : (store ? pick_bare<4, true>(s) : pick_bare<4, false>(s));
              const int bs = warps * 32;
              for (int rep = 0; rep < 2; ++rep) {
                if (dram) flusher.flush();
                fn<<<sms, bs, size_t(s) * c * bs * 4>>>(din, dout, k, dcyc);
                CK_LAUNCH();
              }
              CK(cudaMemcpy(cyc.data(), dcyc, sms * sizeof(long long), cudaMemcpyDeviceToHost));
              std::sort(cyc.begin(), cyc.begin() + sms);
              fprintf(g, "%s,%d,%d,%d,%d,%d,%d,%.1f\n", dram ? "DRAM" : "L2", c, store, s, k, warps, sms,
                      double(cyc[sms / 2]) / kBatches);
            }
  fclose(g);
  printf("wrote %s\n", path2.c_str());
  // OUTDIR/inflight_cap.csv: one copy per thread and batch with the store, 8 warps a block, 1-4
  // blocks per SM, 2-16 stages: whether copies in flight beyond some number slow the SM down.
  std::string path3 = std::string(argv[1]) + "/inflight_cap.csv";
  FILE* h = fopen(path3.c_str(), "w");
  fprintf(h, "source,stages,k,warps,blocks_per_sm,grid_blocks,cycles_per_batch_median,cycles_per_batch_max\n");
  std::vector<long long> cyc2(size_t(sms) * 4);
  for (int dram = 0; dram <= 1; ++dram)
    for (int bps : {1, 2, 4})
      for (int s : {2, 4, 8, 16})
        for (int k : {0, 32}) {
          const int warps = 8, bs = warps * 32, grid = sms * bps;
          BareKernel fn = pick_bare<1, true>(s);
          for (int rep = 0; rep < 2; ++rep) {
            if (dram) flusher.flush();
            fn<<<grid, bs, size_t(s) * bs * 4>>>(din, dout, k, dcyc);
            CK_LAUNCH();
          }
          CK(cudaMemcpy(cyc2.data(), dcyc, grid * sizeof(long long), cudaMemcpyDeviceToHost));
          std::sort(cyc2.begin(), cyc2.begin() + grid);
          fprintf(h, "%s,%d,%d,%d,%d,%d,%.1f,%.1f\n", dram ? "DRAM" : "L2", s, k, warps, bps, grid,
                  double(cyc2[grid / 2]) / kBatches, double(cyc2[grid - 1]) / kBatches);
        }
  fclose(h);
  printf("wrote %s\n", path3.c_str());
  return 0;
}

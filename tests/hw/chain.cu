// The examples' compute chain and single-lane cp.async, each timed on its own (no clock reads
// inside the measured code):
//  * chain.csv: compute()'s dependent FMA chain exactly as tests/hw/examples.cuh compiles it
//    (fmaf(v, kMul, kAdd) with compile-time constants, unrolled 8 in the source, k a run-time
//    multiple of 8), the same chain with the constants in registers (kernel arguments), and with
//    one FFMA per trip of a non-unrolled loop; 1, 2 and 4 warps per scheduler, one block per SM.
//    The slope between k = 512 and k = 4096 is the cost of one FMA, a block's fixed costs cancel.
//  * lane_copies.csv: a run of 16-byte (and 4-byte) __pipeline_memcpy_async issued back to back
//    by one warp per SM with 1 or 32 active lanes (L2-resident source), committed every 17 copies
//    as primitive_copies does; cycles per copy instruction, slope between 256 and 1024 copies.
//
// Usage: chain OUTDIR -> OUTDIR/chain.csv, OUTDIR/lane_copies.csv
#include <cuda_pipeline.h>
#include "common.cuh"

namespace {

constexpr float kMul = 1.000001f, kAdd = 0.5f;
constexpr int kReps = 5;

enum Variant { kExamples = 0, kRegisters = 1, kOnePerTrip = 2 };
const char* const kVariantName[] = {"examples", "registers", "one_per_trip"};

template <int kVariant>
__global__ void chain_kernel(const float* in, float* out, int k, float mul, float add, long long* cycles) {
  const long long t0 = clock64();
  float v = in[blockIdx.x * blockDim.x + threadIdx.x];
  if (kVariant == kExamples) {
    for (int i = 0; i < k; i += 8) {
#pragma unroll
      for (int j = 0; j < 8; ++j) v = fmaf(v, kMul, kAdd);
    }
  } else if (kVariant == kRegisters) {
    for (int i = 0; i < k; i += 8) {
#pragma unroll
      for (int j = 0; j < 8; ++j) v = fmaf(v, mul, add);
    }
  } else {
#pragma unroll 1
    for (int i = 0; i < k; ++i) v = fmaf(v, mul, add);
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
  __syncthreads();
  if (threadIdx.x == 0) cycles[blockIdx.x] = clock64() - t0;
}

// One warp per block and SM; lanes < active issue n copies of `bytes` each, a commit every 17.
template <int kBytes>
__global__ void lane_copies(const int4* src, int n, int active, long long* cycles) {
  __shared__ alignas(16) int4 dst[17 * 32];
  const int lane = threadIdx.x;
  const long long t0 = clock64();
  if (lane < active) {
    for (int i = 0; i < n; i += 17) {
#pragma unroll
      for (int j = 0; j < 17; ++j)
        __pipeline_memcpy_async(reinterpret_cast<char*>(&dst[j * 32 + lane]),
                                reinterpret_cast<const char*>(&src[(j * 32 + lane) & 1023]), kBytes);
      __pipeline_commit();
    }
    __pipeline_wait_prior(0);
  }
  __syncwarp();
  if (lane == 0) cycles[blockIdx.x] = clock64() - t0;
}

template <typename K>
double time_blocks(K launch, int blocks, long long* dcyc) {
  std::vector<long long> all;
  for (int r = 0; r < kReps; ++r) {
    launch();
    CK_LAUNCH();
    std::vector<long long> c(blocks);
    CK(cudaMemcpy(c.data(), dcyc, blocks * sizeof(long long), cudaMemcpyDeviceToHost));
    all.insert(all.end(), c.begin(), c.end());
  }
  return median(all);
}

}  // namespace

int main(int argc, char** argv) {
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  float *din, *dout;
  long long* dcyc;
  int4* dsrc;
  CK(cudaMalloc(&din, 1 << 20));
  CK(cudaMalloc(&dout, 1 << 20));
  CK(cudaMemset(din, 0, 1 << 20));
  CK(cudaMalloc(&dcyc, 4096 * sizeof(long long)));
  CK(cudaMalloc(&dsrc, 1024 * sizeof(int4)));
  CK(cudaMemset(dsrc, 0, 1024 * sizeof(int4)));

  FILE* f = open_csv(argc, argv, "chain.csv",
                     "variant,warps_per_scheduler,k_low,k_high,cycles_low,cycles_high,cycles_per_fma");
  for (int v = 0; v < 3; ++v)
    for (int wps : {1, 2, 4}) {
      const int threads = 32 * 4 * wps;
      double c[2];
      const int ks[2] = {512, 4096};
      for (int i = 0; i < 2; ++i) {
        auto launch = [&] {
          if (v == kExamples)
            chain_kernel<kExamples><<<sms, threads>>>(din, dout, ks[i], kMul, kAdd, dcyc);
          else if (v == kRegisters)
            chain_kernel<kRegisters><<<sms, threads>>>(din, dout, ks[i], kMul, kAdd, dcyc);
          else
            chain_kernel<kOnePerTrip><<<sms, threads>>>(din, dout, ks[i], kMul, kAdd, dcyc);
        };
        c[i] = time_blocks(launch, sms, dcyc);
      }
      ROW(f, "%s,%d,%d,%d,%.1f,%.1f,%.3f\n", kVariantName[v], wps, ks[0], ks[1], c[0], c[1],
          (c[1] - c[0]) / (ks[1] - ks[0]));
    }
  fclose(f);

  f = open_csv(argc, argv, "lane_copies.csv",
               "bytes,active_lanes,n_low,n_high,cycles_low,cycles_high,cycles_per_copy");
  for (int bytes : {16, 4})
    for (int active : {1, 32}) {
      double c[2];
      const int ns[2] = {17 * 16, 17 * 64};
      for (int i = 0; i < 2; ++i) {
        auto launch = [&] {
          if (bytes == 16)
            lane_copies<16><<<sms, 32>>>(dsrc, ns[i], active, dcyc);
          else
            lane_copies<4><<<sms, 32>>>(dsrc, ns[i], active, dcyc);
        };
        c[i] = time_blocks(launch, sms, dcyc);
      }
      ROW(f, "%d,%d,%d,%d,%.1f,%.1f,%.3f\n", bytes, active, ns[0], ns[1], c[0], c[1],
          (c[1] - c[0]) / (ns[1] - ns[0]));
    }
  fclose(f);
  return 0;
}

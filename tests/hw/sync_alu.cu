// Synchronisation and ALU latencies, one block alone on the GPU, clock64 in thread 0:
//
//   barrier.csv  cuda::barrier<thread_scope_block>::arrive_and_wait() per phase and
//                __syncthreads() per barrier, at block sizes 32, 256, 1024 (every thread takes
//                part, back to back, so one phase = the slowest arrival + release + wake-up)
//   ffma.csv     latency of a dependent FFMA chain (v = fmaf(v, a, b)), a and b run-time
//                values so the compiler cannot fold the chain, unrolled 8, 16 and 128 per
//                loop trip (8 as in the pipelines' compute(); 128 is the bare latency)
//
// Usage: sync_alu OUTDIR
#include <cuda/barrier>
#include "common.cuh"

namespace {

constexpr int kReps = 7;

__global__ void barrier_loop(int iters, long long* cycles) {
#pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  if (threadIdx.x == 0) init(&bar, blockDim.x);
  __syncthreads();
  bar.arrive_and_wait();  // one untimed phase: everybody has started
  long long t0 = clock64();
  for (int i = 0; i < iters; ++i) bar.arrive_and_wait();
  long long t1 = clock64();
  if (threadIdx.x == 0) cycles[0] = t1 - t0;
}

__global__ void syncthreads_loop(int iters, long long* cycles) {
  __syncthreads();
  long long t0 = clock64();
  for (int i = 0; i < iters; ++i) __syncthreads();
  long long t1 = clock64();
  if (threadIdx.x == 0) cycles[0] = t1 - t0;
}

// kUnroll FMAs per loop trip: 8 is what the pipeline kernels' compute() does, 128 leaves the
// loop's own overhead (counter, compare, branch) out of the number.
template <int kUnroll>
__global__ void ffma_chain(float a, float b, int iters, long long* cycles, float* sink) {
  float v = float(threadIdx.x);
  long long t0 = clock64();
  for (int i = 0; i < iters; i += kUnroll) {
#pragma unroll
    for (int j = 0; j < kUnroll; ++j) v = fmaf(v, a, b);
  }
  long long t1 = clock64();
  if (threadIdx.x == 0) cycles[0] = t1 - t0;
  sink[threadIdx.x] = v;
}

}  // namespace

int main(int argc, char** argv) {
  long long* dcyc;
  float* dsink;
  CK(cudaMalloc(&dcyc, sizeof(long long)));
  CK(cudaMalloc(&dsink, 1024 * sizeof(float)));
  auto read_cyc = [&]() { long long c; CK(cudaMemcpy(&c, dcyc, sizeof c, cudaMemcpyDeviceToHost)); return c; };

  {
    FILE* f = open_csv(argc, argv, "barrier.csv", "primitive,block_size,iters,reps,cycles_per_phase_median,cycles_per_phase_min");
    const int iters = 2000;
    for (int prim = 0; prim < 2; ++prim) {
      for (int bs : {32, 256, 1024}) {
        std::vector<double> v;
        for (int r = 0; r < kReps; ++r) {
          if (prim == 0) barrier_loop<<<1, bs>>>(iters, dcyc);
          else syncthreads_loop<<<1, bs>>>(iters, dcyc);
          CK_LAUNCH();
          v.push_back(double(read_cyc()) / iters);
        }
        ROW(f, "%s,%d,%d,%d,%.2f,%.2f\n", prim == 0 ? "cuda_barrier_arrive_and_wait" : "syncthreads", bs, iters, kReps,
            median(v), *std::min_element(v.begin(), v.end()));
      }
    }
    fclose(f);
  }
  {
    FILE* f = open_csv(argc, argv, "ffma.csv", "unroll,threads,iters,reps,cycles_per_ffma_median,cycles_per_ffma_min");
    const int iters = 1 << 14;
    for (int unroll : {8, 16, 128}) {
      for (int threads : {1, 32}) {
        std::vector<double> v;
        for (int r = 0; r < kReps; ++r) {
          if (unroll == 8) ffma_chain<8><<<1, threads>>>(1.000001f, 0.5f, iters, dcyc, dsink);
          if (unroll == 16) ffma_chain<16><<<1, threads>>>(1.000001f, 0.5f, iters, dcyc, dsink);
          if (unroll == 128) ffma_chain<128><<<1, threads>>>(1.000001f, 0.5f, iters, dcyc, dsink);
          CK_LAUNCH();
          v.push_back(double(read_cyc()) / iters);
        }
        ROW(f, "%d,%d,%d,%d,%.3f,%.3f\n", unroll, threads, iters, kReps, median(v), *std::min_element(v.begin(), v.end()));
      }
    }
    fclose(f);
  }
  printf("sync_alu: done\n");
  return 0;
}

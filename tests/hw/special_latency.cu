// Latencies of the instructions the compiled call forms read special registers and constants
// with, each timed on its own (no clock reads inside the measured loop), one warp per scheduler:
//  * S2R: r = %laneid (S2R R, SR_LANEID) then acc += r; the next S2R issues after the add, so a
//    trip is the S2R's latency plus the add's issue;
//  * LDC: a dependent chase through a __constant__ table, v = table[v] (LDC R, c[0x3][R]): a trip
//    is one LDC's latency;
//  * LDC+IADD: the chase with an add between the loads (v = table[v] + 0 through a run-time zero).
// Trips are unrolled 16 per loop iteration; the slope between 1024 and 8192 trips is the cost
// of one trip.
//
// Usage: special_latency OUTDIR -> OUTDIR/special_latency.csv
#include "common.cuh"

namespace {

constexpr int kReps = 5;
__constant__ unsigned kTable[256];

template <int kKind>
__global__ void special(int trips, unsigned zero, unsigned* out, long long* cycles) {
  const long long t0 = clock64();
  unsigned acc = threadIdx.x & 255, r;
#pragma unroll 1
  for (int i = 0; i < trips; i += 16) {
#pragma unroll
    for (int j = 0; j < 16; ++j) {
      if (kKind == 0) {
        asm volatile("mov.u32 %0, %%laneid;" : "=r"(r));
        acc += r;
      } else if (kKind == 1) {
        asm volatile("ld.const.u32 %0, [%1];" : "=r"(acc) : "l"(&kTable[acc & 255]));
      } else {
        asm volatile("ld.const.u32 %0, [%1];" : "=r"(acc) : "l"(&kTable[acc & 255]));
        acc += zero;
      }
    }
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.x == 0) cycles[blockIdx.x] = clock64() - t0;
}

}  // namespace

int main(int argc, char** argv) {
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  unsigned table[256];
  for (int i = 0; i < 256; ++i) table[i] = (i * 97 + 13) & 255;
  CK(cudaMemcpyToSymbol(kTable, table, sizeof table));
  unsigned* dout;
  long long* dcyc;
  CK(cudaMalloc(&dout, 1 << 20));
  CK(cudaMalloc(&dcyc, 4096 * sizeof(long long)));
  FILE* f = open_csv(argc, argv, "special_latency.csv", "kind,warps_per_scheduler,trips_low,trips_high,cycles_low,cycles_high,cycles_per_trip");
  const char* names[] = {"S2R+IADD3", "LDC", "LDC+IADD3"};
  for (int kind = 0; kind < 3; ++kind)
    for (int wps : {1}) {
      const int ts[2] = {1024, 8192};
      double c[2];
      for (int t = 0; t < 2; ++t) {
        std::vector<long long> all;
        for (int r = 0; r < kReps; ++r) {
          if (kind == 0) special<0><<<sms, 128 * wps>>>(ts[t], 0, dout, dcyc);
          if (kind == 1) special<1><<<sms, 128 * wps>>>(ts[t], 0, dout, dcyc);
          if (kind == 2) special<2><<<sms, 128 * wps>>>(ts[t], 0, dout, dcyc);
          CK_LAUNCH();
          std::vector<long long> v(sms);
          CK(cudaMemcpy(v.data(), dcyc, sms * sizeof(long long), cudaMemcpyDeviceToHost));
          all.insert(all.end(), v.begin(), v.end());
        }
        c[t] = median(all);
      }
      ROW(f, "%s,%d,%d,%d,%.1f,%.1f,%.3f\n", names[kind], wps, ts[0], ts[1], c[0], c[1], (c[1] - c[0]) / (ts[1] - ts[0]));
    }
  fclose(f);
  return 0;
}

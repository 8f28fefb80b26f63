// The device's limits and its SM clock, for `smsim calibrate` (device.csv).
//
// The limits are the CUDA runtime's device attributes; the clock is measured, not read from
// nvidia-smi: one thread spins for about 100 ms and compares clock64() (SM cycles) with
// %globaltimer (ns), so the figure is the clock the benchmarks' cycles were counted at.
// Sub-partitions are not an attribute: they are the number of warp schedulers per SM of the
// compute capability (4 on Volta through Hopper: CUDA C++ Programming Guide, "Hardware
// Implementation"; Hopper tuning guide).
//
// Usage: device OUTDIR  ->  device.csv (property,value,source)
#include "common.cuh"

__global__ void clock_ratio(long long* cycles, unsigned long long* ns) {
  unsigned long long t0, t1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  long long c0 = clock64();
  unsigned long long t = t0;
  while (t - t0 < 100000000ull) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  long long c1 = clock64();
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  *cycles = c1 - c0;
  *ns = t1 - t0;
}

int main(int argc, char** argv) {
  int dev = 0;
  CK(cudaSetDevice(dev));
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, dev));
  FILE* f = open_csv(argc, argv, "device.csv", "property,value,source");
  auto attr = [&](cudaDeviceAttr a) {
    int v = 0;
    CK(cudaDeviceGetAttribute(&v, a, dev));
    return v;
  };
  ROW(f, "name,%s,cudaGetDeviceProperties\n", p.name);
  ROW(f, "compute_capability,%d.%d,cudaGetDeviceProperties\n", p.major, p.minor);
  ROW(f, "sm_count,%d,cudaDevAttrMultiProcessorCount\n", attr(cudaDevAttrMultiProcessorCount));
  ROW(f, "max_threads_per_sm,%d,cudaDevAttrMaxThreadsPerMultiProcessor\n", attr(cudaDevAttrMaxThreadsPerMultiProcessor));
  ROW(f, "max_blocks_per_sm,%d,cudaDevAttrMaxBlocksPerMultiprocessor\n", attr(cudaDevAttrMaxBlocksPerMultiprocessor));
  ROW(f, "max_threads_per_block,%d,cudaDevAttrMaxThreadsPerBlock\n", attr(cudaDevAttrMaxThreadsPerBlock));
  ROW(f, "smem_per_sm,%d,cudaDevAttrMaxSharedMemoryPerMultiprocessor\n", attr(cudaDevAttrMaxSharedMemoryPerMultiprocessor));
  ROW(f, "smem_per_block_optin,%d,cudaDevAttrMaxSharedMemoryPerBlockOptin\n", attr(cudaDevAttrMaxSharedMemoryPerBlockOptin));
  ROW(f, "regs_per_sm,%d,cudaDevAttrMaxRegistersPerMultiprocessor\n", attr(cudaDevAttrMaxRegistersPerMultiprocessor));
  int subpartitions = p.major >= 7 ? 4 : 0;  // warp schedulers per SM, Volta to Hopper
  ROW(f, "subpartitions,%d,warp schedulers per SM of compute capability %d.%d\n", subpartitions, p.major, p.minor);
  // L1 and shared memory are one array per SM; the API gives the shared part only (the CUDA guide's
  // compute capability tables: 256 KB for 9.0, 192 KB for 8.0 and 8.9's 128 KB).
  const int l1_smem_kb = p.major == 9 ? 256 : p.major == 8 && p.minor == 0 ? 192 : 128;
  ROW(f, "l1_smem_bytes,%d,unified L1 data cache and shared memory per SM of compute capability %d.%d\n",
      l1_smem_kb * 1024, p.major, p.minor);

  long long* dc;
  unsigned long long* dn;
  CK(cudaMalloc(&dc, sizeof *dc));
  CK(cudaMalloc(&dn, sizeof *dn));
  std::vector<double> mhz;
  for (int rep = 0; rep < 5; rep++) {
    clock_ratio<<<1, 1>>>(dc, dn);
    CK_LAUNCH();
    long long c;
    unsigned long long n;
    CK(cudaMemcpy(&c, dc, sizeof c, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(&n, dn, sizeof n, cudaMemcpyDeviceToHost));
    mhz.push_back(double(c) / double(n) * 1000.0);
  }
  ROW(f, "clock_mhz_measured,%.1f,clock64 over %%globaltimer in a 100 ms spin (median of 5)\n", median(mhz));
  fclose(f);
  CK(cudaFree(dc));
  CK(cudaFree(dn));
  return 0;
}

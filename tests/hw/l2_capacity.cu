// How much of a kernel's data the H100's L2 keeps from one launch to the next, against the data's
// size: the "L2" rows of the validation set (tests/hw/validation.cu) run the kernel once to warm its
// input into L2 and time the second launch, and their input plus output reach 34.6 MB of the 50 MB
// L2. Here a plain streaming kernel stands in for them: every thread of SMs x 4 blocks x 256 reads
// one int per batch (in[b * grid_size + t]) and, in mode "rw", writes one (out[b * grid_size + t]);
// in mode "r" it reads both arrays (the same footprint, no writes). The batch count sets the
// footprint (input + output bytes). A warm-up launch, then the measured one; Nsight Compute reads
// the measured launch's L2 read hit rate (run_l2_capacity.sh), this program its time, and the time
// of the same launch after an L2 flush (all DRAM) for scale.
//
// Usage: l2_capacity OUTDIR            -> OUTDIR/l2_capacity.csv (times of every configuration)
//        l2_capacity --one MODE MB     -> one warm-up and one measured launch (for ncu)
#include <cstring>
#include <string>

#include "common.cuh"

namespace {

constexpr int kBlocksPerSm = 4, kThreads = 256;

__global__ void stream(int* out, const int* in, int batches, size_t grid_size, int write) {
  const size_t t = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  int acc = 0;
  for (int b = 0; b < batches; ++b) {
    const int v = in[size_t(b) * grid_size + t];
    if (write)
      out[size_t(b) * grid_size + t] = v + 1;
    else
      acc += v + out[size_t(b) * grid_size + t];
  }
  if (!write && acc == 0x7fffffff) out[t] = acc;  // keeps the reads; never true for the data written
}

struct Run {
  int sms, grid;
  size_t grid_size;
  int *in = nullptr, *out = nullptr;
  int batches_for(double mb) const { return int(mb * 1e6 / (2.0 * 4.0 * double(grid_size)) + 0.5); }
  float launch(int batches, bool write) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    CK(cudaEventRecord(a));
    stream<<<grid, kThreads>>>(out, in, batches, grid_size, write);
    CK_LAUNCH();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    return ms;
  }
};

}  // namespace

int main(int argc, char** argv) {
  Run r;
  r.sms = sm_count();
  r.grid = r.sms * kBlocksPerSm;
  r.grid_size = size_t(r.grid) * kThreads;
  const int max_batches = r.batches_for(96.0);
  CK(cudaMalloc(&r.in, size_t(max_batches) * r.grid_size * sizeof(int)));
  CK(cudaMalloc(&r.out, size_t(max_batches) * r.grid_size * sizeof(int)));
  CK(cudaMemset(r.in, 1, size_t(max_batches) * r.grid_size * sizeof(int)));
  CK(cudaMemset(r.out, 2, size_t(max_batches) * r.grid_size * sizeof(int)));
  if (argc == 4 && std::strcmp(argv[1], "--one") == 0) {
    const bool write = std::strcmp(argv[2], "rw") == 0;
    const int batches = r.batches_for(atof(argv[3]));
    r.launch(batches, write);  // warm-up: the input (and output) into L2
    r.launch(batches, write);  // measured
    return 0;
  }
  L2Flusher flusher;
  FILE* f = open_csv(argc, argv, "l2_capacity.csv",
                     "mode,footprint_mb,batches,grid_blocks,warm_ms_median,flushed_ms_median");
  for (const char* mode : {"rw", "r"})
    for (double mb : {8.0, 16.0, 24.0, 28.0, 32.0, 34.6, 36.0, 40.0, 44.0, 48.0, 56.0, 64.0, 96.0}) {
      const bool write = mode[1] == 'w';
      const int batches = r.batches_for(mb);
      std::vector<double> warm, flushed;
      for (int rep = 0; rep < 5; ++rep) {
        r.launch(batches, write);
        warm.push_back(r.launch(batches, write));
        flusher.flush();
        flushed.push_back(r.launch(batches, write));
      }
      ROW(f, "%s,%.1f,%d,%d,%.4f,%.4f\n", mode, 2.0 * 4.0 * double(r.grid_size) * batches / 1e6, batches, r.grid,
          median(warm), median(flushed));
    }
  fclose(f);
  return 0;
}

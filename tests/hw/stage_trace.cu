// Why 8 stages of the guide's with_staging_unified run ~100 cycles a batch slower than 4 at two
// blocks of 256 threads per SM from L2, k = 0 (validation.csv: 951 against 853; 702 against 684 at
// one block), where smsim gives 862 against 840. validation_pcsamp puts the extra long_scoreboard at
// the producer's first try_wait in producer_acquire and at the add after compute's LDL of
// shared_offset, whose element was last read 7 iterations before at 8 stages (3 at 4): a local
// miss. This stamps every block's warps (lane 0: acquire start/done, commit done, consumer wait
// start/done, release done) for the first kTraced batches, with each block's SM, so that the blocks
// sharing an SM can be set side by side: how often a warp's compute (wait done to release done) runs
// long, and what the block's other warps and the other block do meanwhile. The stamped loop is
// specialized_trace.cu's unified_traced written out again with its own mark (every block, and the
// SM): that program's rows were measured with its code as it is.
//
// Usage: stage_trace OUTDIR -> OUTDIR/stage_trace.csv (the blocks of SMs 0 to kSmsKept - 1)
//   columns: stages,blocks_per_sm,k,source,block,sm,warp,batch,event,cycle (cycle relative to the
//   launch's first stamp on that SM)
#include <cuda_pipeline.h>
#include <cstdio>
#include <vector>
#include "common.cuh"

namespace {
__device__ __forceinline__ void stamp_end(long long, long long*) {}
}  // namespace
#include "examples.cuh"

namespace {

constexpr int kTraced = 48;  // batches stamped per warp
constexpr int kWarps = 8;    // 256 threads
constexpr int kSmsKept = 3;  // SMs whose blocks are written out
enum Event { kAcqStart, kAcqDone, kCommitDone, kWaitStart, kWaitDone, kReleaseDone, kEvents };
const char* kEventName[] = {"acquire_start", "acquire_done", "commit_done", "wait_start", "wait_done", "release_done"};

__device__ __forceinline__ void mark(long long* tr, int warp, size_t batch, Event e) {
  if (batch < kTraced) tr[((size_t(blockIdx.x) * kWarps + warp) * kTraced + batch) * kEvents + e] = clock64();
}

template <size_t stages_count>
__global__ void unified_traced(int* global_out, int const* global_in, size_t size, size_t batch_sz, int k,
                               long long* tr, int* sm_of) {
  auto grid = cg::this_grid();
  auto block = cg::this_thread_block();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    int smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    sm_of[blockIdx.x] = smid;
  }
  extern __shared__ int shared[];
  size_t shared_offset[stages_count];
  for (int s = 0; s < stages_count; ++s) shared_offset[s] = s * block.size();
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope::thread_scope_block, stages_count> shared_state;
  auto pipeline = cuda::make_pipeline(block, &shared_state);
  auto block_batch = [&](size_t batch) -> int { return block.group_index().x * block.size() + grid.size() * batch; };
  for (size_t compute_batch = 0, fetch_batch = 0; compute_batch < batch_sz; ++compute_batch) {
    for (; fetch_batch < batch_sz && fetch_batch < (compute_batch + stages_count); ++fetch_batch) {
      if (lane == 0) mark(tr, warp, fetch_batch, kAcqStart);
      pipeline.producer_acquire();
      if (lane == 0) mark(tr, warp, fetch_batch, kAcqDone);
      size_t shared_idx = fetch_batch % stages_count;
      cuda::memcpy_async(block, shared + shared_offset[shared_idx], global_in + block_batch(fetch_batch),
                         sizeof(int) * block.size(), pipeline);
      pipeline.producer_commit();
      if (lane == 0) mark(tr, warp, fetch_batch, kCommitDone);
    }
    if (lane == 0) mark(tr, warp, compute_batch, kWaitStart);
    pipeline.consumer_wait();
    if (lane == 0) mark(tr, warp, compute_batch, kWaitDone);
    int shared_idx = compute_batch % stages_count;
    compute(global_out + block_batch(compute_batch), shared + shared_offset[shared_idx], threadIdx.x, k);
    pipeline.consumer_release();
    if (lane == 0) mark(tr, warp, compute_batch, kReleaseDone);
  }
}

using Kernel = void (*)(int*, int const*, size_t, size_t, int, long long*, int*);

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: stage_trace OUTDIR\n");
    return 1;
  }
  const int sms = sm_count(), bs = 256;
  const size_t batch_sz = 64;
  struct { int stages; Kernel fn; } kernels[] = {{2, unified_traced<2>}, {4, unified_traced<4>}, {8, unified_traced<8>}};
  const int max_blocks = 2 * sms;
  const size_t size = batch_sz * size_t(max_blocks) * bs;
  int *din, *dout, *dsm;
  long long* dtr;
  const size_t trn = size_t(max_blocks) * kWarps * kTraced * kEvents;
  CK(cudaMalloc(&din, size * 4));
  CK(cudaMalloc(&dout, size * 4));
  CK(cudaMalloc(&dtr, trn * sizeof(long long)));
  CK(cudaMalloc(&dsm, max_blocks * sizeof(int)));
  CK(cudaMemset(din, 0, size * 4));
  std::vector<long long> tr(trn);
  std::vector<int> sm(max_blocks);
  std::string path = std::string(argv[1]) + "/stage_trace.csv";
  FILE* f = fopen(path.c_str(), "w");
  fprintf(f, "stages,blocks_per_sm,k,source,block,sm,warp,batch,event,cycle\n");
  for (auto& kn : kernels)
    for (int bps : {1, 2})
      for (int k : {0, 32})
        for (int rep = 0; rep < 2; ++rep) {  // L2: the first launch warms L2; keep the second
          const int blocks = bps * sms;
          const size_t sz = batch_sz * size_t(blocks) * bs;
          CK(cudaMemset(dtr, 0xff, trn * sizeof(long long)));
          kn.fn<<<blocks, bs, kn.stages * bs * sizeof(int)>>>(dout, din, sz, batch_sz, k, dtr, dsm);
          CK_LAUNCH();
          if (rep == 0) continue;
          CK(cudaMemcpy(tr.data(), dtr, trn * sizeof(long long), cudaMemcpyDeviceToHost));
          CK(cudaMemcpy(sm.data(), dsm, blocks * sizeof(int), cudaMemcpyDeviceToHost));
          std::vector<long long> t0(sms + 64, -1);  // per SM: its first stamp
          for (int b = 0; b < blocks; ++b)
            for (size_t i = 0; i < size_t(kWarps) * kTraced * kEvents; ++i) {
              long long v = tr[size_t(b) * kWarps * kTraced * kEvents + i];
              long long& first = t0[sm[b]];
              if (v != -1 && (first == -1 || v < first)) first = v;
            }
          for (int b = 0; b < blocks; ++b)
            for (int w = 0; w < kWarps && sm[b] < kSmsKept; ++w)
              for (int t = 0; t < kTraced; ++t)
                for (int e = 0; e < kEvents; ++e) {
                  long long v = tr[((size_t(b) * kWarps + w) * kTraced + t) * kEvents + e];
                  if (v != -1)
                    fprintf(f, "%d,%d,%d,L2,%d,%d,%d,%d,%s,%lld\n", kn.stages, bps, k, b, sm[b], w, t, kEventName[e],
                            v - t0[sm[b]]);
                }
        }
  fclose(f);
  printf("wrote %s\n", path.c_str());
  return 0;
}

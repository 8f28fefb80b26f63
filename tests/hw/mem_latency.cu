// Latency microbenchmarks: dependent chases, one warp or one thread per block, nothing else on
// the SM, so every number is a pure round trip in SM cycles (clock64).
//
//   smem_latency.csv      shared-memory load latency; one warp, lanes `stride` words apart, so a
//                         stride of s (power of two) is a min(s,32)-way bank conflict
//   global_latency.csv    ld.global chase: L1 (.ca, 16 KiB), L2 (.cg, 1 and 8 MiB), DRAM (.cg,
//                         256 MiB and 1 GiB, L2 flushed, every node touched once)
//   cp_async_latency.csv  cp.async 4/8/16 B -> commit_group -> wait_group 0 -> ld.shared,
//                         chased (the loaded word is the next node's offset), from L2 (1 and
//                         8 MiB footprints) and DRAM (256 MiB)
//   bulk_copy_latency.csv cuda::memcpy_async(dst, src, aligned_size_t<16>, cuda::barrier) (the
//                         cp.async.bulk path on sm_90) -> arrive_and_wait -> ld.shared, chased
//
// Usage: mem_latency OUTDIR
#include <cuda/barrier>
#include "common.cuh"

namespace {

constexpr int kReps = 7;  // launches per configuration; the median is reported

// ---------------------------------------------------------------- shared memory
// Lane l's ring sits at words l*stride + j*32*stride (j < kRing): all lanes of the warp hit
// banks (l*stride) % 32 at every step, so the conflict degree is fixed for the whole chase.
constexpr int kRing = 4;

__global__ void smem_chase(int stride, int iters, long long* cycles, uint32_t* sink) {
  extern __shared__ uint32_t s[];
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(s));
  const int lane = threadIdx.x;
  for (int j = 0; j < kRing; ++j)
    s[lane * stride + j * 32 * stride] = base + 4u * (lane * stride + ((j + 1) % kRing) * 32 * stride);
  __syncwarp();
  uint32_t p = base + 4u * lane * stride;
  // The chase goes through inline PTX holding shared-window byte addresses, so each step is
  // one LDS whose address is the previous result: no index arithmetic in the chain.
  long long t0 = clock64();
#pragma unroll 16
  for (int i = 0; i < iters; ++i) asm volatile("ld.shared.u32 %0, [%0];" : "+r"(p)::"memory");
  long long t1 = clock64();
  if (lane == 0) cycles[blockIdx.x] = t1 - t0;
  sink[lane] = p;
}

// ---------------------------------------------------------------- global chase buffers
// Node i of a chase buffer lives at base + i*node_bytes and holds, at byte 0, the 32-bit byte
// offset of the next node (for the cp.async/bulk chases, which copy 4..N bytes to shared) and,
// at byte 8, the full 64-bit address of the next node (for the ld.global chase, so that its
// chain has no address arithmetic).
struct ChaseBuf {
  char* base = nullptr;
  size_t bytes = 0, node_bytes = 0;
  uint32_t nodes = 0;
  uint32_t cursor = 0;  // the DRAM chases continue where the last launch stopped: fresh lines
};

__global__ void build_nodes(char* base, size_t node_bytes, const uint32_t* next, uint32_t n) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    char* node = base + size_t(i) * node_bytes;
    *reinterpret_cast<uint32_t*>(node) = uint32_t(size_t(next[i]) * node_bytes);
    *reinterpret_cast<uint64_t*>(node + 8) = reinterpret_cast<uint64_t>(base + size_t(next[i]) * node_bytes);
  }
}

// Reads every 32-byte sector of every node (up to 8 KiB) through L2 only, so an L2-resident
// chase starts warm: L2 fills by sector, so touching one word per line would leave the rest of
// a 128-byte bulk copy in DRAM.
__global__ void touch_nodes(const char* base, size_t node_bytes, uint32_t n, uint32_t* sink) {
  uint32_t acc = 0;
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const char* node = base + size_t(i) * node_bytes;
    for (size_t b = 0; b < node_bytes && b < 8192; b += 32) acc += __ldcg(reinterpret_cast<const uint32_t*>(node + b));
  }
  if (acc == 0xdeadbeef) *sink = acc;  // keeps the loads alive, never true in practice
}

ChaseBuf make_chase(size_t bytes, size_t node_bytes, uint64_t seed) {
  ChaseBuf c;
  c.bytes = bytes;
  c.node_bytes = node_bytes;
  c.nodes = uint32_t(bytes / node_bytes);
  CK(cudaMalloc(&c.base, bytes));
  std::vector<uint32_t> next = random_cycle(c.nodes, seed);
  uint32_t* dnext;
  CK(cudaMalloc(&dnext, next.size() * 4));
  CK(cudaMemcpy(dnext, next.data(), next.size() * 4, cudaMemcpyHostToDevice));
  build_nodes<<<264, 256>>>(c.base, node_bytes, dnext, c.nodes);
  CK_LAUNCH();
  CK(cudaFree(dnext));
  return c;
}

// ---------------------------------------------------------------- kernels (one thread)
// `warm` untimed steps first (L1 needs them: it does not survive between launches), then
// `iters` timed steps. end_off returns the next node's offset so a later launch can continue.
template <bool kCacheAll>
__global__ void gload_chase(const char* base, uint32_t start, int warm, int iters, long long* cycles,
                            uint32_t* end_off) {
  uint64_t p = reinterpret_cast<uint64_t>(base + start);
  for (int i = 0; i < warm; ++i) {
    if (kCacheAll) asm volatile("ld.global.ca.u64 %0, [%0+8];" : "+l"(p)::"memory");
    else           asm volatile("ld.global.cg.u64 %0, [%0+8];" : "+l"(p)::"memory");
  }
  long long t0 = clock64();
#pragma unroll 8
  for (int i = 0; i < iters; ++i) {
    if (kCacheAll) asm volatile("ld.global.ca.u64 %0, [%0+8];" : "+l"(p)::"memory");
    else           asm volatile("ld.global.cg.u64 %0, [%0+8];" : "+l"(p)::"memory");
  }
  long long t1 = clock64();
  cycles[0] = t1 - t0;
  *end_off = uint32_t(reinterpret_cast<const char*>(p) - base);
}

// One cp.async of kBytes per step, waited for alone and read back: the round trip a pipeline
// with one copy in flight would see. 4/8 B use .ca and 16 B .cg, as libcudacxx and
// __pipeline_memcpy_async do.
template <int kBytes>
__global__ void cp_async_chase(const char* base, uint32_t start, int iters, long long* cycles, uint32_t* end_off) {
  __shared__ alignas(16) uint32_t buf[4];
  const uint32_t s = static_cast<uint32_t>(__cvta_generic_to_shared(buf));
  uint32_t off = start;
  long long t0 = clock64();
  for (int i = 0; i < iters; ++i) {
    const char* src = base + off;
    if (kBytes == 16) asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(src) : "memory");
    else              asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(s), "l"(src), "n"(kBytes) : "memory");
    asm volatile("cp.async.commit_group;" ::: "memory");
    asm volatile("cp.async.wait_group 0;" ::: "memory");
    asm volatile("ld.shared.u32 %0, [%1];" : "=r"(off) : "r"(s) : "memory");
  }
  long long t1 = clock64();
  cycles[0] = t1 - t0;
  *end_off = off;
}

// The bulk (TMA) path: libcudacxx takes it on sm_90 when the size is aligned_size_t<16> and
// the completion is a block-scope cuda::barrier in shared memory (mbarrier complete_tx).
__global__ void bulk_chase(const char* base, uint32_t start, int bytes, int iters, long long* cycles,
                           uint32_t* end_off) {
  extern __shared__ __align__(128) unsigned char dyn[];
  // The documented way to put a cuda::barrier in shared memory; it is initialised by init().
#pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  init(&bar, 1);
  // The barrier was initialised through the generic proxy; the copy engine (async proxy)
  // completes it, so make the initialisation visible to that proxy first.
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  uint32_t off = start;
  long long t0 = clock64();
  for (int i = 0; i < iters; ++i) {
    cuda::memcpy_async(dyn, base + off, cuda::aligned_size_t<16>(bytes), bar);
    bar.arrive_and_wait();
    off = *reinterpret_cast<volatile uint32_t*>(dyn);
  }
  long long t1 = clock64();
  cycles[0] = t1 - t0;
  *end_off = off;
}

}  // namespace

int main(int argc, char** argv) {
  L2Flusher flusher;
  long long* dcyc;
  uint32_t *dsink, *doff;
  CK(cudaMalloc(&dcyc, 1024 * sizeof(long long)));
  CK(cudaMalloc(&dsink, 4096));
  CK(cudaMalloc(&doff, 4));

  // ------------------------------------------------------------ shared memory
  {
    FILE* f = open_csv(argc, argv, "smem_latency.csv",
                       "threads,stride_words,conflict_ways,iters,reps,cycles_per_load_median,cycles_per_load_min");
    const int iters = 4096;
    struct Cfg { int threads, stride; };
    const Cfg cfgs[] = {{1, 1}, {32, 1}, {32, 2}, {32, 4}, {32, 8}, {32, 16}, {32, 32}};
    for (const Cfg& c : cfgs) {
      size_t smem = size_t(32) * c.stride * kRing * 4;
      std::vector<double> v;
      for (int r = 0; r < kReps; ++r) {
        smem_chase<<<1, c.threads, smem>>>(c.stride, iters, dcyc, dsink);
        CK_LAUNCH();
        long long cyc;
        CK(cudaMemcpy(&cyc, dcyc, sizeof cyc, cudaMemcpyDeviceToHost));
        v.push_back(double(cyc) / iters);
      }
      int ways = c.threads == 1 ? 1 : std::min(c.stride, 32);
      ROW(f, "%d,%d,%d,%d,%d,%.2f,%.2f\n", c.threads, c.stride, ways, iters, kReps, median(v),
          *std::min_element(v.begin(), v.end()));
    }
    fclose(f);
  }

  // ------------------------------------------------------------ chase buffers
  ChaseBuf l1 = make_chase(16u << 10, 128, 1);
  ChaseBuf l2a = make_chase(1u << 20, 128, 2);
  ChaseBuf l2b = make_chase(8u << 20, 128, 3);
  ChaseBuf dr = make_chase(256u << 20, 128, 4);
  ChaseBuf drg = make_chase(1024u << 20, 128, 5);
  ChaseBuf l2big = make_chase(8u << 20, 8192, 6);    // bulk copies of up to 8 KiB
  ChaseBuf drbig = make_chase(256u << 20, 8192, 7);

  // Prepares one launch: "l2" touches the buffer through L2, "dram" flushes L2.
  auto prepare = [&](ChaseBuf& c, bool dram) {
    if (dram) flusher.flush();
    else {
      touch_nodes<<<264, 256>>>(c.base, c.node_bytes, c.nodes, dsink);
      CK_LAUNCH();
    }
  };
  auto read_cyc = [&]() { long long c; CK(cudaMemcpy(&c, dcyc, sizeof c, cudaMemcpyDeviceToHost)); return c; };
  auto read_off = [&]() { uint32_t o; CK(cudaMemcpy(&o, doff, 4, cudaMemcpyDeviceToHost)); return o; };

  // ------------------------------------------------------------ ld.global chase
  {
    FILE* f = open_csv(argc, argv, "global_latency.csv",
                       "level,footprint_bytes,load,iters,reps,cycles_per_load_median,cycles_per_load_min");
    struct Cfg { const char* level; ChaseBuf* c; bool ca, dram; int warm, iters; };
    const Cfg cfgs[] = {
        {"L1", &l1, true, false, 128, 4096},
        {"L2", &l2a, false, false, 0, 4096},
        {"L2", &l2b, false, false, 0, 4096},
        {"DRAM", &dr, false, true, 0, 2048},
        {"DRAM", &drg, false, true, 0, 2048},
    };
    for (const Cfg& c : cfgs) {
      std::vector<double> v;
      for (int r = 0; r < kReps; ++r) {
        prepare(*c.c, c.dram);
        if (c.ca) gload_chase<true><<<1, 1>>>(c.c->base, c.c->cursor, c.warm, c.iters, dcyc, doff);
        else      gload_chase<false><<<1, 1>>>(c.c->base, c.c->cursor, c.warm, c.iters, dcyc, doff);
        CK_LAUNCH();
        v.push_back(double(read_cyc()) / c.iters);
        c.c->cursor = read_off();
      }
      ROW(f, "%s,%zu,%s,%d,%d,%.2f,%.2f\n", c.level, c.c->bytes, c.ca ? "ld.global.ca" : "ld.global.cg", c.iters,
          kReps, median(v), *std::min_element(v.begin(), v.end()));
    }
    fclose(f);
  }

  // ------------------------------------------------------------ cp.async round trip
  {
    FILE* f = open_csv(argc, argv, "cp_async_latency.csv",
                       "source,footprint_bytes,bytes,iters,reps,cycles_per_roundtrip_median,cycles_per_roundtrip_min");
    struct Src { const char* name; ChaseBuf* c; bool dram; };
    const Src srcs[] = {{"L2", &l2a, false}, {"L2", &l2b, false}, {"DRAM", &dr, true}};
    for (const Src& src : srcs) {
      ChaseBuf& c = *src.c;
      const int iters = src.dram ? 1024 : 2048;
      for (int bytes : {4, 8, 16}) {
        std::vector<double> v;
        for (int r = 0; r < kReps; ++r) {
          prepare(c, src.dram);
          if (bytes == 4) cp_async_chase<4><<<1, 1>>>(c.base, c.cursor, iters, dcyc, doff);
          if (bytes == 8) cp_async_chase<8><<<1, 1>>>(c.base, c.cursor, iters, dcyc, doff);
          if (bytes == 16) cp_async_chase<16><<<1, 1>>>(c.base, c.cursor, iters, dcyc, doff);
          CK_LAUNCH();
          v.push_back(double(read_cyc()) / iters);
          c.cursor = read_off();
        }
        ROW(f, "%s,%zu,%d,%d,%d,%.2f,%.2f\n", src.name, c.bytes, bytes, iters, kReps, median(v),
            *std::min_element(v.begin(), v.end()));
      }
    }
    fclose(f);
  }

  // ------------------------------------------------------------ bulk copy round trip
  {
    FILE* f = open_csv(argc, argv, "bulk_copy_latency.csv",
                       "source,footprint_bytes,bytes,iters,reps,cycles_per_roundtrip_median,cycles_per_roundtrip_min");
    CK(cudaFuncSetAttribute(bulk_chase, cudaFuncAttributeMaxDynamicSharedMemorySize, 8192));
    // 16 and 128 B copies chase 128-byte nodes; the larger ones 8 KiB nodes (same footprints).
    struct Src { const char* name; ChaseBuf *small, *large; bool dram; };
    const Src srcs[] = {{"L2", &l2a, nullptr, false}, {"L2", &l2b, &l2big, false}, {"DRAM", &dr, &drbig, true}};
    for (const Src& src : srcs) {
      for (int bytes : {16, 128, 1024, 4096, 8192}) {
        ChaseBuf* cp = bytes <= 128 ? src.small : src.large;
        if (!cp) continue;
        ChaseBuf& c = *cp;
        const int iters = src.dram ? 512 : 1024;
        std::vector<double> v;
        for (int r = 0; r < kReps; ++r) {
          prepare(c, src.dram);
          bulk_chase<<<1, 1, bytes>>>(c.base, c.cursor, bytes, iters, dcyc, doff);
          CK_LAUNCH();
          v.push_back(double(read_cyc()) / iters);
          c.cursor = read_off();
        }
        ROW(f, "%s,%zu,%d,%d,%d,%.2f,%.2f\n", src.name, c.bytes, bytes, iters, kReps, median(v),
            *std::min_element(v.begin(), v.end()));
      }
    }
    fclose(f);
  }
  printf("mem_latency: done\n");
  return 0;
}

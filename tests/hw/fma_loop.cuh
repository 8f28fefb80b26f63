// The FFMA loop warp_order.cu and block_order.cu time: kChains independent chains (1: each FFMA
// waits for the one before; 8: the FMA pipe saturated), 8 x trips FFMAs each, from a start common
// to the block (a __syncthreads).  Stamps clock64 before and after the loop into *t0 and *t1 and
// returns the chains' sum, which the caller stores so that nothing is optimised away.
#pragma once

template <int kChains>
__device__ __forceinline__ float fma_loop(int trips, long long* t0, long long* t1) {
  float v[kChains];
#pragma unroll
  for (int c = 0; c < kChains; ++c) v[c] = float(threadIdx.x + c);
  __syncthreads();
  *t0 = clock64();
  for (int i = 0; i < trips; ++i) {
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
      for (int c = 0; c < kChains; ++c) v[c] = fmaf(v[c], 1.000001f, 0.5f);
  }
  *t1 = clock64();
  float s = 0.f;
#pragma unroll
  for (int c = 0; c < kChains; ++c) s += v[c];
  return s;
}

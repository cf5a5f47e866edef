// importance_sampling.cu
//
// Draws samples from a tabulated 1D distribution (e.g. an environment
// map's marginal CDF) by inverse-CDF lookup. `sample_icdf_shared` copies
// the whole 8192-entry inverse-CDF table into shared memory for every
// 64-thread block before sampling; `sample_icdf_ldg` reads the same table
// through the read-only data cache with 256-thread blocks, which is
// faster on sm_80 because many more warps stay resident.
// Random numbers: a counter-based hash (no curand dependency).
//
// Intentional pitfalls:
//   SL505 (line 48: 32 KiB of shared memory per 64-thread block: only 4
//          blocks fit in an sm_80 SM's 164 KiB (with the 1 KiB per-block
//          reservation) = 8 of 64 warps, 12.5% occupancy, limited by shared
//          memory)
// (look-alike that is fine: sample_icdf_ldg, same work, no shared table)

#include <cuda_runtime.h>

constexpr int kTableSize = 8192;
constexpr int kSmallBlock = 64;
constexpr int kBlock = 256;

__device__ __forceinline__ unsigned int hash_u32(unsigned int x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

__device__ __forceinline__ float uniform01(unsigned int seed, unsigned int index)
{
    return (hash_u32(seed ^ hash_u32(index)) >> 8) * (1.0f / 16777216.0f);
}

__device__ __forceinline__ float lerp_table(const float* table, float u)
{
    const float x = u * (kTableSize - 1);
    const int i = min(static_cast<int>(x), kTableSize - 2);
    const float t = x - static_cast<float>(i);
    return fmaf(t, table[i + 1] - table[i], table[i]);
}

__global__ void __launch_bounds__(kSmallBlock)
sample_icdf_shared(const float* __restrict__ icdf, float* __restrict__ samples, int count,
                   unsigned int seed)
{
    __shared__ float table[kTableSize];
    for (int i = threadIdx.x; i < kTableSize; i += kSmallBlock) {
        table[i] = icdf[i];
    }
    __syncthreads();

    for (int s = blockIdx.x * kSmallBlock + threadIdx.x; s < count; s += gridDim.x * kSmallBlock) {
        samples[s] = lerp_table(table, uniform01(seed, s));
    }
}

__global__ void __launch_bounds__(kBlock)
sample_icdf_ldg(const float* __restrict__ icdf, float* __restrict__ samples, int count,
                unsigned int seed)
{
    for (int s = blockIdx.x * kBlock + threadIdx.x; s < count; s += gridDim.x * kBlock) {
        const float u = uniform01(seed, s);
        const float x = u * (kTableSize - 1);
        const int i = min(static_cast<int>(x), kTableSize - 2);
        const float t = x - static_cast<float>(i);
        const float a = __ldg(&icdf[i]);
        const float b = __ldg(&icdf[i + 1]);
        samples[s] = fmaf(t, b - a, a);
    }
}

void launch_sampling(const float* icdf, float* samples, int count, unsigned int seed, int numSMs,
                     bool useSharedTable, cudaStream_t stream)
{
    if (useSharedTable) {
        const int blocks = min((count + kSmallBlock - 1) / kSmallBlock, numSMs * 5);
        sample_icdf_shared<<<blocks, kSmallBlock, 0, stream>>>(icdf, samples, count, seed);
    } else {
        const int blocks = min((count + kBlock - 1) / kBlock, numSMs * 8);
        sample_icdf_ldg<<<blocks, kBlock, 0, stream>>>(icdf, samples, count, seed);
    }
}

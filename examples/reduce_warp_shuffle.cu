// reduce_warp_shuffle.cu
//
// Sum reduction of a large float array with warp shuffles.
// `block_sum_warp_only` was the first attempt: it reduces inside each warp
// with __shfl_down_sync and lets thread 0 publish the result as the block's
// sum, silently dropping the other seven warps of the 256-thread block.
// `block_sum_two_level` is the correct version: warp reduction, one partial
// per warp in shared memory, then warp 0 reduces the partials.
// `sum_partials` folds the per-block sums with a cooperative-groups tile.
//
// Intentional pitfalls:
//   SL404 (line 42: the __shfl_down_sync tree reduces one warp, but its
//          result is stored as the whole 256-thread block's sum)

#include <cooperative_groups.h>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

constexpr int kBlock = 256;
constexpr int kWarpSize = 32;
constexpr unsigned kFullMask = 0xffffffffu;

__device__ __forceinline__ float warp_reduce_sum(float v)
{
#pragma unroll
    for (int offset = kWarpSize / 2; offset > 0; offset >>= 1) {
        v += __shfl_down_sync(kFullMask, v, offset);
    }
    return v;
}

__global__ void __launch_bounds__(kBlock)
block_sum_warp_only(const float* __restrict__ in, float* __restrict__ blockSums, int n)
{
    float v = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        v += in[i];
    }
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
        v += __shfl_down_sync(kFullMask, v, offset);
    }
    if (threadIdx.x == 0) {
        blockSums[blockIdx.x] = v;
    }
}

__global__ void __launch_bounds__(kBlock)
block_sum_two_level(const float4* __restrict__ in, float* __restrict__ blockSums, int n4)
{
    __shared__ float warpSums[kBlock / kWarpSize];

    float v = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += gridDim.x * blockDim.x) {
        const float4 x = in[i];
        v += (x.x + x.y) + (x.z + x.w);
    }

    const int lane = threadIdx.x % kWarpSize;
    const int warp = threadIdx.x / kWarpSize;
    v = warp_reduce_sum(v);
    if (lane == 0) {
        warpSums[warp] = v;
    }
    __syncthreads();

    if (warp == 0) {
        v = lane < kBlock / kWarpSize ? warpSums[lane] : 0.0f;
        v = warp_reduce_sum(v);
        if (lane == 0) {
            blockSums[blockIdx.x] = v;
        }
    }
}

// Single block folds up to any number of partial sums.
__global__ void __launch_bounds__(kBlock)
sum_partials(const float* __restrict__ partials, float* __restrict__ result, int count)
{
    __shared__ float warpSums[kBlock / kWarpSize];
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<kWarpSize> tile = cg::tiled_partition<kWarpSize>(block);

    float v = 0.0f;
    for (int i = threadIdx.x; i < count; i += kBlock) {
        v += partials[i];
    }
    for (int offset = tile.size() / 2; offset > 0; offset >>= 1) {
        v += tile.shfl_down(v, offset);
    }
    if (tile.thread_rank() == 0) {
        warpSums[tile.meta_group_rank()] = v;
    }
    block.sync();

    if (tile.meta_group_rank() == 0) {
        v = tile.thread_rank() < tile.meta_group_size() ? warpSums[tile.thread_rank()] : 0.0f;
        for (int offset = tile.size() / 2; offset > 0; offset >>= 1) {
            v += tile.shfl_down(v, offset);
        }
        if (tile.thread_rank() == 0) {
            *result = v;
        }
    }
}

void launch_sum(const float* in, float* scratch, float* result, int n, int numSMs,
                bool useTwoLevel, cudaStream_t stream)
{
    const int maxBlocks = numSMs * 8;
    if (useTwoLevel && n % 4 == 0) {
        const int n4 = n / 4;
        const int blocks = min((n4 + kBlock - 1) / kBlock, maxBlocks);
        block_sum_two_level<<<blocks, kBlock, 0, stream>>>(reinterpret_cast<const float4*>(in), scratch, n4);
        sum_partials<<<1, kBlock, 0, stream>>>(scratch, result, blocks);
    } else {
        const int blocks = min((n + kBlock - 1) / kBlock, maxBlocks);
        block_sum_warp_only<<<blocks, kBlock, 0, stream>>>(in, scratch, n);
        sum_partials<<<1, kBlock, 0, stream>>>(scratch, result, blocks);
    }
}

// sum_of_squares.cu
//
// Squared L2 norm of a large vector (gradient clipping). Two versions kept
// side by side for the benchmark: `sumsq_chunked` gives every thread one
// contiguous chunk of ceil(n / threads) elements, `sumsq_grid_stride`
// interleaves the elements over all threads so each warp load is one
// contiguous 128-byte segment. Both finish with a shared-memory block
// reduction and one atomicAdd per block.
//
// Intentional pitfalls:
//   SL504 (line 29: per-thread contiguous chunk loop: neighbouring lanes
//          are `chunk` elements apart (uncoalesced), and with
//          chunk = ceil(n / threads) whole threads can be left idle)
//   SL506 (line 83: sumsq_chunked is only launched with a literal 256-thread
//          block and its shared array assumes it, but it has no
//          __launch_bounds__)
// (look-alike that is fine: the grid-stride loop in sumsq_grid_stride)

#include <cuda_runtime.h>

constexpr int kBlock = 256;

__global__ void sumsq_chunked(const float* __restrict__ x, float* __restrict__ result, int n, int chunk)
{
    __shared__ float s[kBlock];

    const int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int i = tid * chunk; i < (tid + 1) * chunk && i < n; ++i) {
        acc = fmaf(x[i], x[i], acc);
    }

    s[threadIdx.x] = acc;
    __syncthreads();
    for (int stride = kBlock / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) {
            s[threadIdx.x] += s[threadIdx.x + stride];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        atomicAdd(result, s[0]);
    }
}

__global__ void __launch_bounds__(kBlock)
sumsq_grid_stride(const float* __restrict__ x, float* __restrict__ result, int n)
{
    __shared__ float warpSums[kBlock / 32];

    float acc = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        acc = fmaf(x[i], x[i], acc);
    }
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
        acc += __shfl_down_sync(0xffffffffu, acc, offset);
    }
    if (threadIdx.x % 32 == 0) {
        warpSums[threadIdx.x / 32] = acc;
    }
    __syncthreads();

    if (threadIdx.x < 32) {
        float v = threadIdx.x < kBlock / 32 ? warpSums[threadIdx.x] : 0.0f;
#pragma unroll
        for (int offset = 16; offset > 0; offset >>= 1) {
            v += __shfl_down_sync(0xffffffffu, v, offset);
        }
        if (threadIdx.x == 0) {
            atomicAdd(result, v);
        }
    }
}

void launch_sumsq(const float* x, float* result, int n, int numSMs, bool chunked, cudaStream_t stream)
{
    cudaMemsetAsync(result, 0, sizeof(float), stream);
    const int blocks = numSMs * 4;
    if (chunked) {
        const int threads = blocks * kBlock;
        const int chunk = (n + threads - 1) / threads;
        sumsq_chunked<<<blocks, 256, 0, stream>>>(x, result, n, chunk);
    } else {
        sumsq_grid_stride<<<blocks, kBlock, 0, stream>>>(x, result, n);
    }
}

// radix_histogram.cu
//
// Histogram kernels from an LSD radix sort and a byte-statistics tool.
// `radix_digit_counts` counts 4-bit digits of 32-bit keys for one pass of
// the sort: each thread tallies ITEMS keys (strided by the block size, so
// loads stay coalesced) into private counters, the block sums them through
// shared memory and writes one 16-bin row per block.
// `byte_histogram` is a 256-bin histogram with shared-memory atomics and a
// grid-stride loop.
//
// Intentional pitfalls:
//   SL101 (line 33: `counts[16]` is indexed by the key's digit, a runtime
//          value, so the array is placed in local memory)
//   SL503 (line 94: `n / (kBlock * kItems)` truncates: the last partial tile
//          of keys is never counted; round up)
// (look-alikes that are fine: `counts[d]` in constant-trip loops, the
//  byte_histogram launch also divides n by the block size, but that kernel is
//  a grid-stride loop, so no element is skipped)

#include <cuda_runtime.h>

constexpr int kBlock = 256;
constexpr int kItems = 8;
constexpr int kRadixBits = 4;
constexpr int kRadix = 1 << kRadixBits;

__global__ void __launch_bounds__(kBlock)
radix_digit_counts(const unsigned int* __restrict__ keys, unsigned int* __restrict__ blockCounts,
                   int n, int shift)
{
    __shared__ unsigned int s_counts[kRadix][kBlock + 1];

    unsigned int counts[kRadix];
#pragma unroll
    for (int d = 0; d < kRadix; ++d) {
        counts[d] = 0;
    }

    const int tileBase = blockIdx.x * kBlock * kItems;
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
        const int i = tileBase + k * kBlock + threadIdx.x;
        if (i < n) {
            const unsigned int digit = (keys[i] >> shift) & (kRadix - 1);
            counts[digit] += 1;
        }
    }

#pragma unroll
    for (int d = 0; d < kRadix; ++d) {
        s_counts[d][threadIdx.x] = counts[d];
    }
    __syncthreads();

    // 16 warps' worth of work spread over 8 warps: each warp sums two digits.
    const int lane = threadIdx.x % 32;
    const int warp = threadIdx.x / 32;
    for (int d = warp; d < kRadix; d += kBlock / 32) {
        unsigned int sum = 0;
        for (int t = lane; t < kBlock; t += 32) {
            sum += s_counts[d][t];
        }
#pragma unroll
        for (int offset = 16; offset > 0; offset >>= 1) {
            sum += __shfl_down_sync(0xffffffffu, sum, offset);
        }
        if (lane == 0) {
            blockCounts[blockIdx.x * kRadix + d] = sum;
        }
    }
}

__global__ void __launch_bounds__(kBlock)
byte_histogram(const unsigned char* __restrict__ data, unsigned int* __restrict__ histogram, int n)
{
    __shared__ unsigned int s_hist[256];
    s_hist[threadIdx.x] = 0;
    __syncthreads();

    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        atomicAdd(&s_hist[data[i]], 1u);
    }
    __syncthreads();

    const unsigned int c = s_hist[threadIdx.x];
    if (c != 0) {
        atomicAdd(&histogram[threadIdx.x], c);
    }
}

void launch_radix_pass_counts(const unsigned int* keys, unsigned int* blockCounts, int n, int shift,
                              cudaStream_t stream)
{
    const int blocks = n / (kBlock * kItems);
    radix_digit_counts<<<blocks, kBlock, 0, stream>>>(keys, blockCounts, n, shift);
}

void launch_byte_histogram(const unsigned char* data, unsigned int* histogram, int n, int numSMs,
                           cudaStream_t stream)
{
    cudaMemsetAsync(histogram, 0, 256 * sizeof(unsigned int), stream);
    const int blocks = max(1, min(n / kBlock, numSMs * 4));
    byte_histogram<<<blocks, kBlock, 0, stream>>>(data, histogram, n);
}

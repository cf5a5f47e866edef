// prefix_scan.cu
//
// Exclusive prefix sum of a large int array in three phases: a
// work-efficient (Blelloch) scan of 2*kBlock elements per block with
// bank-conflict padding, a scan of the per-block totals, and a uniform add.
// `inclusive_scan_tail` handles a short trailing segment of fewer than 256
// elements with a Hillis-Steele scan; it was written with the barriers
// inside the `threadIdx.x < n` guard.
//
// Intentional pitfalls:
//   SL403 (line 106: __syncthreads() inside `if (threadIdx.x < n)`: threads
//          >= n never reach it; undefined behaviour / hang)
//   SL403 (line 109: same guard, inside the scan loop)
//   SL403 (line 111: same guard, inside the scan loop)
// (look-alikes that are fine: the Blelloch kernel guards its loads and the
//  active-thread test `tid < d` but calls __syncthreads() outside them; the
//  early return in add_block_offsets depends on blockIdx only)

#include <cuda_runtime.h>

constexpr int kBlock = 256;
constexpr int kElems = 2 * kBlock;
constexpr int kLogBanks = 5;

#define CONFLICT_FREE(i) ((i) + ((i) >> kLogBanks))

__global__ void __launch_bounds__(kBlock)
blelloch_scan_block(const int* __restrict__ in, int* __restrict__ out, int* __restrict__ blockTotals, int n)
{
    __shared__ int temp[CONFLICT_FREE(kElems)];

    const int tid = threadIdx.x;
    const int base = blockIdx.x * kElems;
    const int ai = tid;
    const int bi = tid + kBlock;

    temp[CONFLICT_FREE(ai)] = base + ai < n ? in[base + ai] : 0;
    temp[CONFLICT_FREE(bi)] = base + bi < n ? in[base + bi] : 0;

    // Up-sweep (reduce).
    int offset = 1;
    for (int d = kElems >> 1; d > 0; d >>= 1) {
        __syncthreads();
        if (tid < d) {
            const int a = offset * (2 * tid + 1) - 1;
            const int b = offset * (2 * tid + 2) - 1;
            temp[CONFLICT_FREE(b)] += temp[CONFLICT_FREE(a)];
        }
        offset <<= 1;
    }

    if (tid == 0) {
        blockTotals[blockIdx.x] = temp[CONFLICT_FREE(kElems - 1)];
        temp[CONFLICT_FREE(kElems - 1)] = 0;
    }

    // Down-sweep.
    for (int d = 1; d < kElems; d <<= 1) {
        offset >>= 1;
        __syncthreads();
        if (tid < d) {
            const int a = offset * (2 * tid + 1) - 1;
            const int b = offset * (2 * tid + 2) - 1;
            const int t = temp[CONFLICT_FREE(a)];
            temp[CONFLICT_FREE(a)] = temp[CONFLICT_FREE(b)];
            temp[CONFLICT_FREE(b)] += t;
        }
    }
    __syncthreads();

    if (base + ai < n) {
        out[base + ai] = temp[CONFLICT_FREE(ai)];
    }
    if (base + bi < n) {
        out[base + bi] = temp[CONFLICT_FREE(bi)];
    }
}

__global__ void __launch_bounds__(kBlock)
add_block_offsets(int* __restrict__ data, const int* __restrict__ scannedTotals, int n, int numBlocks)
{
    if (blockIdx.x >= numBlocks) {
        return;   // block-uniform: every thread of the block leaves together
    }
    __shared__ int blockOffset;
    if (threadIdx.x == 0) {
        blockOffset = scannedTotals[blockIdx.x];
    }
    __syncthreads();

    const int base = blockIdx.x * kElems;
    for (int i = threadIdx.x; i < kElems; i += kBlock) {
        if (base + i < n) {
            data[base + i] += blockOffset;
        }
    }
}

__global__ void __launch_bounds__(kBlock)
inclusive_scan_tail(int* __restrict__ data, int base, int n)
{
    __shared__ int s[kBlock];
    const int t = threadIdx.x;
    if (t < n) {
        s[t] = data[base + t];
        __syncthreads();
        for (int offset = 1; offset < n; offset <<= 1) {
            const int v = t >= offset ? s[t - offset] : 0;
            __syncthreads();
            s[t] += v;
            __syncthreads();
        }
        data[base + t] = s[t];
    }
}

void launch_exclusive_scan(const int* in, int* out, int* totals, int* scannedTotals, int n,
                           cudaStream_t stream)
{
    const int blocks = (n + kElems - 1) / kElems;
    blelloch_scan_block<<<blocks, kBlock, 0, stream>>>(in, out, totals, n);
    // Totals fit one block for n <= 512 * 512; larger inputs recurse (not shown).
    blelloch_scan_block<<<1, kBlock, 0, stream>>>(totals, scannedTotals, totals + blocks, blocks);
    add_block_offsets<<<blocks, kBlock, 0, stream>>>(out, scannedTotals, n, blocks);
}

void launch_tail_scan(int* data, int base, int n, cudaStream_t stream)
{
    inclusive_scan_tail<<<1, kBlock, 0, stream>>>(data, base, n);
}

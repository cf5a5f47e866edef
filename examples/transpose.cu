// transpose.cu
//
// Out-of-place matrix transpose, float, row-major [rows x cols] ->
// [cols x rows]. `transpose_naive` is kept as the bandwidth baseline for
// the benchmark table; `transpose_tiled` reads and writes coalesced through
// a 32x33 shared tile (the +1 column avoids bank conflicts), with 32x8
// threads each moving four elements. Both are launched on the same rounded
// grid.
//
// Intentional pitfalls:
//   SL105 (line 21: transpose_naive indexes `in`/`out` with the global
//          thread position but has no bounds check, and the grid is rounded
//          up to whole tiles, so edge blocks read and write out of bounds)

#include <cuda_runtime.h>

constexpr int kTile = 32;
constexpr int kBlockRows = 8;

__global__ void __launch_bounds__(kTile * kBlockRows)
transpose_naive(const float* __restrict__ in, float* __restrict__ out, int rows, int cols)
{
    const int x = blockIdx.x * kTile + threadIdx.x;
    const int y0 = blockIdx.y * kTile + threadIdx.y;
#pragma unroll
    for (int r = 0; r < kTile; r += kBlockRows) {
        out[x * rows + (y0 + r)] = in[(y0 + r) * cols + x];
    }
}

__global__ void __launch_bounds__(kTile * kBlockRows)
transpose_tiled(const float* __restrict__ in, float* __restrict__ out, int rows, int cols)
{
    __shared__ float tile[kTile][kTile + 1];

    int x = blockIdx.x * kTile + threadIdx.x;
    int y = blockIdx.y * kTile + threadIdx.y;
#pragma unroll
    for (int r = 0; r < kTile; r += kBlockRows) {
        if (x < cols && y + r < rows) {
            tile[threadIdx.y + r][threadIdx.x] = in[(y + r) * cols + x];
        }
    }
    __syncthreads();

    x = blockIdx.y * kTile + threadIdx.x;   // transposed block offset
    y = blockIdx.x * kTile + threadIdx.y;
#pragma unroll
    for (int r = 0; r < kTile; r += kBlockRows) {
        if (x < rows && y + r < cols) {
            out[(y + r) * rows + x] = tile[threadIdx.x][threadIdx.y + r];
        }
    }
}

enum class TransposeVariant { Naive, Tiled };

void launch_transpose(const float* in, float* out, int rows, int cols, TransposeVariant variant,
                      cudaStream_t stream)
{
    const dim3 block(kTile, kBlockRows);
    const dim3 grid((cols + kTile - 1) / kTile, (rows + kTile - 1) / kTile);
    switch (variant) {
        case TransposeVariant::Naive:
            transpose_naive<<<grid, block, 0, stream>>>(in, out, rows, cols);
            break;
        case TransposeVariant::Tiled:
            transpose_tiled<<<grid, block, 0, stream>>>(in, out, rows, cols);
            break;
    }
}

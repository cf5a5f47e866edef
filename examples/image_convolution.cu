// image_convolution.cu
//
// 2D convolution of a single-channel float image with a filter of up to
// 15x15 taps held in __constant__ memory. `convolve2d_tiled` stages the
// input tile plus its apron in shared memory; it is launched with 10x10
// blocks "because 10 divides both 1920 and 1080". `convolve_rows` is the
// separable fast path for symmetric kernels with 32x8 blocks.
//
// Intentional pitfalls:
//   SL501 (line 100: dim3 block(10, 10) is 100 threads = 3.125 warps; the
//          last warp of every block runs 4 of 32 lanes)
//   SL506 (line 100: convolve2d_tiled is always launched with that literal
//          block but has no __launch_bounds__, so ptxas assumes 1024 threads)
// (look-alikes that are fine: runtime index into the __constant__ filter,
//  convolve_rows has __launch_bounds__ matching its 32x8 launch)

#include <cuda_runtime.h>

#define MAX_RADIUS 7
#define MAX_TAPS ((2 * MAX_RADIUS + 1) * (2 * MAX_RADIUS + 1))
#define TILE 10
#define ROWS_BX 32
#define ROWS_BY 8

__constant__ float c_filter[MAX_TAPS];
__constant__ float c_rowFilter[2 * MAX_RADIUS + 1];

__global__ void convolve2d_tiled(const float* __restrict__ src, float* __restrict__ dst,
                                 int width, int height, int radius)
{
    __shared__ float tile[TILE + 2 * MAX_RADIUS][TILE + 2 * MAX_RADIUS];

    const int x0 = blockIdx.x * TILE - radius;
    const int y0 = blockIdx.y * TILE - radius;
    const int span = TILE + 2 * radius;

    // Cooperative load with clamp-to-edge; each thread loads a strided set.
    for (int ty = threadIdx.y; ty < span; ty += TILE) {
        for (int tx = threadIdx.x; tx < span; tx += TILE) {
            const int x = min(max(x0 + tx, 0), width - 1);
            const int y = min(max(y0 + ty, 0), height - 1);
            tile[ty][tx] = src[y * width + x];
        }
    }
    __syncthreads();

    const int x = blockIdx.x * TILE + threadIdx.x;
    const int y = blockIdx.y * TILE + threadIdx.y;
    if (x >= width || y >= height) {
        return;
    }

    const int taps = 2 * radius + 1;
    float acc = 0.0f;
    for (int fy = 0; fy < taps; ++fy) {
        for (int fx = 0; fx < taps; ++fx) {
            acc = fmaf(tile[threadIdx.y + fy][threadIdx.x + fx], c_filter[fy * taps + fx], acc);
        }
    }
    dst[y * width + x] = acc;
}

__global__ void __launch_bounds__(ROWS_BX * ROWS_BY)
convolve_rows(const float* __restrict__ src, float* __restrict__ dst, int width, int height, int radius)
{
    __shared__ float row[ROWS_BY][ROWS_BX + 2 * MAX_RADIUS];

    const int x = blockIdx.x * ROWS_BX + threadIdx.x;
    const int y = min(blockIdx.y * ROWS_BY + threadIdx.y, height - 1);
    const int xBase = blockIdx.x * ROWS_BX - radius;

    for (int t = threadIdx.x; t < ROWS_BX + 2 * radius; t += ROWS_BX) {
        const int sx = min(max(xBase + t, 0), width - 1);
        row[threadIdx.y][t] = src[y * width + sx];
    }
    __syncthreads();

    if (x < width && blockIdx.y * ROWS_BY + threadIdx.y < height) {
        float acc = 0.0f;
        for (int k = -radius; k <= radius; ++k) {
            acc = fmaf(row[threadIdx.y][threadIdx.x + radius + k], c_rowFilter[k + MAX_RADIUS], acc);
        }
        dst[y * width + x] = acc;
    }
}

cudaError_t upload_filters(const float* filter2d, const float* rowFilter, int radius)
{
    const int taps = 2 * radius + 1;
    cudaError_t err = cudaMemcpyToSymbol(c_filter, filter2d, taps * taps * sizeof(float));
    if (err != cudaSuccess) {
        return err;
    }
    return cudaMemcpyToSymbol(c_rowFilter, rowFilter, (2 * MAX_RADIUS + 1) * sizeof(float));
}

void launch_convolve2d(const float* src, float* dst, int width, int height, int radius,
                       cudaStream_t stream)
{
    dim3 block(10, 10);
    dim3 grid((width + TILE - 1) / TILE, (height + TILE - 1) / TILE);
    convolve2d_tiled<<<grid, block, 0, stream>>>(src, dst, width, height, radius);
}

void launch_convolve_rows(const float* src, float* dst, int width, int height, int radius,
                          cudaStream_t stream)
{
    const dim3 block(ROWS_BX, ROWS_BY);
    const dim3 grid((width + ROWS_BX - 1) / ROWS_BX, (height + ROWS_BY - 1) / ROWS_BY);
    convolve_rows<<<grid, block, 0, stream>>>(src, dst, width, height, radius);
}

// softmax_fp16.cu
//
// Attention-score kernels in __half: `scale_bias_mask` applies the 1/sqrt(d)
// scale, an additive relative-position bias and a padding mask element-wise
// over a flattened [rows x cols] matrix; `softmax_warp_per_row` computes a
// numerically stable softmax with one warp per row, holding up to
// kMaxColsPerLane values per lane in registers.
//
// Intentional pitfalls:
//   SL201 (line 31: `idx / cols`, once per element of the grid-stride loop,
//          divides by a runtime kernel parameter (tens of instructions);
//          `idx % cols` on line 32 reuses its quotient, named in the report)
// (look-alikes that are fine: `/ kWarpSize` and `% kWarpSize` by constexpr
//  constants, float division, the register array `v` indexed only by the
//  counters of constant-trip unrolled loops)

#include <cuda_fp16.h>
#include <cuda_runtime.h>

constexpr int kWarpSize = 32;
constexpr int kMaxColsPerLane = 8;           // rows up to 256 columns
constexpr int kRowsPerBlock = 4;             // 4 warps = 128 threads

__global__ void __launch_bounds__(256)
scale_bias_mask(__half* __restrict__ scores, const __half* __restrict__ bias,
                const unsigned char* __restrict__ keyPadding, float scale,
                int rows, int cols)
{
    const int total = rows * cols;
    for (int idx = blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx += gridDim.x * blockDim.x) {
        const int row = idx / cols;
        const int col = idx % cols;
        float s = __half2float(scores[idx]) * scale + __half2float(bias[col]);
        if (keyPadding[col] != 0 || col > row) {
            s = -INFINITY;
        }
        scores[idx] = __float2half(s);
    }
}

__global__ void __launch_bounds__(kRowsPerBlock * kWarpSize)
softmax_warp_per_row(const __half* __restrict__ in, __half* __restrict__ out, int rows, int cols)
{
    const int lane = threadIdx.x % kWarpSize;
    const int warpInBlock = threadIdx.x / kWarpSize;
    const int row = blockIdx.x * kRowsPerBlock + warpInBlock;
    if (row >= rows) {
        return;   // whole warp leaves together; no block-level barrier follows
    }

    const __half* src = in + static_cast<size_t>(row) * cols;
    __half* dst = out + static_cast<size_t>(row) * cols;

    float v[kMaxColsPerLane];
    float m = -INFINITY;
#pragma unroll
    for (int i = 0; i < kMaxColsPerLane; ++i) {
        const int c = i * kWarpSize + lane;
        v[i] = c < cols ? __half2float(src[c]) : -INFINITY;
        m = fmaxf(m, v[i]);
    }
#pragma unroll
    for (int offset = kWarpSize / 2; offset > 0; offset >>= 1) {
        m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, offset));
    }

    float sum = 0.0f;
#pragma unroll
    for (int i = 0; i < kMaxColsPerLane; ++i) {
        v[i] = __expf(v[i] - m);
        sum += v[i];
    }
#pragma unroll
    for (int offset = kWarpSize / 2; offset > 0; offset >>= 1) {
        sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    }

    const float inv = 1.0f / sum;
#pragma unroll
    for (int i = 0; i < kMaxColsPerLane; ++i) {
        const int c = i * kWarpSize + lane;
        if (c < cols) {
            dst[c] = __float2half(v[i] * inv);
        }
    }
}

void launch_attention_softmax(__half* scores, const __half* bias, const unsigned char* keyPadding,
                              float scale, int rows, int cols, cudaStream_t stream)
{
    const int total = rows * cols;
    const int maskBlocks = min((total + 255) / 256, 4096);
    scale_bias_mask<<<maskBlocks, 256, 0, stream>>>(scores, bias, keyPadding, scale, rows, cols);

    // cols <= kMaxColsPerLane * 32 is checked by the caller.
    const int softmaxBlocks = (rows + kRowsPerBlock - 1) / kRowsPerBlock;
    softmax_warp_per_row<<<softmaxBlocks, kRowsPerBlock * kWarpSize, 0, stream>>>(scores, scores, rows, cols);
}

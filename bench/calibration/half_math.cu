// Half precision: __half scalars, __half2 packed math, conversions.
#include <cuda_fp16.h>

__global__ void half_axpy(__half a, const __half* x, __half* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = __hfma(a, x[i], y[i]);
}

__global__ void half2_axpy(__half2 a, const __half2* x, __half2* y, int n2) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n2) y[i] = __hfma2(a, x[i], y[i]);
}

__global__ void half_to_float(float* out, const __half* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = __half2float(in[i]);
}

__global__ void float_to_half_scaled(__half* out, const float* in, float scale, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = __float2half_rn(in[i] * scale);
}

__global__ void half_relu(__half* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = __hgt(x[i], __float2half(0.0f)) ? x[i] : __float2half(0.0f);
}

__global__ void half2_dot(float* out, const __half2* a, const __half2* b, int n2) {
    __half2 acc = __float2half2_rn(0.0f);
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n2; i += blockDim.x * gridDim.x)
        acc = __hfma2(a[i], b[i], acc);
    float2 f = __half22float2(acc);
    out[blockIdx.x * blockDim.x + threadIdx.x] = f.x + f.y;
}

// Mixed precision: half inputs, float accumulators.
template <int ACC>
__global__ void half_dot_mixed(float* out, const __half2* a, const __half2* b, int n2) {
    float acc[ACC] = {};
    int tid = blockIdx.x * blockDim.x + threadIdx.x, stride = blockDim.x * gridDim.x;
    for (int i = tid * ACC; i + ACC <= n2; i += stride * ACC) {
#pragma unroll
        for (int k = 0; k < ACC; ++k) {
            float2 x = __half22float2(a[i + k]), y = __half22float2(b[i + k]);
            acc[k] += x.x * y.x + x.y * y.y;
        }
    }
    float t = 0.f;
#pragma unroll
    for (int k = 0; k < ACC; ++k) t += acc[k];
    out[tid] = t;
}
template __global__ void half_dot_mixed<4>(float*, const __half2*, const __half2*, int);
template __global__ void half_dot_mixed<16>(float*, const __half2*, const __half2*, int);

__global__ void half_softmax_row(__half* out, const __half* in, int cols) {
    const __half* row = in + (size_t)blockIdx.x * cols;
    __half* orow = out + (size_t)blockIdx.x * cols;
    float m = -65504.0f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) m = fmaxf(m, __half2float(row[j]));
    for (int off = 16; off > 0; off /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, off));
    float s = 0.f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) s += __expf(__half2float(row[j]) - m);
    for (int off = 16; off > 0; off /= 2) s += __shfl_xor_sync(0xffffffffu, s, off);
    for (int j = threadIdx.x; j < cols; j += blockDim.x) orow[j] = __float2half(__expf(__half2float(row[j]) - m) / s);
}

__global__ void half2_outer_4x4(__half2* C, const __half2* A, const __half2* B, int K, int ldc) {
    __half2 acc[4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = __float2half2_rn(0.f);
    int r = (blockIdx.y * blockDim.y + threadIdx.y) * 4, c = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    for (int k = 0; k < K; ++k) {
        __half2 a[4], b[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) { a[i] = A[(r + i) * K + k]; b[i] = B[k * ldc + c + i]; }
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < 4; ++j) acc[i][j] = __hfma2(a[i], b[j], acc[i][j]);
    }
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) C[(r + i) * ldc + c + j] = acc[i][j];
}

__global__ void half_layernorm(__half* y, const __half* x, const __half* gamma, const __half* beta, int cols, float eps) {
    const __half* row = x + (size_t)blockIdx.x * cols;
    float s = 0.f, ss = 0.f;
    for (int j = threadIdx.x; j < cols; j += 32) { float v = __half2float(row[j]); s += v; ss += v * v; }
    for (int off = 16; off > 0; off /= 2) { s += __shfl_xor_sync(0xffffffffu, s, off); ss += __shfl_xor_sync(0xffffffffu, ss, off); }
    float mean = s / cols, inv = rsqrtf(ss / cols - mean * mean + eps);
    for (int j = threadIdx.x; j < cols; j += 32)
        y[(size_t)blockIdx.x * cols + j] = __float2half((__half2float(row[j]) - mean) * inv * __half2float(gamma[j]) + __half2float(beta[j]));
}

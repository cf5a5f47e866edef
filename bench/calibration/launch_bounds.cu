// The same register-hungry body under different __launch_bounds__: ptxas caps
// registers at 65536 / (threads * min blocks), rounded, and spills past it.

#define BODY                                                                    \
    float acc[8][8];                                                            \
    _Pragma("unroll") for (int i = 0; i < 8; ++i)                               \
        _Pragma("unroll") for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;         \
    int r0 = (blockIdx.y * 16 + threadIdx.x / 16) * 8;                          \
    int c0 = (blockIdx.x * 16 + threadIdx.x % 16) * 8;                          \
    for (int k = 0; k < K; ++k) {                                               \
        float a[8], b[8];                                                       \
        _Pragma("unroll") for (int i = 0; i < 8; ++i) a[i] = A[(r0 + i) * K + k]; \
        _Pragma("unroll") for (int j = 0; j < 8; ++j) b[j] = B[k * N + c0 + j]; \
        _Pragma("unroll") for (int i = 0; i < 8; ++i)                           \
            _Pragma("unroll") for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]); \
    }                                                                           \
    _Pragma("unroll") for (int i = 0; i < 8; ++i)                               \
        _Pragma("unroll") for (int j = 0; j < 8; ++j) C[(r0 + i) * N + c0 + j] = acc[i][j];

__global__ void lb_none(float* C, const float* A, const float* B, int N, int K) { BODY }
__global__ void __launch_bounds__(256) lb_256(float* C, const float* A, const float* B, int N, int K) { BODY }
__global__ void __launch_bounds__(256, 2) lb_256_2(float* C, const float* A, const float* B, int N, int K) { BODY }
__global__ void __launch_bounds__(256, 4) lb_256_4(float* C, const float* A, const float* B, int N, int K) { BODY }
__global__ void __launch_bounds__(512) lb_512(float* C, const float* A, const float* B, int N, int K) { BODY }
__global__ void __launch_bounds__(1024) lb_1024(float* C, const float* A, const float* B, int N, int K) { BODY }
__global__ void __launch_bounds__(128, 8) lb_128_8(float* C, const float* A, const float* B, int N, int K) { BODY }
__global__ void __launch_bounds__(64) lb_64(float* C, const float* A, const float* B, int N, int K) { BODY }

// A light kernel is unaffected by bounds.
__global__ void __launch_bounds__(1024) lb_light_1024(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i];
}

__global__ void __launch_bounds__(128) lb_accum_128(float* out, const float* in, int n) {
    float acc[24] = {};
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    for (int i = t * 24; i + 24 <= n; i += blockDim.x * gridDim.x * 24) {
#pragma unroll
        for (int k = 0; k < 24; ++k) acc[k] += in[i + k] * in[i + k];
    }
    float s = 0.f;
#pragma unroll
    for (int k = 0; k < 24; ++k) s += acc[k];
    out[t] = s;
}

__global__ void __launch_bounds__(768, 1) lb_accum_768(float* out, const float* in, int n) {
    float acc[24] = {};
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    for (int i = t * 24; i + 24 <= n; i += blockDim.x * gridDim.x * 24) {
#pragma unroll
        for (int k = 0; k < 24; ++k) acc[k] += in[i + k] * in[i + k];
    }
    float s = 0.f;
#pragma unroll
    for (int k = 0; k < 24; ++k) s += acc[k];
    out[t] = s;
}

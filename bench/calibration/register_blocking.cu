// Register blocking: each thread keeps a TM x TN tile of C in registers and
// accumulates outer products of a TM column of A and a TN row of B. This is
// the high end of the register range (up to ptxas's 255 and beyond: spills).

template <int TM, int TN>
__global__ void outer_product_tile(float* __restrict__ C, const float* __restrict__ A,
                                   const float* __restrict__ B, int M, int N, int K) {
    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;
    int row0 = (blockIdx.y * blockDim.y + threadIdx.y) * TM;
    int col0 = (blockIdx.x * blockDim.x + threadIdx.x) * TN;
    for (int k = 0; k < K; ++k) {
        float a[TM], b[TN];
#pragma unroll
        for (int i = 0; i < TM; ++i) a[i] = A[(row0 + i) * K + k];
#pragma unroll
        for (int j = 0; j < TN; ++j) b[j] = B[k * N + col0 + j];
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j)
            if (row0 + i < M && col0 + j < N) C[(row0 + i) * N + col0 + j] = acc[i][j];
}
template __global__ void outer_product_tile<1, 1>(float*, const float*, const float*, int, int, int);
template __global__ void outer_product_tile<2, 2>(float*, const float*, const float*, int, int, int);
template __global__ void outer_product_tile<4, 2>(float*, const float*, const float*, int, int, int);
template __global__ void outer_product_tile<4, 4>(float*, const float*, const float*, int, int, int);
template __global__ void outer_product_tile<8, 4>(float*, const float*, const float*, int, int, int);
template __global__ void outer_product_tile<6, 6>(float*, const float*, const float*, int, int, int);
template __global__ void outer_product_tile<8, 8>(float*, const float*, const float*, int, int, int);
template __global__ void outer_product_tile<12, 8>(float*, const float*, const float*, int, int, int);
template __global__ void outer_product_tile<10, 10>(float*, const float*, const float*, int, int, int);
template __global__ void outer_product_tile<16, 8>(float*, const float*, const float*, int, int, int);
template __global__ void outer_product_tile<12, 12>(float*, const float*, const float*, int, int, int);
template __global__ void outer_product_tile<16, 12>(float*, const float*, const float*, int, int, int);
template __global__ void outer_product_tile<16, 16>(float*, const float*, const float*, int, int, int);

// Same idea with float4 loads of B and double accumulators.
template <int TM>
__global__ void outer_product_f4(float4* __restrict__ C, const float* __restrict__ A,
                                 const float4* __restrict__ B, int N4, int K) {
    float4 acc[TM];
#pragma unroll
    for (int i = 0; i < TM; ++i) acc[i] = make_float4(0.f, 0.f, 0.f, 0.f);
    int row0 = (blockIdx.y * blockDim.y + threadIdx.y) * TM;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = 0; k < K; ++k) {
        float4 b = B[k * N4 + col];
#pragma unroll
        for (int i = 0; i < TM; ++i) {
            float a = A[(row0 + i) * K + k];
            acc[i].x = fmaf(a, b.x, acc[i].x);
            acc[i].y = fmaf(a, b.y, acc[i].y);
            acc[i].z = fmaf(a, b.z, acc[i].z);
            acc[i].w = fmaf(a, b.w, acc[i].w);
        }
    }
#pragma unroll
    for (int i = 0; i < TM; ++i) C[(row0 + i) * N4 + col] = acc[i];
}
template __global__ void outer_product_f4<2>(float4*, const float*, const float4*, int, int);
template __global__ void outer_product_f4<8>(float4*, const float*, const float4*, int, int);
template __global__ void outer_product_f4<16>(float4*, const float*, const float4*, int, int);
template __global__ void outer_product_f4<32>(float4*, const float*, const float4*, int, int);

template <int T>
__global__ void outer_product_f64(double* C, const double* A, const double* B, int N, int K) {
    double acc[T][T];
#pragma unroll
    for (int i = 0; i < T; ++i)
#pragma unroll
        for (int j = 0; j < T; ++j) acc[i][j] = 0.0;
    int row0 = (blockIdx.y * blockDim.y + threadIdx.y) * T;
    int col0 = (blockIdx.x * blockDim.x + threadIdx.x) * T;
    for (int k = 0; k < K; ++k) {
        double a[T], b[T];
#pragma unroll
        for (int i = 0; i < T; ++i) { a[i] = A[(row0 + i) * K + k]; b[i] = B[k * N + col0 + i]; }
#pragma unroll
        for (int i = 0; i < T; ++i)
#pragma unroll
            for (int j = 0; j < T; ++j) acc[i][j] = fma(a[i], b[j], acc[i][j]);
    }
#pragma unroll
    for (int i = 0; i < T; ++i)
#pragma unroll
        for (int j = 0; j < T; ++j) C[(row0 + i) * N + col0 + j] = acc[i][j];
}
template __global__ void outer_product_f64<2>(double*, const double*, const double*, int, int);
template __global__ void outer_product_f64<4>(double*, const double*, const double*, int, int);
template __global__ void outer_product_f64<6>(double*, const double*, const double*, int, int);
template __global__ void outer_product_f64<8>(double*, const double*, const double*, int, int);

// A sweep of live-value counts between the common kernels and ptxas's 255
// limit: an N-wide register queue of running sums, and outer products whose
// tile shapes fill the 100-250 register band.

// Keeps N partial sums live across a runtime loop; each step rotates them.
template <int N>
__global__ void rotating_sums(float* out, const float* __restrict__ in, int steps) {
    float s[N];
    int t = blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll
    for (int k = 0; k < N; ++k) s[k] = in[t * N + k];
    for (int step = 0; step < steps; ++step) {
        float x = in[(step * gridDim.x * blockDim.x + t) & 0xfffff];
#pragma unroll
        for (int k = 0; k < N; ++k) s[k] = fmaf(s[k], x, s[(k + 1) % N]);
    }
#pragma unroll
    for (int k = 0; k < N; ++k) out[t * N + k] = s[k];
}
template __global__ void rotating_sums<8>(float*, const float*, int);
template __global__ void rotating_sums<24>(float*, const float*, int);
template __global__ void rotating_sums<48>(float*, const float*, int);
template __global__ void rotating_sums<64>(float*, const float*, int);
template __global__ void rotating_sums<96>(float*, const float*, int);
template __global__ void rotating_sums<128>(float*, const float*, int);
template __global__ void rotating_sums<160>(float*, const float*, int);
template __global__ void rotating_sums<192>(float*, const float*, int);
template __global__ void rotating_sums<224>(float*, const float*, int);

template <int TM, int TN>
__global__ void outer_product_prefetch(float* __restrict__ C, const float* __restrict__ A,
                                       const float* __restrict__ B, int N, int K) {
    float acc[TM][TN] = {};
    int r0 = (blockIdx.y * blockDim.y + threadIdx.y) * TM;
    int c0 = (blockIdx.x * blockDim.x + threadIdx.x) * TN;
    float a[TM], b[TN];
#pragma unroll
    for (int i = 0; i < TM; ++i) a[i] = A[(r0 + i) * K];
#pragma unroll
    for (int j = 0; j < TN; ++j) b[j] = B[c0 + j];
    for (int k = 0; k < K; ++k) {
        float an[TM], bn[TN];
        int kn = k + 1 < K ? k + 1 : k;
#pragma unroll
        for (int i = 0; i < TM; ++i) an[i] = A[(r0 + i) * K + kn];
#pragma unroll
        for (int j = 0; j < TN; ++j) bn[j] = B[kn * N + c0 + j];
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
#pragma unroll
        for (int i = 0; i < TM; ++i) a[i] = an[i];
#pragma unroll
        for (int j = 0; j < TN; ++j) b[j] = bn[j];
    }
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) C[(r0 + i) * N + c0 + j] = acc[i][j];
}
template __global__ void outer_product_prefetch<4, 4>(float*, const float*, const float*, int, int);
template __global__ void outer_product_prefetch<8, 8>(float*, const float*, const float*, int, int);
template __global__ void outer_product_prefetch<9, 9>(float*, const float*, const float*, int, int);
template __global__ void outer_product_prefetch<10, 10>(float*, const float*, const float*, int, int);
template __global__ void outer_product_prefetch<12, 10>(float*, const float*, const float*, int, int);
template __global__ void outer_product_prefetch<12, 12>(float*, const float*, const float*, int, int);
template __global__ void outer_product_prefetch<14, 12>(float*, const float*, const float*, int, int);
template __global__ void outer_product_prefetch<14, 14>(float*, const float*, const float*, int, int);

template <int T>
__global__ void outer_product_f64_square(double* C, const double* A, const double* B, int N, int K) {
    double acc[T][T] = {};
    int r0 = (blockIdx.y * blockDim.y + threadIdx.y) * T, c0 = (blockIdx.x * blockDim.x + threadIdx.x) * T;
    for (int k = 0; k < K; ++k) {
        double a[T], b[T];
#pragma unroll
        for (int i = 0; i < T; ++i) { a[i] = A[(r0 + i) * K + k]; b[i] = B[k * N + c0 + i]; }
#pragma unroll
        for (int i = 0; i < T; ++i)
#pragma unroll
            for (int j = 0; j < T; ++j) acc[i][j] = fma(a[i], b[j], acc[i][j]);
    }
#pragma unroll
    for (int i = 0; i < T; ++i)
#pragma unroll
        for (int j = 0; j < T; ++j) C[(r0 + i) * N + c0 + j] = acc[i][j];
}
template __global__ void outer_product_f64_square<3>(double*, const double*, const double*, int, int);
template __global__ void outer_product_f64_square<5>(double*, const double*, const double*, int, int);
template __global__ void outer_product_f64_square<7>(double*, const double*, const double*, int, int);
template __global__ void outer_product_f64_square<9>(double*, const double*, const double*, int, int);

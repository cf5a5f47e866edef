// Shared-memory tiled matrix multiply, from the textbook tile to tiles with
// per-thread register blocking.

template <int TILE>
__global__ void gemm_tiled(float* C, const float* A, const float* B, int M, int N, int K) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < K; t += TILE) {
        As[threadIdx.y][threadIdx.x] = (row < M && t + threadIdx.x < K) ? A[row * K + t + threadIdx.x] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = (col < N && t + threadIdx.y < K) ? B[(t + threadIdx.y) * N + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) acc = fmaf(As[threadIdx.y][k], Bs[k][threadIdx.x], acc);
        __syncthreads();
    }
    if (row < M && col < N) C[row * N + col] = acc;
}
template __global__ void gemm_tiled<8>(float*, const float*, const float*, int, int, int);
template __global__ void gemm_tiled<16>(float*, const float*, const float*, int, int, int);
template __global__ void gemm_tiled<32>(float*, const float*, const float*, int, int, int);

__global__ void gemm_naive(float* C, const float* A, const float* B, int M, int N, int K) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = acc;
}

// 64x64 block tile, 16x16 threads, 4x4 results per thread (BK = 8).
template <int BM, int BN, int BK, int TM, int TN>
__global__ void gemm_blocked(float* __restrict__ C, const float* __restrict__ A,
                             const float* __restrict__ B, int M, int N, int K) {
    __shared__ float As[BK][BM];
    __shared__ float Bs[BK][BN];
    const int tx = threadIdx.x % (BN / TN);
    const int ty = threadIdx.x / (BN / TN);
    const int nthreads = (BM / TM) * (BN / TN);
    float acc[TM][TN] = {};
    const float* Ab = A + blockIdx.y * BM * K;
    const float* Bb = B + blockIdx.x * BN;
    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int i = threadIdx.x; i < BM * BK; i += nthreads) {
            int r = i / BK, c = i % BK;
            As[c][r] = Ab[r * K + k0 + c];
        }
        for (int i = threadIdx.x; i < BK * BN; i += nthreads) {
            int r = i / BN, c = i % BN;
            Bs[r][c] = Bb[(k0 + r) * N + c];
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a[TM], b[TN];
#pragma unroll
            for (int i = 0; i < TM; ++i) a[i] = As[k][ty * TM + i];
#pragma unroll
            for (int j = 0; j < TN; ++j) b[j] = Bs[k][tx * TN + j];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            int r = blockIdx.y * BM + ty * TM + i, c = blockIdx.x * BN + tx * TN + j;
            if (r < M && c < N) C[r * N + c] = acc[i][j];
        }
}
template __global__ void gemm_blocked<64, 64, 8, 4, 4>(float*, const float*, const float*, int, int, int);
template __global__ void gemm_blocked<128, 128, 8, 8, 8>(float*, const float*, const float*, int, int, int);
template __global__ void gemm_blocked<64, 64, 16, 8, 4>(float*, const float*, const float*, int, int, int);
template __global__ void gemm_blocked<128, 64, 8, 8, 4>(float*, const float*, const float*, int, int, int);

// Matrix-vector products.
__global__ void gemv_row(float* y, const float* A, const float* x, int M, int N) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M) return;
    float acc = 0.0f;
    for (int j = 0; j < N; ++j) acc += A[row * N + j] * x[j];
    y[row] = acc;
}

__global__ void gemv_warp_per_row(float* y, const float* A, const float* x, int M, int N) {
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    if (warp >= M) return;
    float acc = 0.0f;
    for (int j = lane; j < N; j += 32) acc += A[warp * N + j] * x[j];
    for (int off = 16; off > 0; off /= 2) acc += __shfl_down_sync(0xffffffffu, acc, off);
    if (lane == 0) y[warp] = acc;
}

// sgemm_tiled.cu
//
// Single-precision GEMM, C = alpha * A * B + beta * C, row-major.
// Classic shared-memory blocking with register tiling: each 256-thread block
// computes a BM x BN tile of C, each thread a TM x TN micro-tile held in
// registers. Tile sizes are template parameters of the kernel.
//
// Intentional pitfalls: none
// (look-alikes a precise linter must accept: the thread-private `acc`, `a`
//  and `b` arrays are only indexed by counters of constant-trip unrolled
//  loops; `/` and `%` only by template parameters; launch grids round up)

#include <cuda_runtime.h>

template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
sgemm_tiled(int M, int N, int K, float alpha,
            const float* __restrict__ A, const float* __restrict__ B,
            float beta, float* __restrict__ C)
{
    constexpr int THREADS = (BM / TM) * (BN / TN);
    static_assert(THREADS % 32 == 0, "block must be whole warps");

    __shared__ float As[BK][BM];   // stored transposed: As[k][m]
    __shared__ float Bs[BK][BN];

    const int tid = threadIdx.x;
    const int tx = tid % (BN / TN);
    const int ty = tid / (BN / TN);
    const int blockRow = blockIdx.y * BM;
    const int blockCol = blockIdx.x * BN;

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i) {
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            acc[i][j] = 0.0f;
        }
    }

    for (int k0 = 0; k0 < K; k0 += BK) {
        // Cooperative, coalesced loads of the A and B tiles.
        for (int e = tid; e < BM * BK; e += THREADS) {
            const int r = e / BK;
            const int c = e % BK;
            const int gr = blockRow + r;
            const int gc = k0 + c;
            As[c][r] = (gr < M && gc < K) ? A[gr * K + gc] : 0.0f;
        }
        for (int e = tid; e < BK * BN; e += THREADS) {
            const int r = e / BN;
            const int c = e % BN;
            const int gr = k0 + r;
            const int gc = blockCol + c;
            Bs[r][c] = (gr < K && gc < N) ? B[gr * N + gc] : 0.0f;
        }
        __syncthreads();

#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a[TM];
            float b[TN];
#pragma unroll
            for (int i = 0; i < TM; ++i) {
                a[i] = As[k][ty * TM + i];
            }
#pragma unroll
            for (int j = 0; j < TN; ++j) {
                b[j] = Bs[k][tx * TN + j];
            }
#pragma unroll
            for (int i = 0; i < TM; ++i) {
#pragma unroll
                for (int j = 0; j < TN; ++j) {
                    acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
                }
            }
        }
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int row = blockRow + ty * TM + i;
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const int col = blockCol + tx * TN + j;
            if (row < M && col < N) {
                float* dst = &C[row * N + col];
                *dst = alpha * acc[i][j] + (beta != 0.0f ? beta * *dst : 0.0f);
            }
        }
    }
}

void launch_sgemm(int M, int N, int K, float alpha, const float* A, const float* B,
                  float beta, float* C, cudaStream_t stream)
{
    // 64x64 tiles, 4x4 per thread: ~58 registers, four blocks per SM on sm_80.
    // (128x128 with 8x8 per thread needs ~115 registers and halves occupancy.)
    constexpr int BM = 64, BN = 64, BK = 8, TM = 4, TN = 4;
    const dim3 block((BM / TM) * (BN / TN));
    const dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
    sgemm_tiled<BM, BN, BK, TM, TN><<<grid, block, 0, stream>>>(M, N, K, alpha, A, B, beta, C);
}

// Prefix sums and sorting networks in shared memory.

__global__ void scan_hillis_steele(float* out, const float* in, int n) {
    extern __shared__ float tmp[];
    int t = threadIdx.x;
    int pout = 0, pin = 1;
    tmp[t] = (t > 0 && t - 1 < n) ? in[t - 1] : 0.f;
    __syncthreads();
    for (int off = 1; off < n; off *= 2) {
        pout = 1 - pout;
        pin = 1 - pout;
        tmp[pout * n + t] = tmp[pin * n + t] + (t >= off ? tmp[pin * n + t - off] : 0.f);
        __syncthreads();
    }
    if (t < n) out[t] = tmp[pout * n + t];
}

__global__ void scan_blelloch(float* data, int n) {
    extern __shared__ float s[];
    int t = threadIdx.x;
    s[2 * t] = data[2 * t];
    s[2 * t + 1] = data[2 * t + 1];
    int offset = 1;
    for (int d = n >> 1; d > 0; d >>= 1) {
        __syncthreads();
        if (t < d) { int ai = offset * (2 * t + 1) - 1, bi = offset * (2 * t + 2) - 1; s[bi] += s[ai]; }
        offset *= 2;
    }
    if (t == 0) s[n - 1] = 0;
    for (int d = 1; d < n; d *= 2) {
        offset >>= 1;
        __syncthreads();
        if (t < d) {
            int ai = offset * (2 * t + 1) - 1, bi = offset * (2 * t + 2) - 1;
            float x = s[ai]; s[ai] = s[bi]; s[bi] += x;
        }
    }
    __syncthreads();
    data[2 * t] = s[2 * t];
    data[2 * t + 1] = s[2 * t + 1];
}

__global__ void scan_block_warp_shuffle(int* out, const int* in, int* block_sums, int n) {
    __shared__ int warp_totals[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int v = i < n ? in[i] : 0;
    for (int off = 1; off < 32; off <<= 1) { int t = __shfl_up_sync(0xffffffffu, v, off); if (lane >= off) v += t; }
    if (lane == 31) warp_totals[warp] = v;
    __syncthreads();
    if (warp == 0) {
        int w = lane < blockDim.x / 32 ? warp_totals[lane] : 0;
        for (int off = 1; off < 32; off <<= 1) { int t = __shfl_up_sync(0xffffffffu, w, off); if (lane >= off) w += t; }
        warp_totals[lane] = w;
    }
    __syncthreads();
    if (warp > 0) v += warp_totals[warp - 1];
    if (i < n) out[i] = v;
    if (threadIdx.x == blockDim.x - 1) block_sums[blockIdx.x] = v;
}

__global__ void scan_add_block_offsets(int* data, const int* offsets, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (blockIdx.x > 0 && i < n) data[i] += offsets[blockIdx.x - 1];
}

template <int N>
__global__ void bitonic_sort_shared(float* data) {
    __shared__ float s[N];
    float* base = data + (size_t)blockIdx.x * N;
    for (int i = threadIdx.x; i < N; i += blockDim.x) s[i] = base[i];
    __syncthreads();
    for (int k = 2; k <= N; k <<= 1)
        for (int j = k >> 1; j > 0; j >>= 1) {
            for (int i = threadIdx.x; i < N; i += blockDim.x) {
                int ixj = i ^ j;
                if (ixj > i) {
                    bool up = (i & k) == 0;
                    float a = s[i], b = s[ixj];
                    if ((a > b) == up) { s[i] = b; s[ixj] = a; }
                }
            }
            __syncthreads();
        }
    for (int i = threadIdx.x; i < N; i += blockDim.x) base[i] = s[i];
}
template __global__ void bitonic_sort_shared<512>(float*);
template __global__ void bitonic_sort_shared<2048>(float*);

__global__ void odd_even_sort_step(int* data, int n, int phase) {
    int i = 2 * (blockIdx.x * blockDim.x + threadIdx.x) + (phase & 1);
    if (i + 1 < n && data[i] > data[i + 1]) { int t = data[i]; data[i] = data[i + 1]; data[i + 1] = t; }
}

__global__ void radix_digit_count(unsigned* counts, const unsigned* keys, int shift, int n) {
    __shared__ unsigned local[16];
    if (threadIdx.x < 16) local[threadIdx.x] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&local[(keys[i] >> shift) & 15], 1u);
    __syncthreads();
    if (threadIdx.x < 16) counts[blockIdx.x * 16 + threadIdx.x] = local[threadIdx.x];
}

// Sorting network over 8 values held in registers.
__global__ void sort8_registers(float* data) {
    float v[8];
    float* p = data + (size_t)(blockIdx.x * blockDim.x + threadIdx.x) * 8;
#pragma unroll
    for (int k = 0; k < 8; ++k) v[k] = p[k];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = i & 1; j < 7; j += 2) {
            float a = fminf(v[j], v[j + 1]), b = fmaxf(v[j], v[j + 1]);
            v[j] = a; v[j + 1] = b;
        }
#pragma unroll
    for (int k = 0; k < 8; ++k) p[k] = v[k];
}

// Atomic operations on global and shared memory.

__global__ void histogram_global(unsigned* bins, const unsigned char* data, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&bins[data[i]], 1u);
}

__global__ void histogram_shared(unsigned* bins, const unsigned char* data, int n) {
    __shared__ unsigned local[256];
    for (int b = threadIdx.x; b < 256; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&local[data[i]], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += blockDim.x) atomicAdd(&bins[b], local[b]);
}

__global__ void atomic_sum_float(float* total, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(total, x[i]);
}

__global__ void atomic_sum_double(double* total, const double* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(total, x[i]);
}

__device__ float atomic_max_float(float* addr, float v) {
    int* a = (int*)addr;
    int old = *a, assumed;
    do {
        assumed = old;
        if (__int_as_float(assumed) >= v) break;
        old = atomicCAS(a, assumed, __float_as_int(v));
    } while (assumed != old);
    return __int_as_float(old);
}

__global__ void atomic_max_cas(float* result, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomic_max_float(result, x[i]);
}

__global__ void stream_compact_atomic(int* out, int* count, const int* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && in[i] != 0) out[atomicAdd(count, 1)] = in[i];
}

__global__ void stream_compact_warp_aggregated(int* out, int* count, const int* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    bool keep = i < n && in[i] != 0;
    unsigned mask = __ballot_sync(0xffffffffu, keep);
    int lane = threadIdx.x & 31;
    int leader = __ffs(mask) - 1;
    int base = 0;
    if (lane == leader) base = atomicAdd(count, __popc(mask));
    base = __shfl_sync(0xffffffffu, base, leader < 0 ? 0 : leader);
    if (keep) out[base + __popc(mask & ((1u << lane) - 1))] = in[i];
}

__global__ void atomic_exch_lock(int* lock, int* counter) {
    if (threadIdx.x == 0) {
        while (atomicCAS(lock, 0, 1) != 0) {}
        __threadfence();
        *counter += 1;
        __threadfence();
        atomicExch(lock, 0);
    }
}

__global__ void scatter_add_2d(float* grid, const float2* pos, const float* w, int n, int width, int height) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float2 p = pos[i];
    int x = (int)p.x, y = (int)p.y;
    float fx = p.x - x, fy = p.y - y;
    if (x < 0 || y < 0 || x + 1 >= width || y + 1 >= height) return;
    atomicAdd(&grid[y * width + x], w[i] * (1 - fx) * (1 - fy));
    atomicAdd(&grid[y * width + x + 1], w[i] * fx * (1 - fy));
    atomicAdd(&grid[(y + 1) * width + x], w[i] * (1 - fx) * fy);
    atomicAdd(&grid[(y + 1) * width + x + 1], w[i] * fx * fy);
}

__global__ void atomic_min_max_int(int* mn, int* mx, const int* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { atomicMin(mn, x[i]); atomicMax(mx, x[i]); }
}

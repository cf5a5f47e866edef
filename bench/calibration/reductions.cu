// Block reductions through shared memory: the classic sequence of versions.

template <int BLOCK>
__global__ void reduce_interleaved(float* out, const float* in, int n) {
    __shared__ float s[BLOCK];
    int i = blockIdx.x * BLOCK + threadIdx.x;
    s[threadIdx.x] = i < n ? in[i] : 0.f;
    __syncthreads();
    for (int stride = 1; stride < BLOCK; stride *= 2) {
        if (threadIdx.x % (2 * stride) == 0) s[threadIdx.x] += s[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}
template __global__ void reduce_interleaved<256>(float*, const float*, int);

template <int BLOCK>
__global__ void reduce_sequential(float* out, const float* in, int n) {
    __shared__ float s[BLOCK];
    int i = blockIdx.x * BLOCK * 2 + threadIdx.x;
    float v = i < n ? in[i] : 0.f;
    if (i + BLOCK < n) v += in[i + BLOCK];
    s[threadIdx.x] = v;
    __syncthreads();
    for (int stride = BLOCK / 2; stride > 32; stride >>= 1) {
        if (threadIdx.x < stride) s[threadIdx.x] = v = v + s[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x < 32) {
        if (BLOCK >= 64) v += s[threadIdx.x + 32];
        for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    }
    if (threadIdx.x == 0) out[blockIdx.x] = v;
}
template __global__ void reduce_sequential<128>(float*, const float*, int);
template __global__ void reduce_sequential<512>(float*, const float*, int);

__global__ void reduce_grid_stride_sum(double* out, const float* in, int n) {
    __shared__ double s[256];
    double v = 0.0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) v += in[i];
    s[threadIdx.x] = v;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) s[threadIdx.x] += s[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}

__global__ void reduce_minmax(float2* out, const float* in, int n) {
    __shared__ float smin[256], smax[256];
    float lo = 3.4e38f, hi = -3.4e38f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        lo = fminf(lo, in[i]);
        hi = fmaxf(hi, in[i]);
    }
    smin[threadIdx.x] = lo;
    smax[threadIdx.x] = hi;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) {
            smin[threadIdx.x] = fminf(smin[threadIdx.x], smin[threadIdx.x + stride]);
            smax[threadIdx.x] = fmaxf(smax[threadIdx.x], smax[threadIdx.x + stride]);
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = make_float2(smin[0], smax[0]);
}

__global__ void reduce_rows_softmax(float* out, const float* in, int cols) {
    extern __shared__ float buf[];
    const float* row = in + (size_t)blockIdx.x * cols;
    float m = -3.4e38f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) m = fmaxf(m, row[j]);
    buf[threadIdx.x] = m;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) buf[threadIdx.x] = fmaxf(buf[threadIdx.x], buf[threadIdx.x + s]);
        __syncthreads();
    }
    m = buf[0];
    __syncthreads();
    float sum = 0.f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) sum += expf(row[j] - m);
    buf[threadIdx.x] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) buf[threadIdx.x] += buf[threadIdx.x + s];
        __syncthreads();
    }
    sum = buf[0];
    for (int j = threadIdx.x; j < cols; j += blockDim.x) out[(size_t)blockIdx.x * cols + j] = expf(row[j] - m) / sum;
}

__global__ void reduce_count_if(int* out, const float* in, float lo, float hi, int n) {
    __shared__ int count;
    if (threadIdx.x == 0) count = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && in[i] >= lo && in[i] < hi) atomicAdd(&count, 1);
    __syncthreads();
    if (threadIdx.x == 0) out[blockIdx.x] = count;
}

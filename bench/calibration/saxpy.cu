// saxpy and its relatives: scalar, vector, grid-stride, integer and double.

__global__ void saxpy(float a, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void saxpy_grid_stride(float a, const float* __restrict__ x, float* __restrict__ y, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = a * x[i] + y[i];
}

__global__ void saxpy_alpha_ptr(const float* alpha, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = *alpha * x[i] + y[i];
}

__global__ void saxpy_float2(float a, const float2* x, float2* y, int n2) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n2) {
        float2 xv = x[i], yv = y[i];
        y[i] = make_float2(a * xv.x + yv.x, a * xv.y + yv.y);
    }
}

__global__ void saxpy_float4(float a, const float4* __restrict__ x, float4* __restrict__ y, int n4) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 xv = x[i], yv = y[i];
        yv.x = fmaf(a, xv.x, yv.x);
        yv.y = fmaf(a, xv.y, yv.y);
        yv.z = fmaf(a, xv.z, yv.z);
        yv.w = fmaf(a, xv.w, yv.w);
        y[i] = yv;
    }
}

__global__ void saxpy_4_per_thread(float a, const float* x, float* y, int n) {
    int base = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        int i = base + k;
        if (i < n) y[i] = a * x[i] + y[i];
    }
}

__global__ void daxpy(double a, const double* x, double* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void iaxpy(int a, const int* x, int* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void saxpby(float a, const float* x, float b, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + b * y[i];
}

__global__ void saxpy_strided(float a, const float* x, int incx, float* y, int incy, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i * incy] = a * x[i * incx] + y[i * incy];
}

__global__ void saxpy_batched(float a, const float* const* xs, float* const* ys, int n, int batch) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int b = blockIdx.y;
    if (i < n && b < batch) ys[b][i] = a * xs[b][i] + ys[b][i];
}

// Independent accumulators with #pragma unroll and float4 loads: register use
// grows with the number of accumulators kept live.

template <int ACC>
__global__ void sum_accumulators(float* out, const float* __restrict__ in, int n) {
    float acc[ACC];
#pragma unroll
    for (int k = 0; k < ACC; ++k) acc[k] = 0.0f;
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    int stride = blockDim.x * gridDim.x;
    for (int i = tid * ACC; i + ACC <= n; i += stride * ACC) {
#pragma unroll
        for (int k = 0; k < ACC; ++k) acc[k] += in[i + k];
    }
    float total = 0.0f;
#pragma unroll
    for (int k = 0; k < ACC; ++k) total += acc[k];
    out[tid] = total;
}
template __global__ void sum_accumulators<1>(float*, const float*, int);
template __global__ void sum_accumulators<2>(float*, const float*, int);
template __global__ void sum_accumulators<4>(float*, const float*, int);
template __global__ void sum_accumulators<8>(float*, const float*, int);
template __global__ void sum_accumulators<16>(float*, const float*, int);
template __global__ void sum_accumulators<32>(float*, const float*, int);

template <int VEC>
__global__ void dot_float4(float* out, const float4* __restrict__ a, const float4* __restrict__ b, int n4) {
    float4 acc[VEC];
#pragma unroll
    for (int v = 0; v < VEC; ++v) acc[v] = make_float4(0.f, 0.f, 0.f, 0.f);
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    int stride = blockDim.x * gridDim.x;
    for (int i = tid * VEC; i + VEC <= n4; i += stride * VEC) {
#pragma unroll
        for (int v = 0; v < VEC; ++v) {
            float4 x = a[i + v], y = b[i + v];
            acc[v].x = fmaf(x.x, y.x, acc[v].x);
            acc[v].y = fmaf(x.y, y.y, acc[v].y);
            acc[v].z = fmaf(x.z, y.z, acc[v].z);
            acc[v].w = fmaf(x.w, y.w, acc[v].w);
        }
    }
    float total = 0.f;
#pragma unroll
    for (int v = 0; v < VEC; ++v) total += acc[v].x + acc[v].y + acc[v].z + acc[v].w;
    out[tid] = total;
}
template __global__ void dot_float4<1>(float*, const float4*, const float4*, int);
template __global__ void dot_float4<2>(float*, const float4*, const float4*, int);
template __global__ void dot_float4<4>(float*, const float4*, const float4*, int);
template __global__ void dot_float4<8>(float*, const float4*, const float4*, int);
template __global__ void dot_float4<16>(float*, const float4*, const float4*, int);

// Polynomial evaluation, fully unrolled, with the coefficients in registers.
template <int DEGREE>
__global__ void horner_unrolled(float* y, const float* x, const float* coeffs, int n) {
    float c[DEGREE + 1];
#pragma unroll
    for (int k = 0; k <= DEGREE; ++k) c[k] = coeffs[k];
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        float v = x[i];
        float r = c[DEGREE];
#pragma unroll
        for (int k = DEGREE - 1; k >= 0; --k) r = fmaf(r, v, c[k]);
        y[i] = r;
    }
}
template __global__ void horner_unrolled<4>(float*, const float*, const float*, int);
template __global__ void horner_unrolled<16>(float*, const float*, const float*, int);
template __global__ void horner_unrolled<64>(float*, const float*, const float*, int);
template __global__ void horner_unrolled<128>(float*, const float*, const float*, int);

// Double precision: 64-bit registers come in pairs.

__global__ void dscale(double* x, double s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= s;
}

__global__ void ddot_partial(double* out, const double* a, const double* b, int n) {
    double acc = 0.0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) acc += a[i] * b[i];
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

__global__ void dsqrt_exp(double* y, const double* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = sqrt(fabs(x[i])) + exp(-x[i]);
}

__global__ void dnewton_rsqrt(double* y, const double* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double v = x[i], r = (double)rsqrtf((float)v);
#pragma unroll
    for (int k = 0; k < 3; ++k) r = r * (1.5 - 0.5 * v * r * r);
    y[i] = r;
}

__global__ void dhorner_8(double* y, const double* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double v = x[i];
    y[i] = ((((((((1.0 / 40320) * v + 1.0 / 5040) * v + 1.0 / 720) * v + 1.0 / 120) * v + 1.0 / 24) * v + 1.0 / 6) * v + 0.5) * v + 1.0) * v + 1.0;
}

__global__ void dcomplex_mul(double2* c, const double2* a, const double2* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        double2 x = a[i], y = b[i];
        c[i] = make_double2(x.x * y.x - x.y * y.y, x.x * y.y + x.y * y.x);
    }
}

__global__ void dkahan_sum(double* out, const double* x, int n) {
    double sum = 0.0, comp = 0.0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        double y = x[i] - comp;
        double t = sum + y;
        comp = (t - sum) - y;
        sum = t;
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

template <int ACC>
__global__ void ddot_unrolled(double* out, const double* a, const double* b, int n) {
    double acc[ACC] = {};
    int tid = blockIdx.x * blockDim.x + threadIdx.x, stride = blockDim.x * gridDim.x;
    for (int i = tid * ACC; i + ACC <= n; i += stride * ACC) {
#pragma unroll
        for (int k = 0; k < ACC; ++k) acc[k] = fma(a[i + k], b[i + k], acc[k]);
    }
    double t = 0.0;
#pragma unroll
    for (int k = 0; k < ACC; ++k) t += acc[k];
    out[tid] = t;
}
template __global__ void ddot_unrolled<4>(double*, const double*, const double*, int);
template __global__ void ddot_unrolled<16>(double*, const double*, const double*, int);
template __global__ void ddot_unrolled<48>(double*, const double*, const double*, int);

__global__ void dmatvec_3x3(double3* out, const double* m, const double3* v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const double* a = m + 9 * i;
    double3 x = v[i];
    out[i] = make_double3(a[0] * x.x + a[1] * x.y + a[2] * x.z, a[3] * x.x + a[4] * x.y + a[5] * x.z,
                          a[6] * x.x + a[7] * x.y + a[8] * x.z);
}

__global__ void dlgamma_erf(double* y, const double* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = lgamma(x[i]) + erf(x[i]) + log1p(x[i]);
}

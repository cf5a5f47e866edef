// Transcendental-heavy kernels: libdevice expansions cost registers.

__global__ void math_sin_cos(float* s, float* c, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) sincosf(x[i], &s[i], &c[i]);
}

__global__ void math_fast_sin_cos(float* s, float* c, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { s[i] = __sinf(x[i]); c[i] = __cosf(x[i]); }
}

__global__ void math_pow(float* y, const float* a, const float* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = powf(a[i], b[i]);
}

__global__ void math_erf_lgamma(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = erff(x[i]) + lgammaf(x[i]) + erfcinvf(0.5f + 0.25f * tanhf(x[i]));
}

__global__ void math_atan2_hypot(float* y, const float2* v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = atan2f(v[i].y, v[i].x) * hypotf(v[i].x, v[i].y);
}

__global__ void math_softplus(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = log1pf(expf(-fabsf(x[i]))) + fmaxf(x[i], 0.0f);
}

__global__ void math_black_scholes(float* call, float* put, const float* S, const float* K, const float* T, float r, float v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float sqrtT = sqrtf(T[i]);
    float d1 = (logf(S[i] / K[i]) + (r + 0.5f * v * v) * T[i]) / (v * sqrtT);
    float d2 = d1 - v * sqrtT;
    float cnd1 = normcdff(d1), cnd2 = normcdff(d2);
    float ert = expf(-r * T[i]);
    call[i] = S[i] * cnd1 - K[i] * ert * cnd2;
    put[i] = K[i] * ert * (1.0f - cnd2) - S[i] * (1.0f - cnd1);
}

__global__ void math_mandelbrot(int* iters, float x0, float y0, float dx, float dy, int w, int h, int max_iter) {
    int px = blockIdx.x * blockDim.x + threadIdx.x, py = blockIdx.y * blockDim.y + threadIdx.y;
    if (px >= w || py >= h) return;
    float cx = x0 + px * dx, cy = y0 + py * dy, x = 0.f, y = 0.f;
    int it = 0;
    while (x * x + y * y <= 4.f && it < max_iter) { float t = x * x - y * y + cx; y = 2.f * x * y + cy; x = t; ++it; }
    iters[py * w + px] = it;
}

__global__ void math_double_special(double* y, const double* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = tgamma(x[i]) + cbrt(x[i]) + asinh(x[i]) + j0(x[i]);
}

__global__ void math_rng_box_muller(float2* out, unsigned seed, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned s = seed ^ (i * 2654435761u);
    s ^= s << 13; s ^= s >> 17; s ^= s << 5;
    float u1 = (s & 0xffffff) / 16777216.0f + 1e-7f;
    s ^= s << 13; s ^= s >> 17; s ^= s << 5;
    float u2 = (s & 0xffffff) / 16777216.0f;
    float r = sqrtf(-2.f * logf(u1));
    float sn, cs;
    sincospif(2.f * u2, &sn, &cs);
    out[i] = make_float2(r * cs, r * sn);
}

// Complex arithmetic and FFT butterflies held in registers: radix grows the
// register footprint (radix-R keeps R complex values live).

__device__ __forceinline__ float2 cmul(float2 a, float2 b) { return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }
__device__ __forceinline__ float2 cadd(float2 a, float2 b) { return make_float2(a.x + b.x, a.y + b.y); }
__device__ __forceinline__ float2 csub(float2 a, float2 b) { return make_float2(a.x - b.x, a.y - b.y); }

__global__ void complex_multiply(float2* c, const float2* a, const float2* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = cmul(a[i], b[i]);
}

__global__ void fft_radix2_stage(float2* data, int n, int half_span) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n / 2) return;
    int group = t / half_span, pos = t % half_span;
    int i = group * 2 * half_span + pos, j = i + half_span;
    float s, c;
    sincospif(-(float)pos / half_span, &s, &c);
    float2 w = make_float2(c, s);
    float2 u = data[i], v = cmul(data[j], w);
    data[i] = cadd(u, v);
    data[j] = csub(u, v);
}

// In-register radix-R DFT-by-FFT on R points per thread (R a power of two).
template <int R>
__global__ void fft_registers(float2* data, int stride) {
    float2 v[R];
    float2* p = data + (size_t)(blockIdx.x * blockDim.x + threadIdx.x);
#pragma unroll
    for (int k = 0; k < R; ++k) v[k] = p[k * stride];
    // bit reversal
#pragma unroll
    for (int k = 0; k < R; ++k) {
        int r = 0;
#pragma unroll
        for (int b = 1, kk = k; b < R; b <<= 1, kk >>= 1) r = (r << 1) | (kk & 1);
        if (r > k) { float2 t = v[k]; v[k] = v[r]; v[r] = t; }
    }
#pragma unroll
    for (int span = 1; span < R; span <<= 1)
#pragma unroll
        for (int k = 0; k < R; ++k)
            if ((k & span) == 0) {
                float s, c;
                sincospif(-(float)(k % span) / span, &s, &c);
                float2 w = cmul(v[k + span], make_float2(c, s));
                float2 u = v[k];
                v[k] = cadd(u, w);
                v[k + span] = csub(u, w);
            }
#pragma unroll
    for (int k = 0; k < R; ++k) p[k * stride] = v[k];
}
template __global__ void fft_registers<2>(float2*, int);
template __global__ void fft_registers<4>(float2*, int);
template __global__ void fft_registers<8>(float2*, int);
template __global__ void fft_registers<16>(float2*, int);
template __global__ void fft_registers<32>(float2*, int);
template __global__ void fft_registers<64>(float2*, int);

__global__ void dft_naive(float2* out, const float2* in, int n) {
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    float2 acc = make_float2(0.f, 0.f);
    for (int j = 0; j < n; ++j) {
        float s, c;
        sincospif(-2.f * (float)((long long)j * k % n) / n, &s, &c);
        acc = cadd(acc, cmul(in[j], make_float2(c, s)));
    }
    out[k] = acc;
}

__global__ void dct8x8_per_thread(float* out, const float* in, int blocks) {
    int b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= blocks) return;
    float x[8][8], y[8][8];
    const float* p = in + (size_t)b * 64;
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) x[i][j] = p[i * 8 + j];
#pragma unroll
    for (int u = 0; u < 8; ++u)
#pragma unroll
        for (int v = 0; v < 8; ++v) {
            float acc = 0.f;
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j)
                    acc += x[i][j] * __cosf((2 * i + 1) * u * 0.19634954f) * __cosf((2 * j + 1) * v * 0.19634954f);
            y[u][v] = acc;
        }
    float* q = out + (size_t)b * 64;
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) q[i * 8 + j] = y[i][j];
}

__global__ void complex_matvec4(float2* y, const float2* m, const float2* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float2 a[16], v[4];
#pragma unroll
    for (int k = 0; k < 16; ++k) a[k] = m[16 * i + k];
#pragma unroll
    for (int k = 0; k < 4; ++k) v[k] = x[4 * i + k];
#pragma unroll
    for (int r = 0; r < 4; ++r) {
        float2 acc = make_float2(0.f, 0.f);
#pragma unroll
        for (int c = 0; c < 4; ++c) acc = cadd(acc, cmul(a[r * 4 + c], v[c]));
        y[4 * i + r] = acc;
    }
}

// Image processing: convolutions (constant memory filters), color conversion,
// resampling, blurs.

__constant__ float c_filter[81];

template <int R>
__global__ void convolve2d_constant(float* out, const float* in, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    float acc = 0.f;
#pragma unroll
    for (int dy = -R; dy <= R; ++dy)
#pragma unroll
        for (int dx = -R; dx <= R; ++dx) {
            int xx = min(max(x + dx, 0), w - 1), yy = min(max(y + dy, 0), h - 1);
            acc += c_filter[(dy + R) * (2 * R + 1) + dx + R] * in[yy * w + xx];
        }
    out[y * w + x] = acc;
}
template __global__ void convolve2d_constant<1>(float*, const float*, int, int);
template __global__ void convolve2d_constant<2>(float*, const float*, int, int);
template __global__ void convolve2d_constant<4>(float*, const float*, int, int);

template <int R>
__global__ void convolve2d_shared(float* out, const float* in, int w, int h) {
    __shared__ float tile[16 + 2 * R][16 + 2 * R];
    int x0 = blockIdx.x * 16 - R, y0 = blockIdx.y * 16 - R;
    for (int i = threadIdx.y; i < 16 + 2 * R; i += 16)
        for (int j = threadIdx.x; j < 16 + 2 * R; j += 16) {
            int xx = min(max(x0 + j, 0), w - 1), yy = min(max(y0 + i, 0), h - 1);
            tile[i][j] = in[yy * w + xx];
        }
    __syncthreads();
    int x = blockIdx.x * 16 + threadIdx.x, y = blockIdx.y * 16 + threadIdx.y;
    if (x >= w || y >= h) return;
    float acc = 0.f;
#pragma unroll
    for (int dy = 0; dy <= 2 * R; ++dy)
#pragma unroll
        for (int dx = 0; dx <= 2 * R; ++dx) acc += c_filter[dy * (2 * R + 1) + dx] * tile[threadIdx.y + dy][threadIdx.x + dx];
    out[y * w + x] = acc;
}
template __global__ void convolve2d_shared<1>(float*, const float*, int, int);
template __global__ void convolve2d_shared<3>(float*, const float*, int, int);

__global__ void rgb_to_gray(unsigned char* gray, const uchar3* rgb, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { uchar3 p = rgb[i]; gray[i] = (unsigned char)(0.299f * p.x + 0.587f * p.y + 0.114f * p.z); }
}

__global__ void rgba_to_yuv(uchar4* yuv, const uchar4* rgba, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uchar4 p = rgba[i];
    float r = p.x, g = p.y, b = p.z;
    float y = 0.299f * r + 0.587f * g + 0.114f * b;
    float u = 128.f + 0.492f * (b - y), v = 128.f + 0.877f * (r - y);
    yuv[i] = make_uchar4((unsigned char)fminf(y, 255.f), (unsigned char)fminf(fmaxf(u, 0.f), 255.f),
                         (unsigned char)fminf(fmaxf(v, 0.f), 255.f), p.w);
}

__global__ void bilinear_resize(float* out, const float* in, int iw, int ih, int ow, int oh) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= ow || y >= oh) return;
    float sx = (x + 0.5f) * iw / ow - 0.5f, sy = (y + 0.5f) * ih / oh - 0.5f;
    int x0 = max((int)floorf(sx), 0), y0 = max((int)floorf(sy), 0);
    int x1 = min(x0 + 1, iw - 1), y1 = min(y0 + 1, ih - 1);
    float fx = sx - x0, fy = sy - y0;
    out[y * ow + x] = (1 - fy) * ((1 - fx) * in[y0 * iw + x0] + fx * in[y0 * iw + x1]) +
                      fy * ((1 - fx) * in[y1 * iw + x0] + fx * in[y1 * iw + x1]);
}

__global__ void box_blur_horizontal(float* out, const float* in, int w, int h, int r) {
    int y = blockIdx.x * blockDim.x + threadIdx.x;
    if (y >= h) return;
    const float* row = in + (size_t)y * w;
    float* orow = out + (size_t)y * w;
    float acc = 0.f;
    for (int x = -r; x <= r; ++x) acc += row[min(max(x, 0), w - 1)];
    float inv = 1.f / (2 * r + 1);
    for (int x = 0; x < w; ++x) {
        orow[x] = acc * inv;
        acc += row[min(x + r + 1, w - 1)] - row[max(x - r, 0)];
    }
}

__global__ void sobel(float* mag, const float* in, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < 1 || y < 1 || x >= w - 1 || y >= h - 1) return;
    auto p = [&](int dx, int dy) { return in[(y + dy) * w + x + dx]; };
    float gx = -p(-1, -1) - 2 * p(-1, 0) - p(-1, 1) + p(1, -1) + 2 * p(1, 0) + p(1, 1);
    float gy = -p(-1, -1) - 2 * p(0, -1) - p(1, -1) + p(-1, 1) + 2 * p(0, 1) + p(1, 1);
    mag[y * w + x] = sqrtf(gx * gx + gy * gy);
}

__global__ void median3x3(unsigned char* out, const unsigned char* in, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < 1 || y < 1 || x >= w - 1 || y >= h - 1) return;
    int v[9];
#pragma unroll
    for (int k = 0; k < 9; ++k) v[k] = in[(y + k / 3 - 1) * w + x + k % 3 - 1];
#pragma unroll
    for (int i = 0; i < 5; ++i)
#pragma unroll
        for (int j = i + 1; j < 9; ++j) { int a = min(v[i], v[j]), b = max(v[i], v[j]); v[i] = a; v[j] = b; }
    out[y * w + x] = (unsigned char)v[4];
}

__global__ void tone_map_reinhard(uchar4* out, const float4* hdr, float exposure, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float4 c = hdr[i];
    auto map = [&](float v) { v *= exposure; v = v / (1.f + v); return (unsigned char)(255.f * powf(v, 1.f / 2.2f)); };
    out[i] = make_uchar4(map(c.x), map(c.y), map(c.z), 255);
}

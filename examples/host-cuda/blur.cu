// A 2-D box blur whose launch lives in another file (launch.cpp), as in most projects: the
// kernel file alone does not say its block size.
// Intentional pitfalls: SL501 (line 5: the host launches 13x13 = 169 threads, 6 warps with 23 idle
// lanes; reported with launch.cpp's line as the related location).
__global__ void box_blur(const float* __restrict__ src, float* __restrict__ dst, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    float sum = 0.0f;
    int count = 0;
    for (int dy = -1; dy <= 1; ++dy) {
        for (int dx = -1; dx <= 1; ++dx) {
            int sx = min(max(x + dx, 0), width - 1);
            int sy = min(max(y + dy, 0), height - 1);
            sum += src[sy * width + sx];
            ++count;
        }
    }
    dst[y * width + x] = sum / count;
}

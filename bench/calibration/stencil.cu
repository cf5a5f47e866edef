// Stencils in 1, 2 and 3 dimensions, with and without shared-memory halos.

template <int RADIUS>
__global__ void stencil_1d_shared(float* out, const float* in, const float* weights, int n) {
    extern __shared__ float s[];
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    int l = threadIdx.x + RADIUS;
    s[l] = g < n ? in[g] : 0.0f;
    if (threadIdx.x < RADIUS) {
        s[l - RADIUS] = g >= RADIUS ? in[g - RADIUS] : 0.0f;
        s[l + blockDim.x] = g + blockDim.x < n ? in[g + blockDim.x] : 0.0f;
    }
    __syncthreads();
    float acc = 0.0f;
#pragma unroll
    for (int k = -RADIUS; k <= RADIUS; ++k) acc += weights[k + RADIUS] * s[l + k];
    if (g < n) out[g] = acc;
}
template __global__ void stencil_1d_shared<1>(float*, const float*, const float*, int);
template __global__ void stencil_1d_shared<3>(float*, const float*, const float*, int);
template __global__ void stencil_1d_shared<8>(float*, const float*, const float*, int);

__global__ void jacobi_5pt(float* out, const float* in, int nx, int ny) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < 1 || y < 1 || x >= nx - 1 || y >= ny - 1) return;
    int i = y * nx + x;
    out[i] = 0.25f * (in[i - 1] + in[i + 1] + in[i - nx] + in[i + nx]);
}

__global__ void laplace_9pt(float* out, const float* in, int nx, int ny) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < 1 || y < 1 || x >= nx - 1 || y >= ny - 1) return;
    int i = y * nx + x;
    out[i] = (4.0f * (in[i - 1] + in[i + 1] + in[i - nx] + in[i + nx]) +
              in[i - nx - 1] + in[i - nx + 1] + in[i + nx - 1] + in[i + nx + 1] - 20.0f * in[i]) / 6.0f;
}

__global__ void jacobi_2d_shared(float* out, const float* in, int nx, int ny) {
    __shared__ float tile[18][18];
    int x = blockIdx.x * 16 + threadIdx.x, y = blockIdx.y * 16 + threadIdx.y;
    int lx = threadIdx.x + 1, ly = threadIdx.y + 1;
    auto at = [&](int xx, int yy) { return (xx >= 0 && yy >= 0 && xx < nx && yy < ny) ? in[yy * nx + xx] : 0.0f; };
    tile[ly][lx] = at(x, y);
    if (threadIdx.x == 0) tile[ly][0] = at(x - 1, y);
    if (threadIdx.x == 15) tile[ly][17] = at(x + 1, y);
    if (threadIdx.y == 0) tile[0][lx] = at(x, y - 1);
    if (threadIdx.y == 15) tile[17][lx] = at(x, y + 1);
    __syncthreads();
    if (x < nx && y < ny)
        out[y * nx + x] = 0.25f * (tile[ly][lx - 1] + tile[ly][lx + 1] + tile[ly - 1][lx] + tile[ly + 1][lx]);
}

__global__ void heat_7pt_3d(float* out, const float* in, int nx, int ny, int nz, float alpha) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < 1 || y < 1 || x >= nx - 1 || y >= ny - 1) return;
    size_t plane = (size_t)nx * ny;
    for (int z = 1; z < nz - 1; ++z) {
        size_t i = z * plane + y * nx + x;
        out[i] = in[i] + alpha * (in[i - 1] + in[i + 1] + in[i - nx] + in[i + nx] + in[i - plane] + in[i + plane] - 6.0f * in[i]);
    }
}

// 25-point (radius 4) 3D stencil marching in z with a register queue.
__global__ void stencil_25pt_register_queue(float* out, const float* in, const float* c, int nx, int ny, int nz) {
    int x = blockIdx.x * blockDim.x + threadIdx.x + 4;
    int y = blockIdx.y * blockDim.y + threadIdx.y + 4;
    if (x >= nx - 4 || y >= ny - 4) return;
    size_t plane = (size_t)nx * ny;
    float q[9];
#pragma unroll
    for (int k = 0; k < 9; ++k) q[k] = in[k * plane + y * nx + x];
    float c0 = c[0], c1 = c[1], c2 = c[2], c3 = c[3], c4 = c[4];
    for (int z = 4; z < nz - 4; ++z) {
        size_t i = z * plane + y * nx + x;
        float v = c0 * q[4];
        v += c1 * (q[3] + q[5] + in[i - 1] + in[i + 1] + in[i - nx] + in[i + nx]);
        v += c2 * (q[2] + q[6] + in[i - 2] + in[i + 2] + in[i - 2 * nx] + in[i + 2 * nx]);
        v += c3 * (q[1] + q[7] + in[i - 3] + in[i + 3] + in[i - 3 * nx] + in[i + 3 * nx]);
        v += c4 * (q[0] + q[8] + in[i - 4] + in[i + 4] + in[i - 4 * nx] + in[i + 4 * nx]);
        out[i] = v;
#pragma unroll
        for (int k = 0; k < 8; ++k) q[k] = q[k + 1];
        if (z + 5 < nz) q[8] = in[i + 5 * plane];
    }
}

__global__ void game_of_life(unsigned char* next, const unsigned char* cur, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    int alive = 0;
#pragma unroll
    for (int dy = -1; dy <= 1; ++dy)
#pragma unroll
        for (int dx = -1; dx <= 1; ++dx)
            if (dx || dy) alive += cur[((y + dy + h) % h) * w + (x + dx + w) % w];
    unsigned char self = cur[y * w + x];
    next[y * w + x] = (alive == 3 || (alive == 2 && self)) ? 1 : 0;
}

// N-body and particle kernels.

__global__ void nbody_naive(float4* accel, const float4* pos, int n, float eps2) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float4 pi = pos[i];
    float3 a = make_float3(0.f, 0.f, 0.f);
    for (int j = 0; j < n; ++j) {
        float4 pj = pos[j];
        float dx = pj.x - pi.x, dy = pj.y - pi.y, dz = pj.z - pi.z;
        float inv = rsqrtf(dx * dx + dy * dy + dz * dz + eps2);
        float s = pj.w * inv * inv * inv;
        a.x += dx * s; a.y += dy * s; a.z += dz * s;
    }
    accel[i] = make_float4(a.x, a.y, a.z, 0.f);
}

template <int TILE, int UNROLL>
__global__ void nbody_tiled(float4* accel, const float4* pos, int n, float eps2) {
    __shared__ float4 sh[TILE];
    int i = blockIdx.x * TILE + threadIdx.x;
    float4 pi = i < n ? pos[i] : make_float4(0.f, 0.f, 0.f, 0.f);
    float3 a = make_float3(0.f, 0.f, 0.f);
    for (int t = 0; t < n; t += TILE) {
        sh[threadIdx.x] = t + threadIdx.x < n ? pos[t + threadIdx.x] : make_float4(0.f, 0.f, 0.f, 0.f);
        __syncthreads();
#pragma unroll UNROLL
        for (int j = 0; j < TILE; ++j) {
            float4 pj = sh[j];
            float dx = pj.x - pi.x, dy = pj.y - pi.y, dz = pj.z - pi.z;
            float inv = rsqrtf(dx * dx + dy * dy + dz * dz + eps2);
            float s = pj.w * inv * inv * inv;
            a.x += dx * s; a.y += dy * s; a.z += dz * s;
        }
        __syncthreads();
    }
    if (i < n) accel[i] = make_float4(a.x, a.y, a.z, 0.f);
}
template __global__ void nbody_tiled<128, 1>(float4*, const float4*, int, float);
template __global__ void nbody_tiled<256, 4>(float4*, const float4*, int, float);
template __global__ void nbody_tiled<256, 32>(float4*, const float4*, int, float);

struct alignas(32) Body { double x, y, z, w; };  // double4 is deprecated in CUDA 13

__global__ void nbody_double(Body* accel, const Body* pos, int n, double eps2) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Body pi = pos[i];
    double ax = 0, ay = 0, az = 0;
    for (int j = 0; j < n; ++j) {
        Body pj = pos[j];
        double dx = pj.x - pi.x, dy = pj.y - pi.y, dz = pj.z - pi.z;
        double d2 = dx * dx + dy * dy + dz * dz + eps2;
        double inv = 1.0 / (d2 * sqrt(d2));
        ax += dx * pj.w * inv; ay += dy * pj.w * inv; az += dz * pj.w * inv;
    }
    accel[i] = Body{ax, ay, az, 0.0};
}

__global__ void leapfrog_integrate(float4* pos, float4* vel, const float4* accel, float dt, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float4 v = vel[i], a = accel[i], p = pos[i];
    v.x += a.x * dt; v.y += a.y * dt; v.z += a.z * dt;
    p.x += v.x * dt; p.y += v.y * dt; p.z += v.z * dt;
    vel[i] = v; pos[i] = p;
}

__global__ void spring_forces(float2* force, const float2* pos, const int2* springs, const float* rest, float k, int m) {
    int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= m) return;
    int2 e = springs[s];
    float2 d = make_float2(pos[e.y].x - pos[e.x].x, pos[e.y].y - pos[e.x].y);
    float len = sqrtf(d.x * d.x + d.y * d.y) + 1e-12f;
    float f = k * (len - rest[s]) / len;
    atomicAdd(&force[e.x].x, f * d.x); atomicAdd(&force[e.x].y, f * d.y);
    atomicAdd(&force[e.y].x, -f * d.x); atomicAdd(&force[e.y].y, -f * d.y);
}

__global__ void sph_density(float* rho, const float4* pos, const int* cell_start, const int* cell_end,
                            const int* cell_of, int n, float h2, float mass, int3 dims) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float4 pi = pos[i];
    int c = cell_of[i];
    int cx = c % dims.x, cy = (c / dims.x) % dims.y, cz = c / (dims.x * dims.y);
    float sum = 0.f;
    for (int dz = -1; dz <= 1; ++dz)
        for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx) {
                int x = cx + dx, y = cy + dy, z = cz + dz;
                if (x < 0 || y < 0 || z < 0 || x >= dims.x || y >= dims.y || z >= dims.z) continue;
                int cell = (z * dims.y + y) * dims.x + x;
                for (int j = cell_start[cell]; j < cell_end[cell]; ++j) {
                    float4 pj = pos[j];
                    float r2 = (pi.x - pj.x) * (pi.x - pj.x) + (pi.y - pj.y) * (pi.y - pj.y) + (pi.z - pj.z) * (pi.z - pj.z);
                    if (r2 < h2) { float q = h2 - r2; sum += q * q * q; }
                }
            }
    rho[i] = mass * sum;
}

__global__ void verlet_list_lj(float4* force, const float4* pos, const int* neighbors, const int* counts, int max_nb, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float4 pi = pos[i];
    float fx = 0, fy = 0, fz = 0, energy = 0;
    for (int k = 0; k < counts[i]; ++k) {
        float4 pj = pos[neighbors[k * n + i]];
        float dx = pi.x - pj.x, dy = pi.y - pj.y, dz = pi.z - pj.z;
        float r2i = 1.f / (dx * dx + dy * dy + dz * dz);
        float r6i = r2i * r2i * r2i;
        float f = 48.f * r2i * r6i * (r6i - 0.5f);
        fx += f * dx; fy += f * dy; fz += f * dz;
        energy += 4.f * r6i * (r6i - 1.f);
    }
    force[i] = make_float4(fx, fy, fz, energy);
}

// nbody.cu
//
// All-pairs gravitational N-body step. `nbody_accelerations` tiles the
// bodies through shared memory, kBlock bodies at a time, and accumulates the
// softened acceleration of each body; `nbody_integrate` applies a
// kick-drift leapfrog update. Positions are float4 (xyz + mass).
// Define NBODY_DOUBLE_ACCUM to accumulate in double for long runs.
//
// Intentional pitfalls:
//   SL205 (line 63: `* float(j != i)` emulates a select with arithmetic;
//          the softening already makes the self term zero, and a select
//          or a skipped iteration would be cheaper)
// (look-alikes that are fine: out-of-range threads keep participating in
//  the tile loads and barriers instead of returning early)

#include <cuda_runtime.h>

constexpr int kBlock = 256;

#ifdef NBODY_DOUBLE_ACCUM
typedef double accum_t;
#else
typedef float accum_t;
#endif

struct SimConstants {
    float softening2;
    float dt;
    float damping;
};

__device__ __forceinline__ float3 body_body(float4 bi, float4 bj, float softening2)
{
    const float3 r = make_float3(bj.x - bi.x, bj.y - bi.y, bj.z - bi.z);
    const float distSq = r.x * r.x + r.y * r.y + r.z * r.z + softening2;
    const float invDist = rsqrtf(distSq);
    const float s = bj.w * invDist * invDist * invDist;
    return make_float3(r.x * s, r.y * s, r.z * s);
}

__global__ void __launch_bounds__(kBlock)
nbody_accelerations(const float4* __restrict__ pos, float3* __restrict__ accel, int n, SimConstants sim)
{
    __shared__ float4 tile[kBlock];

    const int i = blockIdx.x * kBlock + threadIdx.x;
    const bool active = i < n;
    const float4 bi = active ? pos[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);

    accum_t ax = 0, ay = 0, az = 0;
    const int numTiles = (n + kBlock - 1) / kBlock;
    for (int t = 0; t < numTiles; ++t) {
        const int j0 = t * kBlock;
        const int src = j0 + threadIdx.x;
        // Padding bodies have zero mass and contribute nothing.
        tile[threadIdx.x] = src < n ? pos[src] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        __syncthreads();

#pragma unroll 8
        for (int k = 0; k < kBlock; ++k) {
            const int j = j0 + k;
            const float3 a = body_body(bi, tile[k], sim.softening2);
            const float notSelf = float(j != i);
            ax += a.x * notSelf;
            ay += a.y * notSelf;
            az += a.z * notSelf;
        }
        __syncthreads();
    }

    if (active) {
        accel[i] = make_float3(float(ax), float(ay), float(az));
    }
}

__global__ void __launch_bounds__(kBlock)
nbody_integrate(float4* __restrict__ pos, float3* __restrict__ vel, const float3* __restrict__ accel,
                int n, SimConstants sim)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    const float3 a = accel[i];
    float3 v = vel[i];
    v.x = (v.x + a.x * sim.dt) * sim.damping;
    v.y = (v.y + a.y * sim.dt) * sim.damping;
    v.z = (v.z + a.z * sim.dt) * sim.damping;

    float4 p = pos[i];
    p.x += v.x * sim.dt;
    p.y += v.y * sim.dt;
    p.z += v.z * sim.dt;

    pos[i] = p;
    vel[i] = v;
}

void nbody_step(float4* pos, float3* vel, float3* accel, int n, float softening, float dt,
                cudaStream_t stream)
{
    SimConstants sim;
    sim.softening2 = softening * softening;
    sim.dt = dt;
    sim.damping = 0.9995f;

    const int blocks = (n + kBlock - 1) / kBlock;
    nbody_accelerations<<<blocks, kBlock, 0, stream>>>(pos, accel, n, sim);
    nbody_integrate<<<blocks, kBlock, 0, stream>>>(pos, vel, accel, n, sim);
}

// heat_stencil3d.cu
//
// Explicit 7-point heat diffusion step on an nx*ny*nz grid (x fastest).
// A 32x8 block owns a column of the domain and marches along z, keeping the
// current xy-plane (with a one-cell halo) in shared memory and the planes
// below and above in registers ("2.5D blocking"). Boundary cells take a
// Dirichlet, Neumann or periodic value depending on the face's kind.
//
// Intentional pitfalls:
//   SL601 (line 36: case kPeriodic falls through into kNeumann, so the
//          wrapped coordinate is immediately clamped again)
//   SL402 (line 108: trailing __syncthreads() after the last store: no
//          shared or global access follows it before the kernel exits)
// (look-alikes that are fine: `case kDirichlet:` directly followed by
//  `default:` is an empty case label; barriers inside the z loop order the
//  plane buffer; out-of-range threads stay alive for the barriers)

#include <cuda_runtime.h>

constexpr int kBX = 32;
constexpr int kBY = 8;

enum BoundaryKind : int { kDirichlet = 0, kNeumann = 1, kPeriodic = 2 };

struct HeatParams {
    int   nx, ny, nz;
    float alpha;        // diffusivity * dt / h^2, <= 1/6 for stability
    float wallValue;    // Dirichlet value
    int   bcX, bcY;     // BoundaryKind per axis (z is handled by the march)
};

__device__ __forceinline__ int resolve_index(int i, int n, int kind, bool* isFixed)
{
    *isFixed = false;
    switch (kind) {
        case kPeriodic:
            i = i < 0 ? i + n : (i >= n ? i - n : i);   // halo is one cell wide
        case kNeumann:
            i = min(max(i, 0), n - 1);
            break;
        case kDirichlet:
        default:
            *isFixed = (i < 0 || i >= n);
            i = min(max(i, 0), n - 1);
            break;
    }
    return i;
}

__global__ void __launch_bounds__(kBX * kBY)
heat_step(const float* __restrict__ u, float* __restrict__ out, HeatParams p)
{
    __shared__ float plane[kBY + 2][kBX + 2];

    const int gx = blockIdx.x * kBX + threadIdx.x;
    const int gy = blockIdx.y * kBY + threadIdx.y;
    const bool inside = gx < p.nx && gy < p.ny;
    const int lx = threadIdx.x + 1;
    const int ly = threadIdx.y + 1;
    const size_t planeSize = static_cast<size_t>(p.nx) * p.ny;

    bool fixedX = false;
    bool fixedY = false;
    const int cx = resolve_index(gx, p.nx, p.bcX, &fixedX);
    const int cy = resolve_index(gy, p.ny, p.bcY, &fixedY);
    const size_t col = static_cast<size_t>(cy) * p.nx + cx;

    float below = u[col];
    float center = u[col];
    for (int z = 0; z < p.nz; ++z) {
        const float above = z + 1 < p.nz ? u[(z + 1) * planeSize + col] : center;

        plane[ly][lx] = center;
        // Halo cells are loaded by the edge threads of the block.
        if (threadIdx.x == 0) {
            bool f;
            const int hx = resolve_index(gx - 1, p.nx, p.bcX, &f);
            plane[ly][0] = f ? p.wallValue : u[z * planeSize + static_cast<size_t>(cy) * p.nx + hx];
        }
        if (threadIdx.x == kBX - 1) {
            bool f;
            const int hx = resolve_index(gx + 1, p.nx, p.bcX, &f);
            plane[ly][kBX + 1] = f ? p.wallValue : u[z * planeSize + static_cast<size_t>(cy) * p.nx + hx];
        }
        if (threadIdx.y == 0) {
            bool f;
            const int hy = resolve_index(gy - 1, p.ny, p.bcY, &f);
            plane[0][lx] = f ? p.wallValue : u[z * planeSize + static_cast<size_t>(hy) * p.nx + cx];
        }
        if (threadIdx.y == kBY - 1) {
            bool f;
            const int hy = resolve_index(gy + 1, p.ny, p.bcY, &f);
            plane[kBY + 1][lx] = f ? p.wallValue : u[z * planeSize + static_cast<size_t>(hy) * p.nx + cx];
        }
        __syncthreads();

        if (inside) {
            const float lap = plane[ly][lx - 1] + plane[ly][lx + 1] + plane[ly - 1][lx] + plane[ly + 1][lx]
                            + below + above - 6.0f * center;
            const float next = (fixedX || fixedY) ? p.wallValue : center + p.alpha * lap;
            out[z * planeSize + col] = next;
        }
        __syncthreads();   // plane is overwritten in the next iteration

        below = center;
        center = above;
    }
    __syncthreads();
}

void launch_heat_step(const float* u, float* out, const HeatParams& p, cudaStream_t stream)
{
    const dim3 block(kBX, kBY);
    const dim3 grid((p.nx + kBX - 1) / kBX, (p.ny + kBY - 1) / kBY);
    heat_step<<<grid, block, 0, stream>>>(u, out, p);
}

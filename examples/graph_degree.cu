// Degree counting and edge-weight normalisation over a COO edge list (graph
// analytics preprocessing, e.g. before PageRank or spectral clustering).
//
// Intentional pitfalls:
//   SL104 (line 29: `edges[e].src` and `edges[e].dst` are read together but
//          `weight` sits between them in `Edge`, so the two ints cannot be
//          fetched with one 8-byte load; declare `dst` next to `src`)
// Look-alikes: `normalize_weights` reads `src` and `weight`, which are
// adjacent (one vector load), and the CSR kernels read single fields.
#include <cuda_runtime.h>

struct __align__(8) Edge {
    int src;
    float weight;
    int dst;
    int flags;
};

constexpr int kBlock = 256;

__global__ void __launch_bounds__(kBlock)
count_degrees(const Edge* __restrict__ edges, int* __restrict__ outDegree,
              int* __restrict__ inDegree, int numEdges)
{
    const int e = blockIdx.x * kBlock + threadIdx.x;
    if (e >= numEdges) {
        return;
    }
    const int s = edges[e].src;
    const int d = edges[e].dst;
    atomicAdd(&outDegree[s], 1);
    atomicAdd(&inDegree[d], 1);
}

__global__ void __launch_bounds__(kBlock)
normalize_weights(Edge* __restrict__ edges, const int* __restrict__ outDegree, int numEdges)
{
    for (int e = blockIdx.x * kBlock + threadIdx.x; e < numEdges; e += gridDim.x * kBlock) {
        const int s = edges[e].src;
        const float w = edges[e].weight;
        const int deg = outDegree[s];
        edges[e].weight = deg > 0 ? w / static_cast<float>(deg) : 0.0f;
    }
}

__global__ void __launch_bounds__(kBlock)
csr_row_lengths(const int* __restrict__ rowPtr, int* __restrict__ lengths, int numRows)
{
    const int r = blockIdx.x * kBlock + threadIdx.x;
    if (r < numRows) {
        lengths[r] = rowPtr[r + 1] - rowPtr[r];
    }
}

void launch_degree_pass(const Edge* edges, int* outDegree, int* inDegree, Edge* mutableEdges,
                        const int* rowPtr, int* lengths, int numEdges, int numRows, cudaStream_t stream)
{
    const int blocks = (numEdges + kBlock - 1) / kBlock;
    count_degrees<<<blocks, kBlock, 0, stream>>>(edges, outDegree, inDegree, numEdges);
    normalize_weights<<<160, kBlock, 0, stream>>>(mutableEdges, outDegree, numEdges);
    csr_row_lengths<<<(numRows + kBlock - 1) / kBlock, kBlock, 0, stream>>>(rowPtr, lengths, numRows);
}

// Thread-private arrays. Constant indices after unrolling stay in registers;
// indices the compiler cannot resolve put the array in local memory (stack).

template <int N>
__global__ void local_gather(float* out, const float* in, const int* idx, int n) {
    float buf[N];
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = 0; k < N; ++k) buf[k] = in[t * N + k];
    out[t] = buf[idx[t] % N];
}
template __global__ void local_gather<4>(float*, const float*, const int*, int);
template __global__ void local_gather<16>(float*, const float*, const int*, int);
template __global__ void local_gather<64>(float*, const float*, const int*, int);
template __global__ void local_gather<256>(float*, const float*, const int*, int);

template <int BINS>
__global__ void local_histogram(int* out, const unsigned char* in, int per_thread) {
    int hist[BINS];
    for (int b = 0; b < BINS; ++b) hist[b] = 0;
    const unsigned char* p = in + (size_t)(blockIdx.x * blockDim.x + threadIdx.x) * per_thread;
    for (int i = 0; i < per_thread; ++i) hist[p[i] % BINS]++;
    for (int b = 0; b < BINS; ++b) atomicAdd(&out[b], hist[b]);
}
template __global__ void local_histogram<8>(int*, const unsigned char*, int);
template __global__ void local_histogram<32>(int*, const unsigned char*, int);
template __global__ void local_histogram<256>(int*, const unsigned char*, int);

// Unrolled loop: every index is a constant, the array lives in registers.
template <int N>
__global__ void local_unrolled_static(float* out, const float* in) {
    float buf[N];
    int t = blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll
    for (int k = 0; k < N; ++k) buf[k] = in[t * N + k] * (k + 1);
    float s = 0.f;
#pragma unroll
    for (int k = 0; k < N; ++k) s += buf[k] * buf[N - 1 - k];
    out[t] = s;
}
template __global__ void local_unrolled_static<8>(float*, const float*);
template __global__ void local_unrolled_static<32>(float*, const float*);

__global__ void local_insertion_sort16(float* data) {
    float v[16];
    float* p = data + (size_t)(blockIdx.x * blockDim.x + threadIdx.x) * 16;
    for (int i = 0; i < 16; ++i) v[i] = p[i];
    for (int i = 1; i < 16; ++i) {
        float key = v[i];
        int j = i - 1;
        while (j >= 0 && v[j] > key) { v[j + 1] = v[j]; --j; }
        v[j + 1] = key;
    }
    for (int i = 0; i < 16; ++i) p[i] = v[i];
}

__global__ void local_stack_dfs(int* visited_count, const int* adj, const int* offsets, int start) {
    int stack[64];
    int top = 0, count = 0;
    stack[top++] = start + threadIdx.x;
    while (top > 0 && count < 1000) {
        int node = stack[--top];
        ++count;
        for (int e = offsets[node]; e < offsets[node + 1] && top < 64; ++e) stack[top++] = adj[e];
    }
    visited_count[blockIdx.x * blockDim.x + threadIdx.x] = count;
}

__global__ void local_matrix_lu4(float* m) {
    float a[4][4];
    float* p = m + (size_t)(blockIdx.x * blockDim.x + threadIdx.x) * 16;
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) a[i][j] = p[i * 4 + j];
    for (int k = 0; k < 4; ++k)
        for (int i = k + 1; i < 4; ++i) {
            float f = a[i][k] / a[k][k];
            for (int j = k; j < 4; ++j) a[i][j] -= f * a[k][j];
            a[i][k] = f;
        }
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) p[i * 4 + j] = a[i][j];
}

__global__ void local_lookup_table(float* out, const int* keys, int n) {
    float table[32];
    for (int k = 0; k < 32; ++k) table[k] = __sinf(0.19634954f * k);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = table[keys[i] & 31];
}

__global__ void local_big_spill(float* out, const float* in, const int* idx) {
    float big[1024];
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = 0; k < 1024; ++k) big[k] = in[k] + t;
    out[t] = big[idx[t] & 1023] + big[(idx[t] * 7) & 1023];
}

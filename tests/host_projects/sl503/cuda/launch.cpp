#include <cuda_runtime.h>

__global__ void saxpy(float a, const float* x, float* y, int n);
__global__ void saxpy_strided(float a, const float* x, float* y, int n);
__global__ void tile2d(float* img, int width, int height);

void run(float a, const float* x, float* y, int n, int threads) {
    saxpy<<<n / 256, 256>>>(a, x, y, n);  // expect: SL503
    int blocks = n / threads;  // expect: SL503
    saxpy<<<blocks, threads>>>(a, x, y, n);
    saxpy<<<(n + 255) / 256, 256>>>(a, x, y, n);  // rounded up: fine
    saxpy<<<4096 / 256, 256>>>(a, x, y, 4096);  // exact
    saxpy_strided<<<n / 256, 256>>>(a, x, y, n);  // grid-stride loop: covers any size
}

void clear(float* img, int width, int height) {
    dim3 block(16, 16);
    dim3 grid(width / 16, (height + 15) / 16);  // expect: SL503
    tile2d<<<grid, block>>>(img, width, height);
}

void clear_padded(float* img, int width, int height) {
    int padded = ((width + 15) / 16) * 16;  // a multiple of 16 by construction
    tile2d<<<dim3(padded / 16, (height + 15) / 16), dim3(16, 16)>>>(img, padded, height);
}

// Workspace for the VS Code end-to-end test (tests/e2e/test_vscode_e2e.py).
// It is copied fresh into a temporary directory for every run.

__global__ void divide(int *out, const int *a, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        int q = a[i] / n;  // expect: SL201
        out[i] = q;
    }
}

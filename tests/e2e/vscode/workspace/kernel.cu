// Workspace for the VS Code end-to-end test (tests/e2e/test_vscode_e2e.py).
// It is copied fresh into a temporary directory for every run.

__global__ void divide(int *out, int a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int q = a / n;  // expect: SL201
    if (i < n) {
        out[i] = q;
    }
}

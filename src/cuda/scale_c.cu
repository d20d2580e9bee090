// C = beta * C (beta == 0 writes zeros, ignoring NaN in C): the BLAS case of
// alpha == 0 or k == 0, where neither A nor B is read.
#include <cuda_runtime.h>

#include "cuda/scale_c.cuh"

__global__ void scale_c_kernel(int64_t m, int64_t n, float beta, float *c, int64_t ldc)
{
    const int64_t total = m * n;
    for (int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; idx < total;
         idx += (int64_t)gridDim.x * blockDim.x) {
        const int64_t i = idx / n, j = idx % n;
        float *cell = c + i * ldc + j;
        *cell = beta == 0.0f ? 0.0f : beta * *cell;
    }
}

cudaError_t launch_scale_c(int64_t m, int64_t n, float beta, float *c, int64_t ldc,
                           cudaStream_t stream)
{
    const int threads = 256;
    const int64_t blocks_needed = (m * n + threads - 1) / threads;
    const unsigned blocks = (unsigned)(blocks_needed < 65535 ? blocks_needed : 65535);
    scale_c_kernel<<<blocks, threads, 0, stream>>>(m, n, beta, c, ldc);
    return cudaGetLastError();
}

// Checks CSR arrays on the device: each thread takes row pointers and column
// indices by grid stride and clears *valid on the first fault it sees. It
// reads row_ptr[0..rows] and col_idx[0..nnz) only, whatever they hold.
#include "cuda/spmm/csr_layout.cuh"

namespace {

__global__ void csr_validate_kernel(esmm_csr_view_t w, int *valid)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i <= w.rows || i < w.nnz;
         i += stride) {
        bool ok = true;
        if (i <= w.rows) {
            const int32_t at = w.row_ptr[i];
            ok = at >= 0 && at <= w.nnz;
            if (i == 0)
                ok = ok && at == 0;
            if (i == w.rows)
                ok = ok && at == w.nnz;
            else
                ok = ok && at <= w.row_ptr[i + 1];
        }
        if (i < w.nnz) {
            const int32_t column = w.col_idx[i];
            ok = ok && column >= 0 && column < w.cols;
        }
        if (!ok)
            *valid = 0;
    }
}

} // namespace

cudaError_t launch_csr_validate(const esmm_csr_view_t &w, int *valid, cudaStream_t stream)
{
    const int one = 1;
    cudaError_t err = cudaMemcpyAsync(valid, &one, sizeof one, cudaMemcpyHostToDevice, stream);
    if (err != cudaSuccess)
        return err;
    const int64_t items = (w.rows + 1 > w.nnz ? w.rows + 1 : w.nnz);
    const int64_t blocks = (items + 255) / 256;
    csr_validate_kernel<<<(unsigned)(blocks < 4096 ? blocks : 4096), 256, 0, stream>>>(w, valid);
    return cudaGetLastError();
}

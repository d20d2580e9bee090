// y += alpha * W^T * x without W's transpose: a warp per row i of W. When
// x[i] is zero the row adds nothing (unless a weight is non-finite: w * 0 =
// NaN), so its column indices are never read; otherwise each stored (i, j, w)
// adds alpha * w * x[i] into y[j] with an atomic. y is scaled by beta
// beforehand; the order of the atomic sums varies from run to run.
#include "cuda/spmm/csr_layout.cuh"

namespace {

constexpr int MV_SCATTER_WARPS = 8;

__global__ void __launch_bounds__(MV_SCATTER_WARPS * 32)
    csrmv_scatter_kernel(esmm_csr_view_t w, float alpha, const float *x, int64_t incx,
                         float *y, int64_t incy)
{
    const int lane = threadIdx.x & 31;
    const int64_t row = (int64_t)blockIdx.x * MV_SCATTER_WARPS + (threadIdx.x >> 5);
    if (row >= w.rows)
        return;
    const float xv = x[row * incx];
    if (xv == 0.0f && w.values == nullptr && isfinite(w.value))
        return;
    const auto [begin, end] = csr_row(w, row);
    for (unsigned e = begin + lane; e < end; e += 32) {
        const float weight = w.values != nullptr ? w.values[e] : w.value;
        if (xv != 0.0f || !isfinite(weight))
            atomicAdd(y + (int64_t)w.col_idx[e] * incy, __fmul_rn(alpha, __fmul_rn(weight, xv)));
    }
}

} // namespace

cudaError_t launch_csrmv_scatter(const esmm_csr_view_t &w, float alpha, const float *x,
                                 int64_t incx, float *y, int64_t incy, cudaStream_t stream)
{
    const unsigned blocks = (unsigned)((w.rows + MV_SCATTER_WARPS - 1) / MV_SCATTER_WARPS);
    csrmv_scatter_kernel<<<blocks, MV_SCATTER_WARPS * 32, 0, stream>>>(w, alpha, x, incx, y,
                                                                       incy);
    return cudaGetLastError();
}

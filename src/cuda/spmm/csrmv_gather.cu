// y = alpha * W * x + beta * y: a group of lanes per row of W strides over
// its stored entries and the group sums by shuffles. The group is as wide as
// the rows are long (up to a warp), so short rows do not leave lanes idle.
#include "cuda/spmm/csr_layout.cuh"

namespace {

constexpr int MV_THREADS = 256;
constexpr int MV_UNROLL = 4;

template <int LANES>
__global__ void __launch_bounds__(MV_THREADS)
    csrmv_gather_kernel(esmm_csr_view_t w, float alpha, const float *x, int64_t incx,
                        float beta, float *y, int64_t incy)
{
    const int lane = threadIdx.x % LANES;
    const int64_t row = ((int64_t)blockIdx.x * MV_THREADS + threadIdx.x) / LANES;
    float sum = 0.0f;
    if (row < w.rows) {
        const auto [begin, end] = csr_row(w, row);
        // Several entries per lane at once: each is two dependent loads (its
        // column, then x there), so independent ones hide the latency.
        for (unsigned e0 = begin + lane; e0 < end; e0 += MV_UNROLL * LANES) {
            int column[MV_UNROLL];
            float weight[MV_UNROLL], xv[MV_UNROLL];
#pragma unroll
            for (int u = 0; u < MV_UNROLL; u++) {
                const unsigned e = e0 + u * LANES;
                column[u] = e < end ? w.col_idx[e] : -1;
                weight[u] = e < end ? (w.values != nullptr ? w.values[e] : w.value) : 0.0f;
            }
#pragma unroll
            for (int u = 0; u < MV_UNROLL; u++)
                xv[u] = column[u] >= 0 ? x[(int64_t)column[u] * incx] : 0.0f;
#pragma unroll
            for (int u = 0; u < MV_UNROLL; u++)
                if (column[u] >= 0)
                    sum = fmaf(weight[u], xv[u], sum);
        }
    }
#pragma unroll
    for (int d = LANES / 2; d > 0; d >>= 1)
        sum += __shfl_down_sync(0xffffffffu, sum, d, LANES);
    if (row < w.rows && lane == 0) {
        const float scaled = alpha * sum;
        y[row * incy] = beta != 0.0f ? scaled + beta * y[row * incy] : scaled;
    }
}

template <int LANES>
cudaError_t launch(const esmm_csr_view_t &w, float alpha, const float *x, int64_t incx,
                   float beta, float *y, int64_t incy, cudaStream_t stream)
{
    const int64_t rows_per_block = MV_THREADS / LANES;
    const unsigned blocks = (unsigned)((w.rows + rows_per_block - 1) / rows_per_block);
    csrmv_gather_kernel<LANES><<<blocks, MV_THREADS, 0, stream>>>(w, alpha, x, incx, beta, y,
                                                                  incy);
    return cudaGetLastError();
}

} // namespace

cudaError_t launch_csrmv_gather(const esmm_csr_view_t &w, float alpha, const float *x,
                                int64_t incx, float beta, float *y, int64_t incy,
                                cudaStream_t stream)
{
    const int64_t per_row = w.rows > 0 ? w.nnz / w.rows : 0;
    if (per_row >= 48)
        return launch<32>(w, alpha, x, incx, beta, y, incy, stream);
    if (per_row >= 12)
        return launch<16>(w, alpha, x, incx, beta, y, incy, stream);
    return launch<4>(w, alpha, x, incx, beta, y, incy, stream);
}

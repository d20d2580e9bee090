// C += alpha * W^T * B without W's transpose: a warp per (row i of W, panel),
// holding B[i, panel] in registers, adds alpha * w * B[i, c] into C[j, c] for
// each stored (i, j, w) with atomics, skipping B's zeros. A row of B whose
// panel is all zero skips the whole row of W, unless a weight is non-finite
// (w * 0 = NaN must still land). C is scaled by beta beforehand; the order of
// the atomic sums varies from run to run.
#include "cuda/spmm/csr_layout.cuh"

namespace {

constexpr int SCATTER_WARPS = 8;

template <int CPL, bool VEC>
__global__ void __launch_bounds__(SCATTER_WARPS * 32)
    csrmm_scatter_kernel(esmm_csr_view_t w, int64_t n, float alpha, const float *b, int64_t ldb,
                         float *c, int64_t ldc)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int64_t row = (int64_t)blockIdx.x * SCATTER_WARPS + warp;
    if (row >= w.rows)
        return;
    const int64_t col = (int64_t)blockIdx.y * 32 * CPL + lane * CPL;
    float bv[CPL];
    csr_row_access<CPL, VEC>::load(b + row * ldb, col, n, bv);
    bool any = false;
#pragma unroll
    for (int t = 0; t < CPL; t++)
        any |= bv[t] != 0.0f;
    const bool panel_zero = !__any_sync(0xffffffffu, any);

    const auto [begin, end] = csr_row(w, row);
    for (unsigned base = begin; base < end; base += 32) {
        const unsigned e = base + lane;
        const bool have = e < end;
        const float my_w = have ? (w.values != nullptr ? w.values[e] : w.value) : 0.0f;
        const bool all_finite = __all_sync(0xffffffffu, isfinite(my_w));
        if (panel_zero && all_finite)
            continue; // every product of these entries is a zero
        const int my_j = have ? w.col_idx[e] : 0;
        const int batch = min(32, (int)(end - base));
        for (int t = 0; t < batch; t++) {
            const int64_t j = __shfl_sync(0xffffffffu, my_j, t);
            const float weight = __shfl_sync(0xffffffffu, my_w, t);
            const bool finite = isfinite(weight);
#pragma unroll
            for (int u = 0; u < CPL; u++)
                if (col + u < n && (bv[u] != 0.0f || !finite))
                    atomicAdd(c + j * ldc + col + u, __fmul_rn(alpha, __fmul_rn(weight, bv[u])));
        }
    }
}

template <int CPL, bool VEC>
cudaError_t launch(const esmm_csr_view_t &w, int64_t n, float alpha, const float *b,
                   int64_t ldb, float *c, int64_t ldc, cudaStream_t stream)
{
    const dim3 grid((unsigned)((w.rows + SCATTER_WARPS - 1) / SCATTER_WARPS),
                    (unsigned)((n + 32 * CPL - 1) / (32 * CPL)));
    csrmm_scatter_kernel<CPL, VEC><<<grid, SCATTER_WARPS * 32, 0, stream>>>(w, n, alpha, b, ldb,
                                                                            c, ldc);
    return cudaGetLastError();
}

} // namespace

cudaError_t launch_csrmm_scatter(const esmm_csr_view_t &w, int64_t n, float alpha,
                                 const float *b, int64_t ldb, float *c, int64_t ldc,
                                 cudaStream_t stream)
{
    const int cpl = csr_cols_per_lane(n);
    const bool vec = csr_rows_aligned(b, ldb, n, cpl);
    switch (cpl) {
    case 4:
        return vec ? launch<4, true>(w, n, alpha, b, ldb, c, ldc, stream)
                   : launch<4, false>(w, n, alpha, b, ldb, c, ldc, stream);
    case 2:
        return vec ? launch<2, true>(w, n, alpha, b, ldb, c, ldc, stream)
                   : launch<2, false>(w, n, alpha, b, ldb, c, ldc, stream);
    default: return launch<1, false>(w, n, alpha, b, ldb, c, ldc, stream);
    }
}

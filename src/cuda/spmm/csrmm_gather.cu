// C = alpha * W * B + beta * C with W in CSR: a warp per (row of W, panel of
// columns). It walks the row's stored entries in order; for each it adds
// w * B[j, panel] into the row's accumulator, taking B's row either densely
// or, when B was compressed and the row is sparse, only its nonzeros. The
// order of the sums and the unfused multiply-add reproduce the CPU backend
// bit for bit (a zero of B adds +0 to a sum that is never -0, so skipping it
// changes nothing; a non-finite weight reads the dense row, so w * 0 = NaN
// still lands).
#include "cuda/spmm/csr_layout.cuh"

namespace {

constexpr int GATHER_WARPS = 8;
constexpr int GATHER_UNROLL = 4; // stored entries whose B rows are loaded at once

__device__ __forceinline__ float add_product(float acc, float w, float b)
{
    return __fadd_rn(acc, __fmul_rn(w, b));
}

template <int CPL, bool VEC, bool COMPRESSED>
__global__ void __launch_bounds__(GATHER_WARPS * 32)
    csrmm_gather_kernel(esmm_csr_view_t w, int64_t n, float alpha, const float *b, int64_t ldb,
                        float beta, float *c, int64_t ldc, csr_compressed_b cb)
{
    constexpr int PW = 32 * CPL;
    // The accumulator of a compressed product lives in shared memory, where a
    // nonzero's lane can reach any column of the panel.
    __shared__ float partial[COMPRESSED ? GATHER_WARPS : 1][COMPRESSED ? PW : 1];
    using access = csr_row_access<CPL, VEC>;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int64_t row = (int64_t)blockIdx.x * GATHER_WARPS + warp;
    if (row >= w.rows)
        return;
    const int64_t panel = blockIdx.y;
    const int64_t col = panel * PW + lane * CPL;
    float *mine = &partial[COMPRESSED ? warp : 0][0];

    float acc[CPL];
#pragma unroll
    for (int t = 0; t < CPL; t++) {
        acc[t] = 0.0f;
        if (COMPRESSED)
            mine[lane * CPL + t] = 0.0f;
    }
    __syncwarp();

    const int begin = w.row_ptr[row], end = w.row_ptr[row + 1];
    for (int base = begin; base < end; base += 32) {
        const int e = base + lane;
        const bool have = e < end;
        const int my_j = have ? w.col_idx[e] : 0;
        const float my_w = have ? (w.values != nullptr ? w.values[e] : w.value) : 0.0f;
        int2 my_meta = make_int2(0, CSR_DENSE_ROW);
        if (COMPRESSED && have && isfinite(my_w))
            my_meta = cb.meta[panel * cb.k + my_j];
        const int batch = min(32, end - base);

        for (int t0 = 0; t0 < batch; t0 += GATHER_UNROLL) {
            float dense[GATHER_UNROLL][CPL];
            float weight[GATHER_UNROLL], value[GATHER_UNROLL];
            int count[GATHER_UNROLL], column[GATHER_UNROLL];
#pragma unroll
            for (int u = 0; u < GATHER_UNROLL; u++) {
                const int t = t0 + u;
                const int64_t j = __shfl_sync(0xffffffffu, my_j, t);
                weight[u] = __shfl_sync(0xffffffffu, my_w, t);
                const int start = __shfl_sync(0xffffffffu, my_meta.x, t);
                count[u] = __shfl_sync(0xffffffffu, my_meta.y, t);
                value[u] = 0.0f;
                column[u] = 0;
                if (t < batch) {
                    if (!COMPRESSED || count[u] == CSR_DENSE_ROW) {
                        access::load(b + j * ldb, col, n, dense[u]);
                    } else if (lane < count[u]) {
                        column[u] = cb.columns[start + lane];
                        value[u] = cb.values[start + lane];
                    }
                }
            }
#pragma unroll
            for (int u = 0; u < GATHER_UNROLL; u++) {
                if (t0 + u >= batch)
                    break;
                if (!COMPRESSED) {
#pragma unroll
                    for (int t = 0; t < CPL; t++)
                        acc[t] = add_product(acc[t], weight[u], dense[u][t]);
                } else {
                    if (count[u] == CSR_DENSE_ROW) {
#pragma unroll
                        for (int t = 0; t < CPL; t++)
                            mine[lane * CPL + t] =
                                add_product(mine[lane * CPL + t], weight[u], dense[u][t]);
                    } else if (lane < count[u]) {
                        mine[column[u]] = add_product(mine[column[u]], weight[u], value[u]);
                    }
                    __syncwarp();
                }
            }
        }
    }

    if (COMPRESSED) {
#pragma unroll
        for (int t = 0; t < CPL; t++)
            acc[t] = mine[lane * CPL + t];
    }
    float out[CPL];
    if (beta != 0.0f)
        access::load(c + row * ldc, col, n, out);
#pragma unroll
    for (int t = 0; t < CPL; t++) {
        const float scaled = __fmul_rn(alpha, acc[t]);
        out[t] = beta != 0.0f ? __fadd_rn(scaled, __fmul_rn(beta, out[t])) : scaled;
    }
    access::store(c + row * ldc, col, n, out);
}

template <int CPL, bool VEC>
cudaError_t launch(const esmm_csr_view_t &w, int64_t n, float alpha, const float *b,
                   int64_t ldb, float beta, float *c, int64_t ldc,
                   const csr_compressed_b *compressed, cudaStream_t stream)
{
    const dim3 grid((unsigned)((w.rows + GATHER_WARPS - 1) / GATHER_WARPS),
                    (unsigned)((n + 32 * CPL - 1) / (32 * CPL)));
    if (compressed != nullptr)
        csrmm_gather_kernel<CPL, VEC, true><<<grid, GATHER_WARPS * 32, 0, stream>>>(
            w, n, alpha, b, ldb, beta, c, ldc, *compressed);
    else
        csrmm_gather_kernel<CPL, VEC, false><<<grid, GATHER_WARPS * 32, 0, stream>>>(
            w, n, alpha, b, ldb, beta, c, ldc, csr_compressed_b{});
    return cudaGetLastError();
}

} // namespace

cudaError_t launch_csrmm_gather(const esmm_csr_view_t &w, int64_t n, float alpha,
                                const float *b, int64_t ldb, float beta, float *c, int64_t ldc,
                                const csr_compressed_b *compressed, cudaStream_t stream)
{
    const int cpl = csr_cols_per_lane(n);
    const bool vec = csr_rows_aligned(b, ldb, n, cpl) && csr_rows_aligned(c, ldc, n, cpl);
    switch (cpl) {
    case 4:
        return vec ? launch<4, true>(w, n, alpha, b, ldb, beta, c, ldc, compressed, stream)
                   : launch<4, false>(w, n, alpha, b, ldb, beta, c, ldc, compressed, stream);
    case 2:
        return vec ? launch<2, true>(w, n, alpha, b, ldb, beta, c, ldc, compressed, stream)
                   : launch<2, false>(w, n, alpha, b, ldb, beta, c, ldc, compressed, stream);
    default: return launch<1, false>(w, n, alpha, b, ldb, beta, c, ldc, compressed, stream);
    }
}

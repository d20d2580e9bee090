// C = alpha * W * B + beta * C with W in CSR: a warp per (row of W, panel of
// columns), or for narrow B (n <= 64, rows of float4) a group of 16 or 8 lanes
// per row, so that a warp still loads whole float4s and covers 2 or 4 rows. It walks the row's stored entries in order; for each it adds
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

// Where a lane reads its columns of a B row. A lane whose columns lie past n
// reads columns that exist (its sums are never stored), so the entry loop
// carries no bounds checks: the loop is issue-bound, every instruction counts.
template <int CPL, bool VEC> struct lane_columns {
    int64_t at[VEC ? 1 : CPL];

    __device__ lane_columns(int64_t col, int64_t n)
    {
        if (VEC) {
            at[0] = col < n ? col : 0;
        } else {
#pragma unroll
            for (int t = 0; t < CPL; t++)
                at[t] = col + t < n ? col + t : n - 1;
        }
    }
    __device__ void load(const float *row, float (&v)[CPL]) const
    {
        // B is read-only here; __ldg also keeps the load global after the
        // row pointer went through a shuffle.
        if (VEC && CPL == 4) {
            const float4 q = __ldg(reinterpret_cast<const float4 *>(row + at[0]));
            v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
        } else if (VEC && CPL == 2) {
            const float2 q = __ldg(reinterpret_cast<const float2 *>(row + at[0]));
            v[0] = q.x, v[1] = q.y;
        } else {
#pragma unroll
            for (int t = 0; t < CPL; t++)
                v[t] = __ldg(row + at[VEC ? 0 : t] + (VEC ? t : 0));
        }
    }
};

// The stored entries of one batch of 32, one per lane, that a warp walks.
struct entry_batch {
    const float *row; // B's row for the entry, computed once by its lane
    float w;
    int2 meta; // compressed B row of j: {start, count}, or count CSR_DENSE_ROW
};

// Adds entries t .. t + U - 1 of the batch to the row's sums, in order: all U
// B rows are loaded before the first is used.
// With several rows per warp (ROWS > 1) the groups' batches differ in length:
// a group adds only its entries below `size`.
template <int U, int ROWS, int CPL, bool VEC, bool COMPRESSED>
__device__ __forceinline__ void gather_entries(int t, int size, const entry_batch &mine_batch,
                                               const lane_columns<CPL, VEC> &cols,
                                               const csr_compressed_b &cb, int lane,
                                               float (&acc)[CPL], float *partial)
{
    float dense[U][CPL];
    float weight[U], value[U];
    int count[U], column[U];
#pragma unroll
    for (int u = 0; u < U; u++) {
        const float *row = reinterpret_cast<const float *>(
            __shfl_sync(0xffffffffu, reinterpret_cast<unsigned long long>(mine_batch.row), t + u,
                        32 / ROWS));
        weight[u] = __shfl_sync(0xffffffffu, mine_batch.w, t + u, 32 / ROWS);
        count[u] = CSR_DENSE_ROW;
        if (COMPRESSED) {
            const int start = __shfl_sync(0xffffffffu, mine_batch.meta.x, t + u);
            count[u] = __shfl_sync(0xffffffffu, mine_batch.meta.y, t + u);
            value[u] = 0.0f;
            column[u] = 0;
            if (count[u] != CSR_DENSE_ROW && lane < count[u]) {
                column[u] = cb.columns[start + lane];
                value[u] = cb.values[start + lane];
            }
        }
        if (count[u] == CSR_DENSE_ROW)
            cols.load(row, dense[u]);
    }
#pragma unroll
    for (int u = 0; u < U; u++) {
        if (!COMPRESSED) {
            if (ROWS > 1 && t + u >= size)
                continue;
#pragma unroll
            for (int c = 0; c < CPL; c++)
                acc[c] = add_product(acc[c], weight[u], dense[u][c]);
        } else {
            if (count[u] == CSR_DENSE_ROW) {
#pragma unroll
                for (int c = 0; c < CPL; c++)
                    partial[lane * CPL + c] =
                        add_product(partial[lane * CPL + c], weight[u], dense[u][c]);
            } else if (lane < count[u]) {
                partial[column[u]] = add_product(partial[column[u]], weight[u], value[u]);
            }
            __syncwarp();
        }
    }
}

template <int ROWS, int CPL, bool VEC, bool COMPRESSED>
__global__ void __launch_bounds__(GATHER_WARPS * 32)
    csrmm_gather_kernel(esmm_csr_view_t w, int64_t n, float alpha, const float *b, int64_t ldb,
                        float beta, float *c, int64_t ldc, csr_compressed_b cb)
{
    static_assert(ROWS == 1 || !COMPRESSED, "compressed products take a warp per row");
    constexpr int GROUP = 32 / ROWS; // lanes per row
    constexpr int PW = GROUP * CPL;
    // The accumulator of a compressed product lives in shared memory, where a
    // nonzero's lane can reach any column of the panel.
    __shared__ float partial[COMPRESSED ? GATHER_WARPS : 1][COMPRESSED ? PW : 1];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int slot = lane % GROUP; // the lane's place in its row's group
    // Lanes past the last row repeat it without storing, so every shuffle
    // runs with the whole warp and needs no divergence checks.
    const int64_t own_row = ((int64_t)blockIdx.x * GATHER_WARPS + warp) * ROWS + lane / GROUP;
    const int64_t row = own_row < w.rows ? own_row : w.rows - 1;
    const int64_t panel = blockIdx.y;
    const int64_t col = panel * PW + slot * CPL;
    const lane_columns<CPL, VEC> cols(col, n);
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
    const int longest = ROWS > 1 ? __reduce_max_sync(0xffffffffu, end - begin) : end - begin;
    for (int base = begin; base < begin + longest; base += GROUP) {
        const int e = base + slot;
        entry_batch batch{b, 0.0f, make_int2(0, CSR_DENSE_ROW)};
        if (e < end) {
            const int j = w.col_idx[e];
            batch.row = b + j * ldb;
            batch.w = w.values != nullptr ? w.values[e] : w.value;
            if (COMPRESSED && isfinite(batch.w))
                batch.meta = cb.meta[panel * cb.k + j];
        }
        const int size = min(GROUP, end - base);
        const int steps = ROWS > 1 ? __reduce_max_sync(0xffffffffu, max(size, 0)) : size;
        int t = 0;
        for (; t + GATHER_UNROLL <= steps; t += GATHER_UNROLL)
            gather_entries<GATHER_UNROLL, ROWS, CPL, VEC, COMPRESSED>(t, size, batch, cols, cb,
                                                                      lane, acc, mine);
        for (; t < steps; t++)
            gather_entries<1, ROWS, CPL, VEC, COMPRESSED>(t, size, batch, cols, cb, lane, acc,
                                                          mine);
    }

    if (own_row >= w.rows)
        return;
    if (COMPRESSED) {
#pragma unroll
        for (int t = 0; t < CPL; t++)
            acc[t] = mine[lane * CPL + t];
    }
    using access = csr_row_access<CPL, VEC>;
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

template <int ROWS, int CPL, bool VEC>
cudaError_t launch(const esmm_csr_view_t &w, int64_t n, float alpha, const float *b,
                   int64_t ldb, float beta, float *c, int64_t ldc,
                   const csr_compressed_b *compressed, cudaStream_t stream)
{
    constexpr int rows_per_cta = GATHER_WARPS * ROWS, width = 32 / ROWS * CPL;
    const dim3 grid((unsigned)((w.rows + rows_per_cta - 1) / rows_per_cta),
                    (unsigned)((n + width - 1) / width));
    if constexpr (ROWS == 1) {
        if (compressed != nullptr) {
            csrmm_gather_kernel<1, CPL, VEC, true><<<grid, GATHER_WARPS * 32, 0, stream>>>(
                w, n, alpha, b, ldb, beta, c, ldc, *compressed);
            return cudaGetLastError();
        }
    }
    csrmm_gather_kernel<ROWS, CPL, VEC, false><<<grid, GATHER_WARPS * 32, 0, stream>>>(
        w, n, alpha, b, ldb, beta, c, ldc, csr_compressed_b{});
    return cudaGetLastError();
}

} // namespace

cudaError_t launch_csrmm_gather(const esmm_csr_view_t &w, int64_t n, float alpha,
                                const float *b, int64_t ldb, float beta, float *c, int64_t ldc,
                                const csr_compressed_b *compressed, cudaStream_t stream)
{
    // Narrow rows of float4: groups of 16 or 8 lanes per row (the compressed
    // layout is cut for a warp per row, so it keeps that).
    if (compressed == nullptr && n <= 64 && csr_rows_aligned(b, ldb, n, 4) &&
        csr_rows_aligned(c, ldc, n, 4))
        return n <= 32 ? launch<4, 4, true>(w, n, alpha, b, ldb, beta, c, ldc, nullptr, stream)
                       : launch<2, 4, true>(w, n, alpha, b, ldb, beta, c, ldc, nullptr, stream);
    const int cpl = csr_cols_per_lane(n);
    const bool vec = csr_rows_aligned(b, ldb, n, cpl) && csr_rows_aligned(c, ldc, n, cpl);
    switch (cpl) {
    case 4:
        return vec ? launch<1, 4, true>(w, n, alpha, b, ldb, beta, c, ldc, compressed, stream)
                   : launch<1, 4, false>(w, n, alpha, b, ldb, beta, c, ldc, compressed, stream);
    case 2:
        return vec ? launch<1, 2, true>(w, n, alpha, b, ldb, beta, c, ldc, compressed, stream)
                   : launch<1, 2, false>(w, n, alpha, b, ldb, beta, c, ldc, compressed, stream);
    default: return launch<1, 1, false>(w, n, alpha, b, ldb, beta, c, ldc, compressed, stream);
    }
}

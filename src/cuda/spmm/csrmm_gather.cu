// C = alpha * W * B + beta * C with W in CSR, reading the rows of B densely:
// a warp per (row of W, panel of columns), or for narrow B (n <= 64, rows of
// float4) a group of 16 or 8 lanes per row, so that a warp still loads whole
// float4s and covers 2 or 4 rows. It walks the row's stored entries in order
// and adds w * B[j, panel] into the row's sums, in registers. The order of the
// sums and the unfused multiply-add reproduce the CPU backend bit for bit.
#include "cuda/spmm/csr_layout.cuh"

namespace {

constexpr int GATHER_WARPS = 8;
// Stored entries whose B rows are loaded at once. A warp per row moves 512
// bytes an entry and keeps the L2 busy with four; the narrow groups' rows of
// 128 or 256 bytes are bound by latency and need more in flight (on the H100,
// n = 32: 0.047 -> 0.034 ms with eight; a warp per row slows with six or eight).
constexpr int WIDE_UNROLL = 4;
constexpr int NARROW_UNROLL = 8;

// The stored entries of one batch, one per lane, that a warp walks.
struct entry_batch {
    const float *row; // B's row for the entry, computed once by its lane
    float w;
};

// Adds entries t .. t + U - 1 of the batch to the row's sums, in order: all U
// B rows are loaded before the first is used.
// With several rows per warp (ROWS > 1) the groups' batches differ in length:
// a group adds only its entries below `size`.
template <int U, int ROWS, int CPL, bool VEC>
__device__ __forceinline__ void gather_entries(int t, int size, const entry_batch &mine,
                                               const lane_columns<CPL, VEC> &cols,
                                               float (&acc)[CPL])
{
    float dense[U][CPL];
    float weight[U];
#pragma unroll
    for (int u = 0; u < U; u++) {
        const float *row = reinterpret_cast<const float *>(
            __shfl_sync(0xffffffffu, reinterpret_cast<unsigned long long>(mine.row), t + u,
                        32 / ROWS));
        weight[u] = __shfl_sync(0xffffffffu, mine.w, t + u, 32 / ROWS);
        cols.load(row, dense[u]);
    }
#pragma unroll
    for (int u = 0; u < U; u++) {
        if (ROWS > 1 && t + u >= size)
            continue;
#pragma unroll
        for (int c = 0; c < CPL; c++)
            acc[c] = csr_add_product(acc[c], weight[u], dense[u][c]);
    }
}

template <int ROWS, int CPL, bool VEC>
__global__ void __launch_bounds__(GATHER_WARPS * 32)
    csrmm_gather_kernel(esmm_csr_view_t w, int64_t n, float alpha, const float *b, int64_t ldb,
                        float beta, float *c, int64_t ldc)
{
    constexpr int GROUP = 32 / ROWS; // lanes per row
    constexpr int PW = GROUP * CPL;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int slot = lane % GROUP; // the lane's place in its row's group
    // Lanes past the last row repeat it without storing, so every shuffle
    // runs with the whole warp and needs no divergence checks.
    const int64_t own_row = ((int64_t)blockIdx.x * GATHER_WARPS + warp) * ROWS + lane / GROUP;
    const int64_t row = own_row < w.rows ? own_row : w.rows - 1;
    const int64_t col = blockIdx.y * (int64_t)PW + slot * CPL;
    const lane_columns<CPL, VEC> cols(col, n);

    float acc[CPL];
#pragma unroll
    for (int t = 0; t < CPL; t++)
        acc[t] = 0.0f;

    const auto [begin, end] = csr_row(w, row);
    const int length = (int)(end - begin);
    const int longest = ROWS > 1 ? __reduce_max_sync(0xffffffffu, length) : length;
    for (unsigned base = begin; base < begin + longest; base += GROUP) {
        const unsigned e = base + slot;
        entry_batch batch{b, 0.0f};
        if (e < end) {
            batch.row = b + w.col_idx[e] * ldb;
            batch.w = w.values != nullptr ? w.values[e] : w.value;
        }
        const int size = min(GROUP, (int)(end - base)); // <= 0 past a shorter row
        const int steps = ROWS > 1 ? __reduce_max_sync(0xffffffffu, max(size, 0)) : size;
        int t = 0;
        constexpr int U = ROWS > 1 ? NARROW_UNROLL : WIDE_UNROLL;
        for (; t + U <= steps; t += U)
            gather_entries<U, ROWS, CPL, VEC>(t, size, batch, cols, acc);
        if (U > WIDE_UNROLL)
            for (; t + WIDE_UNROLL <= steps; t += WIDE_UNROLL)
                gather_entries<WIDE_UNROLL, ROWS, CPL, VEC>(t, size, batch, cols, acc);
        for (; t < steps; t++)
            gather_entries<1, ROWS, CPL, VEC>(t, size, batch, cols, acc);
    }

    if (own_row < w.rows)
        csr_store_row<CPL, VEC>(c + row * ldc, col, n, alpha, beta, acc);
}

template <int ROWS, int CPL, bool VEC>
cudaError_t launch(const esmm_csr_view_t &w, int64_t n, float alpha, const float *b,
                   int64_t ldb, float beta, float *c, int64_t ldc, cudaStream_t stream)
{
    constexpr int rows_per_cta = GATHER_WARPS * ROWS, width = 32 / ROWS * CPL;
    const dim3 grid((unsigned)((w.rows + rows_per_cta - 1) / rows_per_cta),
                    (unsigned)((n + width - 1) / width));
    csrmm_gather_kernel<ROWS, CPL, VEC><<<grid, GATHER_WARPS * 32, 0, stream>>>(
        w, n, alpha, b, ldb, beta, c, ldc);
    return cudaGetLastError();
}

} // namespace

cudaError_t launch_csrmm_gather(const esmm_csr_view_t &w, int64_t n, float alpha,
                                const float *b, int64_t ldb, float beta, float *c, int64_t ldc,
                                cudaStream_t stream)
{
    // Narrow rows of float4: groups of 16 or 8 lanes per row.
    if (n <= 64 && csr_rows_aligned(b, ldb, n, 4) && csr_rows_aligned(c, ldc, n, 4))
        return n <= 32 ? launch<4, 4, true>(w, n, alpha, b, ldb, beta, c, ldc, stream)
                       : launch<2, 4, true>(w, n, alpha, b, ldb, beta, c, ldc, stream);
    const int cpl = csr_cols_per_lane(n);
    const bool vec = csr_rows_aligned(b, ldb, n, cpl) && csr_rows_aligned(c, ldc, n, cpl);
    switch (cpl) {
    case 4:
        return vec ? launch<1, 4, true>(w, n, alpha, b, ldb, beta, c, ldc, stream)
                   : launch<1, 4, false>(w, n, alpha, b, ldb, beta, c, ldc, stream);
    case 2:
        return vec ? launch<1, 2, true>(w, n, alpha, b, ldb, beta, c, ldc, stream)
                   : launch<1, 2, false>(w, n, alpha, b, ldb, beta, c, ldc, stream);
    default: return launch<1, 1, false>(w, n, alpha, b, ldb, beta, c, ldc, stream);
    }
}

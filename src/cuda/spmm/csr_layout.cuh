#pragma once
// What the CSR kernels share: how the columns of B and C are cut into panels
// a warp covers, and the compressed form of B that lets a product touch only
// B's nonzeros.

#include <cstddef>
#include <cstdint>
#include <cuda_runtime.h>

extern "C" {
#include "csr_problem.h"
}

// Stored entries [begin, end) of row `row` of W. Unsigned: a row may end at
// nnz = INT32_MAX, and a kernel's step past its end, below 2^32, must not
// wrap to a negative index.
struct csr_row_entries {
    unsigned begin, end;
};

__device__ __forceinline__ csr_row_entries csr_row(const esmm_csr_view_t &w, int64_t row)
{
    return {(unsigned)w.row_ptr[row], (unsigned)w.row_ptr[row + 1]};
}

// A warp covers a panel of 32 * cols_per_lane columns of B and C: wide
// enough that each lane loads one float4 at n >= 128, narrow enough that
// small n does not leave lanes idle.
inline int csr_cols_per_lane(int64_t n)
{
    return n > 64 ? 4 : n > 32 ? 2 : 1;
}

// Compressed B, one panel at a time: for B row j and panel p, meta[p * k + j]
// is {start, count}; the row's nonzeros are values[start + e] in column
// columns[start + e] of the panel (e < count). count < 0 marks a row with too
// many nonzeros to be worth compressing: products read it densely. Rows are
// compressed in groups of 32 (a CTA's worth) whose entries are packed tightly
// inside the group's slot, so the compressed rows a product gathers share
// cache lines.
struct csr_compressed_b {
    int2 *meta;
    float *values;
    uint8_t *columns;
    int64_t k, panels, panel_width;
};

constexpr int CSR_COMPRESS_ROWS = 32; // B rows per compression CTA
constexpr int CSR_DENSE_ROW = -1;

// A compressed row costs its entries (4 bytes of value and 1 of column each)
// and one shared-memory update per nonzero; a dense row costs panel_width * 4
// bytes read as float4. The gather gives a compressed row one entry per lane,
// so no row above 32 nonzeros is compressed; above a quarter of the panel the
// compressed row would save too little to pay for its scattered updates.
inline int csr_sparse_row_limit(int panel_width)
{
    return panel_width / 4 < 32 ? panel_width / 4 : 32;
}

// Products wider than this many columns run in slices of near-equal width:
// panels of 32 columns go on the grid's y axis, at most 65535.
constexpr int64_t CSR_MOST_COLUMNS = 65535 * 32;

// The width of a product's slices of n columns (a multiple of 32 but the
// last, which stays over a million columns wide for any n that fits in memory).
inline int64_t csr_slice_width(int64_t n)
{
    if (n <= CSR_MOST_COLUMNS)
        return n;
    const int64_t slices = (n + CSR_MOST_COLUMNS - 1) / CSR_MOST_COLUMNS;
    return ((n + slices - 1) / slices + 31) / 32 * 32;
}

// Whether the compressed nonzeros of B (k x n, in slices of n) have int
// positions (meta's starts): every position lies below the slots of a slice,
// k rounded up to whole groups of rows times its panels' width.
inline bool csr_compressed_positions_fit(int64_t k, int64_t n)
{
    const int64_t slice = csr_slice_width(n);
    const int64_t width = 32 * csr_cols_per_lane(slice);
    const int64_t rows = (k + CSR_COMPRESS_ROWS - 1) / CSR_COMPRESS_ROWS * CSR_COMPRESS_ROWS;
    return (slice + width - 1) / width * width * rows <= (int64_t)INT32_MAX + 1;
}

// Bytes of compressed B for k rows and n columns, cols_per_lane included;
// SIZE_MAX where they would pass what size_t holds (no allocation gives it).
inline size_t csr_compressed_bytes(int64_t k, int64_t n, int cols_per_lane, size_t *values_at,
                                   size_t *columns_at)
{
    const int64_t width = 32 * cols_per_lane;
    const int64_t panels = (n + width - 1) / width;
    const int64_t rows = (k + CSR_COMPRESS_ROWS - 1) / CSR_COMPRESS_ROWS * CSR_COMPRESS_ROWS;
    // The parts below come to under 6 bytes a slot (and 768 of rounding).
    if (rows > 0 && static_cast<uint64_t>(panels * width) > (SIZE_MAX / 8) / rows) {
        *values_at = *columns_at = 0;
        return SIZE_MAX;
    }
    const int64_t slots = panels * rows * width;
    const size_t meta = ((size_t)(panels * k) * sizeof(int2) + 255) & ~(size_t)255;
    const size_t values = ((size_t)slots * sizeof(float) + 255) & ~(size_t)255;
    *values_at = meta;
    *columns_at = meta + values;
    return meta + values + (((size_t)slots + 255) & ~(size_t)255);
}

// Loads and stores of the CSR kernels: float4/float2 when every row of B and C
// the kernel touches is aligned for it, else one float at a time.
template <int CPL, bool VEC> struct csr_row_access {
    // Columns past n read as zero and are never written; with VEC, n is a
    // multiple of CPL, so a lane's columns are all in range or all out.
    __device__ static void load(const float *row, int64_t col, int64_t n, float (&v)[CPL])
    {
        if (VEC && col >= n) {
#pragma unroll
            for (int t = 0; t < CPL; t++)
                v[t] = 0.0f;
        } else if (VEC && CPL == 4) {
            const float4 q = *reinterpret_cast<const float4 *>(row + col);
            v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
        } else if (VEC && CPL == 2) {
            const float2 q = *reinterpret_cast<const float2 *>(row + col);
            v[0] = q.x, v[1] = q.y;
        } else {
#pragma unroll
            for (int t = 0; t < CPL; t++)
                v[t] = col + t < n ? row[col + t] : 0.0f;
        }
    }
    __device__ static void store(float *row, int64_t col, int64_t n, const float (&v)[CPL])
    {
        if (VEC && col >= n) {
            return;
        } else if (VEC && CPL == 4) {
            *reinterpret_cast<float4 *>(row + col) = make_float4(v[0], v[1], v[2], v[3]);
        } else if (VEC && CPL == 2) {
            *reinterpret_cast<float2 *>(row + col) = make_float2(v[0], v[1]);
        } else {
#pragma unroll
            for (int t = 0; t < CPL; t++)
                if (col + t < n)
                    row[col + t] = v[t];
        }
    }
};

// Where a lane reads its columns of a B row. A lane whose columns lie past n
// reads columns that exist (its sums are never stored), so the entry loop
// carries no bounds checks: the loop is issue-bound, every instruction counts.
template <int CPL, bool VEC> struct lane_columns {
    int64_t at[VEC ? 1 : CPL];

    lane_columns() = default;
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

// One term of a CSR sum, rounded as the CPU backend rounds it (no fused
// multiply-add), so that every path gives the same bits.
__device__ __forceinline__ float csr_add_product(float sum, float w, float b)
{
    return __fadd_rn(sum, __fmul_rn(w, b));
}

// Stores alpha * sums + beta * C for a lane's CPL columns of a row of C.
template <int CPL, bool VEC>
__device__ __forceinline__ void csr_store_row(float *row, int64_t col, int64_t n, float alpha,
                                              float beta, const float (&sums)[CPL])
{
    using access = csr_row_access<CPL, VEC>;
    float out[CPL];
    if (beta != 0.0f)
        access::load(row, col, n, out);
#pragma unroll
    for (int t = 0; t < CPL; t++) {
        const float scaled = __fmul_rn(alpha, sums[t]);
        out[t] = beta != 0.0f ? __fadd_rn(scaled, __fmul_rn(beta, out[t])) : scaled;
    }
    access::store(row, col, n, out);
}

// Whether rows of x (leading dimension ld, n columns) can be read CPL at a time.
inline bool csr_rows_aligned(const void *x, int64_t ld, int64_t n, int cols_per_lane)
{
    return cols_per_lane > 1 && n % cols_per_lane == 0 && ld % cols_per_lane == 0 &&
           reinterpret_cast<uintptr_t>(x) % (sizeof(float) * cols_per_lane) == 0;
}

// The CSR launchers (one kernel each; see their files).
cudaError_t launch_csr_compress_b(const float *b, int64_t ldb, int64_t k, int64_t n,
                                  int cols_per_lane, int sparse_row_limit,
                                  const csr_compressed_b &out, cudaStream_t stream);
cudaError_t launch_csrmm_gather(const esmm_csr_view_t &w, int64_t n, float alpha,
                                const float *b, int64_t ldb, float beta, float *c, int64_t ldc,
                                cudaStream_t stream);
cudaError_t launch_csrmm_sparse_b(const esmm_csr_view_t &w, int64_t n, float alpha,
                                  const float *b, int64_t ldb, float beta, float *c,
                                  int64_t ldc, const csr_compressed_b &compressed,
                                  cudaStream_t stream);
cudaError_t launch_csrmm_scatter(const esmm_csr_view_t &w, int64_t n, float alpha,
                                 const float *b, int64_t ldb, float *c, int64_t ldc,
                                 cudaStream_t stream);
cudaError_t launch_csrmv_gather(const esmm_csr_view_t &w, float alpha, const float *x,
                                int64_t incx, float beta, float *y, int64_t incy,
                                cudaStream_t stream);
cudaError_t launch_csrmv_scatter(const esmm_csr_view_t &w, float alpha, const float *x,
                                 int64_t incx, float *y, int64_t incy, cudaStream_t stream);
cudaError_t launch_csr_validate(const esmm_csr_view_t &w, int *valid, cudaStream_t stream);
// Stable transpose of a valid w (allocates its scratch; waits for the stream).
cudaError_t build_csr_transpose(const esmm_csr_view_t &w, int32_t *t_row_ptr, int32_t *t_col_idx,
                                float *t_values, cudaStream_t stream);

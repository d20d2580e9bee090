// Compresses B's nonzeros, one pass over B: a CTA takes 32 rows of one
// panel, counts each row's nonzeros with warp ballots, gives the rows that are
// sparse enough consecutive places in the group's slot (a scan over 32
// counts) and writes their values and columns there. Rows above the limit
// are only marked: products read them densely.
#include "cuda/spmm/csr_layout.cuh"
#include "cuda/warp_scan.cuh"

namespace {

constexpr int COMPRESS_WARPS = 8;
constexpr int ROWS_PER_WARP = CSR_COMPRESS_ROWS / COMPRESS_WARPS;

template <int CPL, bool VEC>
__global__ void __launch_bounds__(COMPRESS_WARPS * 32)
    csr_compress_b_kernel(const float *b, int64_t ldb, int64_t k, int64_t n, int limit,
                          csr_compressed_b out)
{
    __shared__ int counts[CSR_COMPRESS_ROWS];
    __shared__ int starts[CSR_COMPRESS_ROWS];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int64_t panel = blockIdx.y;
    const int64_t first_row = (int64_t)blockIdx.x * CSR_COMPRESS_ROWS;
    const int64_t col = panel * 32 * CPL + lane * CPL;

    float v[ROWS_PER_WARP][CPL];
    unsigned nonzero[ROWS_PER_WARP][CPL];
#pragma unroll
    for (int r = 0; r < ROWS_PER_WARP; r++) {
        const int64_t row = first_row + warp + COMPRESS_WARPS * r;
#pragma unroll
        for (int t = 0; t < CPL; t++)
            v[r][t] = 0.0f;
        if (row < k)
            csr_row_access<CPL, VEC>::load(b + row * ldb, col, n, v[r]);
        int count = 0;
#pragma unroll
        for (int t = 0; t < CPL; t++) {
            nonzero[r][t] = __ballot_sync(0xffffffffu, v[r][t] != 0.0f);
            count += __popc(nonzero[r][t]);
        }
        if (lane == 0)
            counts[warp + COMPRESS_WARPS * r] = count;
    }
    __syncthreads();

    if (warp == 0) {
        const int count = counts[lane];
        const bool sparse = count <= limit;
        const int kept = sparse ? count : 0;
        const int end = warp_inclusive_sum(kept, lane); // of the kept counts
        const int64_t slot = (panel * gridDim.x + blockIdx.x) * CSR_COMPRESS_ROWS *
                             out.panel_width;
        const int start = (int)(slot + end - kept);
        starts[lane] = sparse ? start : CSR_DENSE_ROW;
        const int64_t row = first_row + lane;
        if (row < k)
            out.meta[panel * k + row] = make_int2(start, sparse ? count : CSR_DENSE_ROW);
    }
    __syncthreads();

    const unsigned below = (1u << lane) - 1u;
#pragma unroll
    for (int r = 0; r < ROWS_PER_WARP; r++) {
        int at = starts[warp + COMPRESS_WARPS * r];
        if (at == CSR_DENSE_ROW)
            continue;
#pragma unroll
        for (int t = 0; t < CPL; t++) {
            if (v[r][t] != 0.0f) {
                const int pos = at + __popc(nonzero[r][t] & below);
                out.values[pos] = v[r][t];
                out.columns[pos] = (uint8_t)(lane * CPL + t);
            }
            at += __popc(nonzero[r][t]);
        }
    }
}

template <int CPL, bool VEC>
cudaError_t launch(const float *b, int64_t ldb, int64_t k, int64_t n, int limit,
                   const csr_compressed_b &out, cudaStream_t stream)
{
    const dim3 grid((unsigned)((k + CSR_COMPRESS_ROWS - 1) / CSR_COMPRESS_ROWS),
                    (unsigned)out.panels);
    csr_compress_b_kernel<CPL, VEC><<<grid, COMPRESS_WARPS * 32, 0, stream>>>(b, ldb, k, n,
                                                                               limit, out);
    return cudaGetLastError();
}

} // namespace

cudaError_t launch_csr_compress_b(const float *b, int64_t ldb, int64_t k, int64_t n,
                                  int cols_per_lane, int sparse_row_limit,
                                  const csr_compressed_b &out, cudaStream_t stream)
{
    const bool vec = csr_rows_aligned(b, ldb, n, cols_per_lane);
    switch (cols_per_lane) {
    case 4:
        return vec ? launch<4, true>(b, ldb, k, n, sparse_row_limit, out, stream)
                   : launch<4, false>(b, ldb, k, n, sparse_row_limit, out, stream);
    case 2:
        return vec ? launch<2, true>(b, ldb, k, n, sparse_row_limit, out, stream)
                   : launch<2, false>(b, ldb, k, n, sparse_row_limit, out, stream);
    default: return launch<1, false>(b, ldb, k, n, sparse_row_limit, out, stream);
    }
}

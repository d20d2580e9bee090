// Ladder step 7: warptiling. The block tile is split into warp tiles and
// each warp tile into WM_ITER x WN_ITER sub-tiles; a thread owns one TM x TN
// piece of every sub-tile. A warp's shared-memory reads then span a few
// contiguous runs (no bank conflicts), the accumulators map onto a fixed
// register layout, and blocks are ordered in bands so that the blocks in
// flight at once share their A and B tiles in L2.
#include "cuda/dense/operand_access.cuh"

namespace {

constexpr int BM = 128, BN = 128, BK = 16;   // C tile and k step of a block
constexpr int WM = 64, WN = 32;              // C tile of a warp
constexpr int WM_ITER = 2, WN_ITER = 2;      // sub-tiles per warp tile, along m and n
constexpr int TM = 4, TN = 4;                // a thread's piece of each sub-tile
constexpr int WSUB_M = WM / WM_ITER, WSUB_N = WN / WN_ITER;
constexpr int LANES_N = WSUB_N / TN;         // lanes across a sub-tile's width
constexpr int WARPS_N = BN / WN;
constexpr int THREADS = BM / WM * WARPS_N * 32;
constexpr int GROUP_ROWS = 8;                // tile rows per band of blocks
constexpr int MIN_BLOCKS_PER_SM = 2;

static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles must cover the block tile");
static_assert(WM % WM_ITER == 0 && WN % WN_ITER == 0, "sub-tiles must cover the warp tile");
static_assert(WSUB_M / TM * LANES_N == 32, "a sub-tile must hold one piece per lane");
static_assert(TM % 4 == 0 && TN % 4 == 0, "pieces are read and written as float4");

template <bool A_T, bool B_T>
__global__ __launch_bounds__(THREADS, MIN_BLOCKS_PER_SM) void warptile_kernel(
    const esmm_gemm_problem_t p)
{
    __shared__ __align__(16) float a_tile[BK][BM]; // a_tile[kk][i] = op(A)(row0 + i, k0 + kk)
    __shared__ __align__(16) float b_tile[BK][BN]; // b_tile[kk][j] = op(B)(k0 + kk, col0 + j)

    const tile_coord tile = tile_of_block<GROUP_ROWS>(p.m, p.n, BM, BN);
    const int64_t row0 = tile.row * BM, col0 = tile.col * BN;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    // Corner of the thread's piece in the first sub-tile, relative to the tile.
    const int thread_row = warp / WARPS_N * WM + lane / LANES_N * TM;
    const int thread_col = warp % WARPS_N * WN + lane % LANES_N * TN;

    // acc[wm * TM + r][wn * TN + c]: row r, column c of the piece in sub-tile (wm, wn).
    float acc[WM_ITER * TM][WN_ITER * TN] = {};
    float a_reg[WM_ITER * TM], b_reg[WN_ITER * TN];
    k_major_tile_loader<BK, BM, THREADS, !A_T> a_loader(p.a, p.lda, row0, p.m);
    k_major_tile_loader<BK, BN, THREADS, B_T> b_loader(p.b, p.ldb, col0, p.n);
    for (int64_t k0 = 0; k0 < p.k; k0 += BK) {
        const int k_count = (int)min(p.k - k0, (int64_t)BK);
        a_loader.fetch(k_count);
        b_loader.fetch(k_count);
        a_loader.store(a_tile);
        b_loader.store(b_tile);
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
#pragma unroll
            for (int wm = 0; wm < WM_ITER; ++wm)
#pragma unroll
                for (int r = 0; r < TM; r += 4)
                    *reinterpret_cast<float4 *>(&a_reg[wm * TM + r]) =
                        *reinterpret_cast<const float4 *>(
                            &a_tile[kk][thread_row + wm * WSUB_M + r]);
#pragma unroll
            for (int wn = 0; wn < WN_ITER; ++wn)
#pragma unroll
                for (int c = 0; c < TN; c += 4)
                    *reinterpret_cast<float4 *>(&b_reg[wn * TN + c]) =
                        *reinterpret_cast<const float4 *>(
                            &b_tile[kk][thread_col + wn * WSUB_N + c]);
#pragma unroll
            for (int r = 0; r < WM_ITER * TM; ++r)
#pragma unroll
                for (int c = 0; c < WN_ITER * TN; ++c)
                    acc[r][c] += a_reg[r] * b_reg[c];
        }
        __syncthreads();
    }
    const c_corner corner = c_corner_at(p, row0 + thread_row, col0 + thread_col);
#pragma unroll
    for (int wm = 0; wm < WM_ITER; ++wm)
#pragma unroll
        for (int r = 0; r < TM; ++r) {
            const int i = wm * WSUB_M + r;
            if (i >= corner.rows)
                continue;
            float *c_row = corner.ptr + i * p.ldc;
#pragma unroll
            for (int wn = 0; wn < WN_ITER; ++wn)
#pragma unroll
                for (int c = 0; c < TN; c += 4) {
                    const int j = wn * WSUB_N + c;
                    const float *piece = &acc[wm * TM + r][wn * TN + c];
                    store_c4(p, c_row + j, corner.cols - j,
                             make_float4(piece[0], piece[1], piece[2], piece[3]));
                }
        }
}

} // namespace

cudaError_t launch_warptile(const esmm_gemm_problem_t &p, cudaStream_t stream)
{
    return dispatch_layouts(p, [&](auto a_t, auto b_t) {
        const auto kernel = warptile_kernel<decltype(a_t)::value, decltype(b_t)::value>;
        return launch_over_tiles(kernel, p, BM, BN, THREADS, stream);
    });
}

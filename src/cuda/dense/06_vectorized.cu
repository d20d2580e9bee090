// Ladder step 6: vectorised 2D blocktiling. Global reads are float4 wherever
// alignment and bounds allow, and both operand tiles are stored k-major in
// shared memory (op(A)'s transposed on the way in), so a thread fetches its
// TM values of op(A) and TN values of op(B) with float4 reads too. The
// operands' layouts are template parameters so each access pattern is fixed
// at compile time.
#include "cuda/dense/operand_access.cuh"

namespace {

constexpr int BM = 128, BN = 128, BK = 8; // C tile and k step of a block
constexpr int TM = 8, TN = 8;             // C sub-tile of a thread
constexpr int THREADS = BM / TM * (BN / TN);
static_assert(TM % 4 == 0 && TN % 4 == 0, "sub-tiles are read and written as float4");

template <bool A_T, bool B_T>
__global__ __launch_bounds__(THREADS) void vectorized_kernel(const esmm_gemm_problem_t p)
{
    __shared__ __align__(16) float a_tile[BK][BM]; // a_tile[kk][i] = op(A)(row0 + i, k0 + kk)
    __shared__ __align__(16) float b_tile[BK][BN]; // b_tile[kk][j] = op(B)(k0 + kk, col0 + j)

    const tile_coord tile = tile_of_block<1>(p.m, p.n, BM, BN);
    const int64_t row0 = tile.row * BM, col0 = tile.col * BN;
    const int thread_row = threadIdx.x / (BN / TN) * TM; // corner of the sub-tile in the tile
    const int thread_col = threadIdx.x % (BN / TN) * TN;

    float acc[TM][TN] = {};
    float a_reg[TM], b_reg[TN];
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
            for (int r = 0; r < TM; r += 4)
                *reinterpret_cast<float4 *>(&a_reg[r]) =
                    *reinterpret_cast<const float4 *>(&a_tile[kk][thread_row + r]);
#pragma unroll
            for (int c = 0; c < TN; c += 4)
                *reinterpret_cast<float4 *>(&b_reg[c]) =
                    *reinterpret_cast<const float4 *>(&b_tile[kk][thread_col + c]);
#pragma unroll
            for (int r = 0; r < TM; ++r)
#pragma unroll
                for (int c = 0; c < TN; ++c)
                    acc[r][c] += a_reg[r] * b_reg[c];
        }
        __syncthreads();
    }
    const c_corner corner = c_corner_at(p, row0 + thread_row, col0 + thread_col);
#pragma unroll
    for (int r = 0; r < TM; ++r) {
        if (r >= corner.rows)
            continue;
        float *c_row = corner.ptr + r * p.ldc;
#pragma unroll
        for (int c = 0; c < TN; c += 4)
            store_c4(p, c_row + c, corner.cols - c,
                     make_float4(acc[r][c], acc[r][c + 1], acc[r][c + 2], acc[r][c + 3]));
    }
}

} // namespace

cudaError_t launch_vectorized(const esmm_gemm_problem_t &p, cudaStream_t stream)
{
    return dispatch_layouts(p, [&](auto a_t, auto b_t) {
        const auto kernel = vectorized_kernel<decltype(a_t)::value, decltype(b_t)::value>;
        return launch_over_tiles(kernel, p, BM, BN, THREADS, stream);
    });
}

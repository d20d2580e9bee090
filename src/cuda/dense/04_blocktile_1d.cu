// Ladder step 4: 1D blocktiling. Each thread computes TM consecutive rows of
// one column of C, so every op(B) value read from shared memory feeds TM
// multiply-adds, raising the work done per shared-memory load.
#include "cuda/dense/operand_access.cuh"

namespace {

constexpr int BM = 64, BN = 64, BK = 8; // C tile and k step of a block
constexpr int TM = 8;                   // rows of C per thread
constexpr int THREADS = BM * BN / TM;

__global__ __launch_bounds__(THREADS) void blocktile_1d_kernel(const esmm_gemm_problem_t p)
{
    __shared__ float a_tile[BM][BK];
    __shared__ float b_tile[BK][BN];

    const operand_view a = op_a_view(p), b = op_b_view(p);
    const tile_coord tile = tile_of_block<1>(p.m, p.n, BM, BN);
    const int64_t row0 = tile.row * BM, col0 = tile.col * BN;
    const int thread_row = threadIdx.x / BN * TM; // first of the thread's rows in the tile
    const int thread_col = threadIdx.x % BN;

    float acc[TM] = {};
    for (int64_t k0 = 0; k0 < p.k; k0 += BK) {
        load_tile<BM, BK, THREADS>(a, row0, k0, a_tile);
        load_tile<BK, BN, THREADS>(b, k0, col0, b_tile);
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            const float b_val = b_tile[kk][thread_col];
#pragma unroll
            for (int r = 0; r < TM; ++r)
                acc[r] += a_tile[thread_row + r][kk] * b_val;
        }
        __syncthreads();
    }
#pragma unroll
    for (int r = 0; r < TM; ++r)
        store_c(p, row0 + thread_row + r, col0 + thread_col, acc[r]);
}

} // namespace

cudaError_t launch_blocktile_1d(const esmm_gemm_problem_t &p, cudaStream_t stream)
{
    return launch_over_tiles(blocktile_1d_kernel, p, BM, BN, THREADS, stream);
}

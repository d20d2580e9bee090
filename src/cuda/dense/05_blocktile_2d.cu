// Ladder step 5: 2D blocktiling. Each thread computes a TM x TN sub-tile of
// C from TM values of op(A) and TN values of op(B) held in registers, so one
// shared-memory load now feeds TN (or TM) multiply-adds instead of one.
#include "cuda/dense/operand_access.cuh"

namespace {

constexpr int BK = 8;           // k step of a block
constexpr int TM = 8, TN = 8;   // C sub-tile of a thread

template <int BM, int BN>
__host__ __device__ constexpr int block_threads()
{
    return BM / TM * (BN / TN);
}

template <int BM, int BN>
__global__ __launch_bounds__(block_threads<BM, BN>()) void blocktile_2d_kernel(
    const esmm_gemm_problem_t p)
{
    constexpr int THREADS = block_threads<BM, BN>();
    __shared__ float a_tile[BM][BK];
    __shared__ float b_tile[BK][BN];

    const operand_view a = op_a_view(p), b = op_b_view(p);
    const tile_coord tile = tile_of_block<1>(p.m, p.n, BM, BN);
    const int64_t row0 = tile.row * BM, col0 = tile.col * BN;
    const int thread_row = threadIdx.x / (BN / TN) * TM; // corner of the sub-tile in the tile
    const int thread_col = threadIdx.x % (BN / TN) * TN;

    float acc[TM][TN] = {};
    float a_reg[TM], b_reg[TN];
    for (int64_t k0 = 0; k0 < p.k; k0 += BK) {
        load_tile<BM, BK, THREADS>(a, row0, k0, a_tile);
        load_tile<BK, BN, THREADS>(b, k0, col0, b_tile);
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
#pragma unroll
            for (int r = 0; r < TM; ++r)
                a_reg[r] = a_tile[thread_row + r][kk];
#pragma unroll
            for (int c = 0; c < TN; ++c)
                b_reg[c] = b_tile[kk][thread_col + c];
#pragma unroll
            for (int r = 0; r < TM; ++r)
#pragma unroll
                for (int c = 0; c < TN; ++c)
                    acc[r][c] += a_reg[r] * b_reg[c];
        }
        __syncthreads();
    }
#pragma unroll
    for (int r = 0; r < TM; ++r)
#pragma unroll
        for (int c = 0; c < TN; ++c)
            store_c(p, row0 + thread_row + r, col0 + thread_col + c, acc[r][c]);
}

} // namespace

// Small problems take 64 x 64 tiles so that they still spread over the GPU.
cudaError_t launch_blocktile_2d(const esmm_gemm_problem_t &p, cudaStream_t stream)
{
    if (p.m >= 128 && p.n >= 128)
        return launch_over_tiles(blocktile_2d_kernel<128, 128>, p, 128, 128,
                                 block_threads<128, 128>(), stream);
    return launch_over_tiles(blocktile_2d_kernel<64, 64>, p, 64, 64, block_threads<64, 64>(),
                             stream);
}

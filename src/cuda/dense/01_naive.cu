// Ladder step 1: one thread per element of C, each a full dot product read
// straight from global memory. Consecutive threads take consecutive rows of
// C, so a warp's reads of B and writes of C are strided: the baseline.
#include "cuda/dense/operand_access.cuh"

namespace {

constexpr int TILE = 32; // a block covers TILE x TILE elements of C

__global__ __launch_bounds__(TILE * TILE) void naive_kernel(const esmm_gemm_problem_t p)
{
    const tile_coord tile = tile_of_block<1>(p.m, p.n, TILE, TILE);
    const int64_t i = tile.row * TILE + threadIdx.x % TILE;
    const int64_t j = tile.col * TILE + threadIdx.x / TILE;
    if (i < p.m && j < p.n)
        store_c(p, i, j, dot_row_col(op_a_view(p), op_b_view(p), i, j));
}

} // namespace

cudaError_t launch_naive(const esmm_gemm_problem_t &p, cudaStream_t stream)
{
    return launch_over_tiles(naive_kernel, p, TILE, TILE, TILE * TILE, stream);
}

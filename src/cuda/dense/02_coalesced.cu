// Ladder step 2: the naive kernel with threads laid along n, C's contiguous
// dimension: a warp now reads one row of op(B) and writes one row of C in a
// single coalesced access, and shares each element of op(A) (a broadcast).
#include "cuda/dense/operand_access.cuh"

namespace {

constexpr int TILE = 32; // a block covers TILE x TILE elements of C

__global__ __launch_bounds__(TILE * TILE) void coalesced_kernel(const esmm_gemm_problem_t p)
{
    const tile_coord tile = tile_of_block<1>(p.m, p.n, TILE, TILE);
    const int64_t i = tile.row * TILE + threadIdx.x / TILE;
    const int64_t j = tile.col * TILE + threadIdx.x % TILE;
    if (i < p.m && j < p.n)
        store_c(p, i, j, dot_row_col(op_a_view(p), op_b_view(p), i, j));
}

} // namespace

cudaError_t launch_coalesced(const esmm_gemm_problem_t &p, cudaStream_t stream)
{
    return launch_over_tiles(coalesced_kernel, p, TILE, TILE, TILE * TILE, stream);
}

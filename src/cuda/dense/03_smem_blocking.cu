// Ladder step 3: shared-memory blocking. A block walks k in TILE-wide steps,
// staging a TILE x TILE tile of op(A) and of op(B) in shared memory, so each
// global element is read once per block instead of once per thread.
#include "cuda/dense/operand_access.cuh"

namespace {

constexpr int TILE = 32; // C tile side and k step; one thread per C element
constexpr int THREADS = TILE * TILE;

__global__ __launch_bounds__(THREADS) void smem_blocking_kernel(const esmm_gemm_problem_t p)
{
    __shared__ float a_tile[TILE][TILE];
    __shared__ float b_tile[TILE][TILE];

    const operand_view a = op_a_view(p), b = op_b_view(p);
    const tile_coord tile = tile_of_block<1>(p.m, p.n, TILE, TILE);
    const int64_t row0 = tile.row * TILE, col0 = tile.col * TILE;
    const int ty = threadIdx.x / TILE, tx = threadIdx.x % TILE;

    float acc = 0.0f;
    for (int64_t k0 = 0; k0 < p.k; k0 += TILE) {
        load_tile<TILE, TILE, THREADS>(a, row0, k0, a_tile);
        load_tile<TILE, TILE, THREADS>(b, k0, col0, b_tile);
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < TILE; ++kk)
            acc += a_tile[ty][kk] * b_tile[kk][tx];
        __syncthreads();
    }
    store_c(p, row0 + ty, col0 + tx, acc);
}

} // namespace

cudaError_t launch_smem_blocking(const esmm_gemm_problem_t &p, cudaStream_t stream)
{
    return launch_over_tiles(smem_blocking_kernel, p, TILE, TILE, THREADS, stream);
}

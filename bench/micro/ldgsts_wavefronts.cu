/*
 * How many shared-memory wavefronts a 4-byte cp.async (LDGSTS) costs under
 * four ways of mapping a warp's lanes onto a 128-row x 32-k tile stored
 * [k][mn] (rows of 132 floats, as the dense kernel's tiles): the question
 * behind the NN dense kernel's bank conflicts (README, targets). Not part of
 * the build; on a GPU:
 *
 *   nvcc -arch=sm_90 -O3 bench/micro/ldgsts_wavefronts.cu -o ldgsts_wavefronts
 *   ncu --metrics M ./ldgsts_wavefronts
 *
 * with M = sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum,
 * l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum and
 * smsp__inst_executed_op_ldgsts.sum (comma-separated).
 */
#include <cstdio>
#include <cuda_runtime.h>

namespace {

constexpr int ROW = 132;   // shared floats per k, as in the dense kernel
constexpr int ROWS = 128;  // rows (m or n) of the tile
constexpr int K_TILE = 32;
constexpr int WARPS = 8;
constexpr int TILES = 256; // k-tiles each block copies
constexpr int LD = 2048;   // floats between stored rows
constexpr int BLOCKS = 264;

enum class lane_map {
    rows4_k8,     // a copy covers 4 rows x 8 k (the dense kernel's K_CONTIG loader)
    row1_k32_xor, // one row x 32 k, stored at column mn ^ (k >> 3)
    row1_k32,     // one row x 32 k, stored at column mn
    rows2_k16_xor // two rows x 16 k, stored at column mn ^ (((k >> 3) & 1) << 1)
};

__device__ __forceinline__ void copy4(float *dst, const float *src)
{
    const unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(address), "l"(src));
}

template <lane_map MAP> __global__ void copy_tiles(const float *x, float *sink)
{
    __shared__ __align__(16) float tile[K_TILE * ROW];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const float *rows = x + static_cast<size_t>(blockIdx.x) * ROWS * LD;
    for (int t = 0; t < TILES; ++t) {
        const int k0 = (t % (LD / K_TILE)) * K_TILE;
        if (MAP == lane_map::rows4_k8) {
#pragma unroll
            for (int r = 0; r < ROWS / (4 * WARPS); ++r)
#pragma unroll
                for (int kg = 0; kg < K_TILE / 8; ++kg) {
                    const int mn = warp * 4 + lane / 8 + r * 4 * WARPS, k = kg * 8 + lane % 8;
                    copy4(tile + k * ROW + mn, rows + static_cast<size_t>(mn) * LD + k0 + k);
                }
        } else if (MAP == lane_map::rows2_k16_xor) {
#pragma unroll
            for (int r = 0; r < ROWS / WARPS / 2; ++r)
#pragma unroll
                for (int half = 0; half < 2; ++half) {
                    const int mn = warp * (ROWS / WARPS) + 2 * r + lane / 16;
                    const int k = half * 16 + lane % 16;
                    // Two rows (adjacent banks) by 8 k, twice: the xor moves
                    // the second 8 k two banks on, so 32 lanes reach 32 banks.
                    const int column = mn ^ (((k >> 3) & 1) << 1);
                    copy4(tile + k * ROW + column, rows + static_cast<size_t>(mn) * LD + k0 + k);
                }
        } else {
#pragma unroll
            for (int r = 0; r < ROWS / WARPS; ++r) {
                const int mn = warp * (ROWS / WARPS) + r, k = lane;
                // The xor moves each group of 8 k to another bank of the
                // 4-float group, so 32 k of one row reach 32 banks.
                const int column = MAP == lane_map::row1_k32_xor ? (mn ^ (k >> 3)) : mn;
                copy4(tile + k * ROW + column, rows + static_cast<size_t>(mn) * LD + k0 + k);
            }
        }
        asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;" ::: "memory");
        __syncthreads();
    }
    if (threadIdx.x == 0)
        sink[blockIdx.x] = tile[lane * ROW + warp];
}

} // namespace

int main()
{
    float *x = nullptr, *sink = nullptr;
    const size_t floats = static_cast<size_t>(BLOCKS) * ROWS * LD;
    if (cudaMalloc(&x, floats * sizeof(float)) != cudaSuccess ||
        cudaMalloc(&sink, BLOCKS * sizeof(float)) != cudaSuccess ||
        cudaMemset(x, 0, floats * sizeof(float)) != cudaSuccess) {
        std::fprintf(stderr, "ldgsts_wavefronts: no device memory\n");
        return 1;
    }
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    void (*const kernels[])(const float *, float *) = {copy_tiles<lane_map::rows4_k8>,
                                                        copy_tiles<lane_map::row1_k32_xor>,
                                                        copy_tiles<lane_map::row1_k32>,
                                                        copy_tiles<lane_map::rows2_k16_xor>};
    const char *const names[] = {"4 rows x 8 k", "1 row x 32 k, xor", "1 row x 32 k",
                                 "2 rows x 16 k, xor"};
    for (int i = 0; i < 4; ++i) {
        kernels[i]<<<BLOCKS, WARPS * 32>>>(x, sink);
        cudaEventRecord(start);
        for (int run = 0; run < 10; ++run)
            kernels[i]<<<BLOCKS, WARPS * 32>>>(x, sink);
        cudaEventRecord(stop);
        cudaEventSynchronize(stop);
        float ms = 0.0f;
        cudaEventElapsedTime(&ms, start, stop);
        std::printf("%-20s %.3f ms a launch (%s)\n", names[i], ms / 10,
                    cudaGetErrorString(cudaGetLastError()));
    }
    cudaFree(x);
    cudaFree(sink);
    return 0;
}

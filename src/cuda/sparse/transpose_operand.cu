// The k-major copy of the skipping kernel's wide operand when that operand's
// rows run along k (op(B) = B^T in the kernel's problem). The kernel gathers
// whole k rows of it: read straight from the operand, each listed k would be
// 256 4-byte reads from 256 rows (measured at 4096^3, B's strips at
// d = 0.125: esmm_sgemm took 1.03 ms, 0.58 ms with A stored k-major). The
// copy moves 8 bytes per element; esmm_wide_read says when that pays.
//
// 32 x 32 tiles through shared memory (a padded column so the transposed
// reads hit 32 banks): reads and writes are 128-byte rows. A grid of at most
// 8 blocks per SM strides over the tiles, so a launch the plan closes costs
// little.
#include "cuda/sparse/transpose_operand.cuh"

namespace {

constexpr int TILE = 32;
constexpr int ROWS_PER_PASS = 8;
constexpr int THREADS = TILE * ROWS_PER_PASS;
constexpr int BLOCKS_PER_SM = 8;

__global__ void __launch_bounds__(THREADS)
    transpose_operand_kernel(const float *x, int64_t ld, int64_t rows, int64_t cols, float *out,
                             int64_t out_ld, skip_gate gate)
{
    if (!gate_open(gate))
        return;
    __shared__ float tile[TILE][TILE + 1];
    const int tx = threadIdx.x % TILE, ty = threadIdx.x / TILE;
    const int64_t tiles_c = (cols + TILE - 1) / TILE;
    const int64_t tiles = (rows + TILE - 1) / TILE * tiles_c;
    for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
        const int64_t r0 = t / tiles_c * TILE, c0 = t % tiles_c * TILE;
        // Fixed trip counts, so each thread's loads are all issued before any is used.
#pragma unroll
        for (int j = 0; j < TILE / ROWS_PER_PASS; ++j) {
            const int i = ty + j * ROWS_PER_PASS;
            if (r0 + i < rows && c0 + tx < cols)
                tile[i][tx] = x[(r0 + i) * ld + c0 + tx];
        }
        __syncthreads();
#pragma unroll
        for (int j = 0; j < TILE / ROWS_PER_PASS; ++j) {
            const int i = ty + j * ROWS_PER_PASS;
            if (c0 + i < cols && r0 + tx < rows)
                out[(c0 + i) * out_ld + r0 + tx] = tile[tx][i];
        }
        // The next tile overwrites this one.
        __syncthreads();
    }
}

} // namespace

cudaError_t launch_transpose_operand(const float *x, int64_t ld, int64_t rows, int64_t cols,
                                     float *out, const skip_gate &gate, cudaStream_t stream)
{
    const int64_t tiles = (rows + TILE - 1) / TILE * ((cols + TILE - 1) / TILE);
    if (tiles == 0)
        return cudaSuccess;
    int device = 0, sms = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err == cudaSuccess)
        err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    if (err != cudaSuccess)
        return err;
    const int64_t cap = (int64_t)sms * BLOCKS_PER_SM;
    const unsigned blocks = (unsigned)(tiles < cap ? tiles : cap);
    transpose_operand_kernel<<<blocks, THREADS, 0, stream>>>(x, ld, rows, cols, out,
                                                             esmm_wide_copy_ld(rows), gate);
    return cudaGetLastError();
}

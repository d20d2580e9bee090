// 08 — pipelined: the warptiled 128x128 kernel fed by a multi-stage cp.async
// pipeline, so global loads for tile kt+STAGES-1 are in flight while tile kt
// is computed. This is the dense path of esmm_sgemm and the base the sparse
// kernels extend.
//
// Shared memory always holds op(A) as [k][m] and op(B) as [k][n] (padded
// rows), whatever the operand's storage, so one compute loop serves all four
// op combinations: an operand stored contiguous along m/n is copied with
// 16-byte cp.async; one stored contiguous along k is transposed on the way in
// with 4-byte cp.async (cp.async cannot transpose wider chunks).
#include <cuda_runtime.h>

#include "cuda/dense/ladder.cuh"
#include "cuda/dense/pipelined_tile.cuh"

namespace {

using cfg = pipelined_config;

template <bool A_K_CONTIG, bool B_K_CONTIG>
__global__ void __launch_bounds__(cfg::THREADS, cfg::MIN_CTAS_PER_SM)
    pipelined_kernel(esmm_gemm_problem_t p)
{
    extern __shared__ __align__(16) float smem[];
    float *a_smem = smem;
    float *b_smem = smem + cfg::STAGES * cfg::STAGE_FLOATS;

    int64_t tile_m, tile_n;
    pipelined_tile_coords(p.m, p.n, tile_m, tile_n);
    const int64_t m0 = tile_m * cfg::BM, n0 = tile_n * cfg::BN;

    const tile_loader<A_K_CONTIG> a_load(p.a, p.lda, m0, p.m);
    const tile_loader<B_K_CONTIG> b_load(p.b, p.ldb, n0, p.n);
    const int64_t k_tiles = (p.k + cfg::BK - 1) / cfg::BK;
    const int64_t full_k_tiles = p.k / cfg::BK;

    // Copies k-tile kt into a stage; only the last, partial tile checks k.
    auto issue = [&](int64_t kt, int stage) {
        float *a_stage = a_smem + stage * cfg::STAGE_FLOATS;
        float *b_stage = b_smem + stage * cfg::STAGE_FLOATS;
        if (kt < full_k_tiles) {
            a_load.template issue<false>(a_stage, kt, p.k, p.lda);
            b_load.template issue<false>(b_stage, kt, p.k, p.ldb);
        } else if (kt < k_tiles) {
            a_load.template issue<true>(a_stage, kt, p.k, p.lda);
            b_load.template issue<true>(b_stage, kt, p.k, p.ldb);
        }
        // One group per call, even empty, so wait_group counts stay uniform.
        cp_async_commit();
    };

#pragma unroll
    for (int s = 0; s < cfg::STAGES - 1; ++s)
        issue(s, s);

    warp_tile_accumulator acc;
    int read_stage = 0, write_stage = cfg::STAGES - 1;
    for (int64_t kt = 0; kt < k_tiles; ++kt) {
        cp_async_wait<cfg::STAGES - 2>();
        // Tile kt is visible to every thread, and every thread has finished
        // computing tile kt-1, whose stage the next copy overwrites.
        __syncthreads();
        issue(kt + cfg::STAGES - 1, write_stage);
        acc.multiply_tile(a_smem + read_stage * cfg::STAGE_FLOATS,
                          b_smem + read_stage * cfg::STAGE_FLOATS);
        read_stage = read_stage + 1 == cfg::STAGES ? 0 : read_stage + 1;
        write_stage = write_stage + 1 == cfg::STAGES ? 0 : write_stage + 1;
    }
    cp_async_wait<0>();

    acc.store(p, m0, n0);
}

template <bool A_K_CONTIG, bool B_K_CONTIG>
cudaError_t launch_layout(const esmm_gemm_problem_t &p, cudaStream_t stream)
{
    auto kernel = pipelined_kernel<A_K_CONTIG, B_K_CONTIG>;
    const int smem_bytes = cfg::SMEM_BYTES;
    cudaError_t err =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes);
    if (err != cudaSuccess)
        return err;
    const int64_t tiles = pipelined_tile_count(p.m, p.n);
    if (tiles > 0x7fffffff)
        return cudaErrorInvalidConfiguration;
    kernel<<<(unsigned)tiles, cfg::THREADS, smem_bytes, stream>>>(p);
    return cudaGetLastError();
}

} // namespace

cudaError_t launch_pipelined(const esmm_gemm_problem_t &p, cudaStream_t stream)
{
    // op(A) = A (N): A's rows run along k. op(B) = B^T (T): B's rows run along k.
    const bool a_k_contig = p.op_a == ESMM_OP_N;
    const bool b_k_contig = p.op_b == ESMM_OP_T;
    if (a_k_contig)
        return b_k_contig ? launch_layout<true, true>(p, stream)
                          : launch_layout<true, false>(p, stream);
    return b_k_contig ? launch_layout<false, true>(p, stream)
                      : launch_layout<false, false>(p, stream);
}

// 08 — pipelined: the warptiled 128x128 kernel fed by a multi-stage cp.async
// pipeline, so global loads for tile kt+STAGES-1 are in flight while tile kt
// is computed (on 64x32 or 128x64 tiles where C is at most 64 wide or tall).
// This is the dense path of esmm_sgemm and the base the sparse kernels extend.
//
// Shared memory always holds op(A) as [k][m] and op(B) as [k][n] (rows padded
// where transposed, smem_row), whatever the operand's storage, so one compute
// loop serves all four op combinations: an operand stored contiguous along
// m/n is copied with 16-byte cp.async; one stored contiguous along k is
// transposed on the way in with 4-byte cp.async (cp.async cannot transpose
// wider chunks).
#include <cuda_runtime.h>

#include "cuda/dense/ladder.cuh"
#include "cuda/dense/pipelined_tile.cuh"
#include "cuda/sparse/plan_gate.cuh"
#include "cuda/transpose_operand.cuh"

namespace {

template <class cfg, tile_layout A_LAYOUT, tile_layout B_LAYOUT, bool TRANSPOSED_C, bool SPLIT>
__global__ void __launch_bounds__(cfg::THREADS, cfg::MIN_CTAS_PER_SM)
    pipelined_kernel(esmm_gemm_problem_t whole, k_layers layers, dense_gate gate)
{
    // Queued beside the zero-skipping kernel: the plan on the device decides
    // which of the two runs.
    if (!enter_gated(gate))
        return;
    const esmm_gemm_problem_t p = layer_problem<SPLIT, TRANSPOSED_C>(whole, layers);
    extern __shared__ __align__(16) float smem[];
    float *a_smem = smem;
    float *b_smem = smem + cfg::STAGES * cfg::A_STAGE;

    int64_t tile_m, tile_n;
    pipelined_tile_coords<cfg>(p.m, p.n, tile_m, tile_n);
    const int64_t m0 = tile_m * cfg::BM, n0 = tile_n * cfg::BN;

    const tile_loader<cfg, A_LAYOUT, cfg::BM> a_load(p.a, p.lda, m0, p.m);
    const tile_loader<cfg, B_LAYOUT, cfg::BN> b_load(p.b, p.ldb, n0, p.n);
    const int64_t k_tiles = (p.k + cfg::BK - 1) / cfg::BK;
    const int64_t full_k_tiles = p.k / cfg::BK;

    // Copies k-tile kt into a stage; only the last, partial tile checks k.
    auto issue = [&](int64_t kt, int stage) {
        float *a_stage = a_smem + stage * cfg::A_STAGE;
        float *b_stage = b_smem + stage * cfg::B_STAGE;
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

    warp_tile_accumulator<laid_out<cfg, A_LAYOUT, B_LAYOUT>> acc;
    int read_stage = 0, write_stage = cfg::STAGES - 1;
    for (int64_t kt = 0; kt < k_tiles; ++kt) {
        cp_async_wait<cfg::STAGES - 2>();
        // Tile kt is visible to every thread, and every thread has finished
        // computing tile kt-1, whose stage the next copy overwrites.
        __syncthreads();
        issue(kt + cfg::STAGES - 1, write_stage);
        acc.multiply_tile(a_smem + read_stage * cfg::A_STAGE,
                          b_smem + read_stage * cfg::B_STAGE);
        read_stage = read_stage + 1 == cfg::STAGES ? 0 : read_stage + 1;
        write_stage = write_stage + 1 == cfg::STAGES ? 0 : write_stage + 1;
    }
    cp_async_wait<0>();

    acc.template store<TRANSPOSED_C>(p, m0, n0);
}

// Measured on the H100 at 4096^3: 32-deep k-tiles in 3 stages beat 16-deep
// ones in 4 stages for every layout (TN 0.95x against 0.89x cuBLAS), and
// 128x128 tiles at 2 CTAs per SM beat cuBLAS's own 256x128 shape and 128x256
// (8x16 per thread, 1 CTA per SM: NN 0.84-0.90x against 0.94x), whose
// compiled inner loop issues worse than cuBLAS's; so did 8x16 and 16x8 per
// thread in 128x128 tiles of 128 threads at 2 CTAs per SM (NN 0.84-0.88x).
using wide_tiles = pipelined_config<32, 3>;
// Where C is at most NARROW_SIDE wide or tall, 128x128 tiles would compute
// mostly values past C (118 of 128 columns at n = 10), so its narrow side
// runs along the tile's columns: 64x32 tiles (128 threads of 4x4 values, more
// CTAs for the SMs), or past 32 and where 128x64 tiles still give every SM
// two CTAs, those (128 threads of 8x8 values, as the wide tiles': half the
// shared loads per product). The k-tiles and splits are the wide tiles', so
// every value's sum, and so its bits, are theirs and the skipping kernels'.
using narrow_tiles = pipelined_config<32, 3, 64, 32, 1, 1, 4>;
using half_tiles = pipelined_config<32, 2, 128, 64, 2, 2, 3>;
constexpr int64_t NARROW_SIDE = 64;

// Launches the kernel in tile form cfg for the layouts the dispatch picks.
template <class cfg> struct pipelined_launch {
    dense_gate gate;
    float *partials;
    cudaStream_t stream;

    template <tile_layout A_LAYOUT, tile_layout B_LAYOUT, bool TRANSPOSED_C>
    cudaError_t run(const esmm_gemm_problem_t &p)
    {
        const k_layers layers = split_layers(p, partials);
        auto kernel = layers.count > 1
                          ? pipelined_kernel<cfg, A_LAYOUT, B_LAYOUT, TRANSPOSED_C, true>
                          : pipelined_kernel<cfg, A_LAYOUT, B_LAYOUT, TRANSPOSED_C, false>;
        return launch_cfg_tiles<cfg>(kernel, p, layers.count, stream, p, layers, gate);
    }
};

// Runs q on tiles cfg with C's narrower side along the tiles' columns.
template <class cfg>
cudaError_t run_narrow(const esmm_gemm_problem_t &q, dense_gate gate, float *partials,
                       cudaStream_t stream)
{
    pipelined_launch<cfg> launch = {gate, partials, stream};
    return q.n <= q.m ? dispatch_operand_layouts<false>(q, launch)
                      : dispatch_operand_layouts<true>(transposed_problem(q), launch);
}

} // namespace

cudaError_t launch_pipelined_gated(const esmm_gemm_problem_t &p, const esmm_plan_stats_t *gate,
                                   bool settled, float *partials, const float *wide_copy,
                                   cudaStream_t stream)
{
    const esmm_copied_t copied =
        wide_copy != nullptr ? esmm_dense_copy(p.m, p.n, p.op_a, p.op_b) : ESMM_COPY_NONE;
    const float *copy =
        copied != ESMM_COPY_NONE ? wide_copy + copy_offset(p, copied) : nullptr;
    const esmm_gemm_problem_t q = reading_copy(p, copied, copy);
    const int64_t narrow = q.m < q.n ? q.m : q.n, wide = q.m < q.n ? q.n : q.m;
    if (narrow <= NARROW_SIDE) {
        const int64_t half_ctas = (wide + half_tiles::BM - 1) / half_tiles::BM *
                                  esmm_k_split(q.m, q.n, q.k).splits;
        return narrow > narrow_tiles::BN && half_ctas >= ESMM_SPLIT_CTAS
                   ? run_narrow<half_tiles>(q, dense_gate{gate, settled}, partials, stream)
                   : run_narrow<narrow_tiles>(q, dense_gate{gate, settled}, partials, stream);
    }
    pipelined_launch<wide_tiles> launch = {dense_gate{gate, settled}, partials, stream};
    return dispatch_layouts(q, launch);
}

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

// The dense pass: every k-tile of the problem (a split layer's, when split)
// in order; only the last, partial tile checks k, zero-filling past it.
template <class cfg, tile_layout A_LAYOUT, tile_layout B_LAYOUT>
__device__ __forceinline__ void multiply_k_tiles(warp_tile_accumulator<cfg> &acc, float *a_smem,
                                                 float *b_smem, const esmm_gemm_problem_t &p,
                                                 int64_t m0, int64_t n0)
{
    const tile_loader<cfg, A_LAYOUT, cfg::BM> a_load(p.a, p.lda, m0, p.m);
    const tile_loader<cfg, B_LAYOUT, cfg::BN> b_load(p.b, p.ldb, n0, p.n);
    const int64_t k_tiles = (p.k + cfg::BK - 1) / cfg::BK;
    const int64_t full_k_tiles = p.k / cfg::BK;
    run_pipeline<cfg>(
        k_tiles,
        [&](int64_t kt, int stage) {
            float *a_stage = a_smem + stage * cfg::A_STAGE;
            float *b_stage = b_smem + stage * cfg::B_STAGE;
            if (kt < full_k_tiles) {
                a_load.template issue<false>(a_stage, kt, p.k, p.lda);
                b_load.template issue<false>(b_stage, kt, p.k, p.ldb);
            } else if (kt < k_tiles) {
                a_load.template issue<true>(a_stage, kt, p.k, p.lda);
                b_load.template issue<true>(b_stage, kt, p.k, p.ldb);
            }
            cp_async_commit();
        },
        [&](int64_t, int stage) {
            acc.multiply_tile(a_smem + stage * cfg::A_STAGE, b_smem + stage * cfg::B_STAGE);
        });
}

// The union path (ESMM_PLAN_UNION): only the k in the plan's list, in
// increasing order, BK to a stage, gathered as the skipping kernels gather
// theirs (issue_list). A split layer (from k0, layer_k deep) takes the listed
// k inside its range, which the list's counts per k-tile give. The sums are
// the dense pass's, but for the skipped products, which are all zero: the
// same bits (but for the sign of a zero sum, README).
template <class cfg, tile_layout A_LAYOUT, tile_layout B_LAYOUT>
__device__ __forceinline__ void multiply_listed(warp_tile_accumulator<cfg> &acc, float *a_smem,
                                                float *b_smem, const esmm_gemm_problem_t &whole,
                                                const esmm_union_list_t &list, int64_t k0,
                                                int64_t layer_k, int64_t m0, int64_t n0)
{
    static_assert(cfg::BK <= ESMM_UNION_PAD, "a stage reads at most BK entries past the list");
    const int begin = list.starts[k0 / ESMM_UNION_TILE];
    const int listed = list.starts[(k0 + layer_k + ESMM_UNION_TILE - 1) / ESMM_UNION_TILE] - begin;
    const int *entries = list.entries + begin;
    // Listed k count from the product's first k: the loaders read the whole operands.
    const tile_loader<cfg, A_LAYOUT, cfg::BM> a_load(whole.a, whole.lda, m0, whole.m);
    const tile_loader<cfg, B_LAYOUT, cfg::BN> b_load(whole.b, whole.ldb, n0, whole.n);
    const int stages = (listed + cfg::BK - 1) / cfg::BK;
    run_pipeline<cfg>(
        stages,
        [&](int64_t s, int stage) {
            if (s < stages) {
                const int *k_of = entries + s * cfg::BK;
                const int count = listed - (int)s * cfg::BK;
                a_load.issue_list(a_smem + stage * cfg::A_STAGE, count,
                                  listed_row_offset<A_LAYOUT>{k_of, whole.lda}, every_strip{});
                b_load.issue_list(b_smem + stage * cfg::B_STAGE, count,
                                  listed_row_offset<B_LAYOUT>{k_of, whole.ldb}, every_strip{});
            }
            cp_async_commit();
        },
        [&](int64_t s, int stage) {
            const float *a_stage = a_smem + stage * cfg::A_STAGE;
            const float *b_stage = b_smem + stage * cfg::B_STAGE;
            const int entries_here = listed - (int)s * cfg::BK;
            // The last stage's entries past the list hold stale rows: not multiplied.
            if (entries_here >= cfg::BK)
                acc.multiply_tile(a_stage, b_stage);
            else
                multiply_entries(acc, a_stage, b_stage, entries_here);
        });
}

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

    using rows = laid_out<cfg, A_LAYOUT, B_LAYOUT>;
    warp_tile_accumulator<rows> acc;
    if (gate.plan != nullptr && gate.plan->decision == ESMM_PLAN_UNION)
        multiply_listed<rows, A_LAYOUT, B_LAYOUT>(acc, a_smem, b_smem, whole, gate.list,
                                                  SPLIT ? blockIdx.z * layers.k_per_split : 0,
                                                  p.k, m0, n0);
    else
        multiply_k_tiles<rows, A_LAYOUT, B_LAYOUT>(acc, a_smem, b_smem, p, m0, n0);
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

cudaError_t launch_pipelined_gated(const esmm_gemm_problem_t &p, const dense_gate &gate,
                                   float *partials, const float *wide_copy, cudaStream_t stream)
{
    const esmm_gemm_problem_t q =
        wide_copy != nullptr ? reading_copies(p, esmm_dense_copies(p.m, p.n, p.op_a, p.op_b),
                                              wide_copy)
                             : p;
    const int64_t narrow = q.m < q.n ? q.m : q.n, wide = q.m < q.n ? q.n : q.m;
    if (narrow <= NARROW_SIDE) {
        const int64_t half_ctas = (wide + half_tiles::BM - 1) / half_tiles::BM *
                                  esmm_k_split(q.m, q.n, q.k).splits;
        return narrow > narrow_tiles::BN && half_ctas >= ESMM_SPLIT_CTAS
                   ? run_narrow<half_tiles>(q, gate, partials, stream)
                   : run_narrow<narrow_tiles>(q, gate, partials, stream);
    }
    pipelined_launch<wide_tiles> launch = {gate, partials, stream};
    return dispatch_layouts(q, launch);
}

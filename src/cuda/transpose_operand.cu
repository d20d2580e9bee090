// The k-major copy of an operand whose rows run along k, made before the
// kernel that reads it. The zero-skipping kernel gathers whole k rows of its
// wide operand: read straight from the operand, each listed k would be 256
// 4-byte reads from 256 rows (measured at 4096^3, B's strips at d = 0.125:
// esmm_sgemm took 1.03 ms, 0.58 ms with A stored k-major). The dense kernel
// reads each operand along k from its copy where its own rule makes one
// (esmm_dense_copies). The copy moves 8 bytes per element; esmm_wide_read says
// when that pays.
//
// Every path's copy is queued as one launch: the kernel reads the plan on the
// device and copies the operands of the path that runs (an orientation reads
// one copy, the warp lists and the dense kernel one or two) or nothing. 32 x 32
// tiles through shared memory (a padded column so the transposed reads hit 32
// banks): reads and writes are 128-byte rows. A grid of at most 8 blocks per
// SM strides over the tiles, so a launch that copies nothing costs little.
// A copy the extraction already wrote (esmm_extraction_copy_made) is not
// made again. The same kernel, ungated, makes the copy a pattern keeps
// (launch_transpose, esmm_pattern_keep_copy).
#include "cuda/transpose_operand.cuh"

#include <initializer_list>

#include "cuda/launch_cache.cuh"
#include "cuda/patterns/probe_dense.cuh"
#include "cuda/sparse/plan_gate.cuh"

namespace {

constexpr int TILE = 32;
constexpr int ROWS_PER_PASS = 8;
constexpr int THREADS = TILE * ROWS_PER_PASS;
constexpr int BLOCKS_PER_SM = 8;

// An operand a path reads from a copy: x (rows x cols, row stride ld), to be
// written transposed to out, which is copy `which` (an esmm_copied_t); x ==
// nullptr: that path reads no copy.
struct operand_copy {
    const float *x;
    int64_t ld, rows, cols;
    int which;
    float *out;
};

// The copies each queued path reads, behind the gate its kernel opens by: the
// warp-list form's gate (its one or two copies), the skipping orientations'
// (orientation_gate) and the dense kernel's plan (its one or two).
struct copy_choice {
    operand_copy lists[2], normal, swapped, dense[2];
    warp_lists_gate lists_gate;
    skip_gate normal_gate, swapped_gate;
    dense_gate plan_gate; // the dense kernel's, whose plan holds the probe's counts
    int extraction_copy; // the copies the extraction may have made (esmm_copied_t)
};

__host__ __device__ __forceinline__ int64_t tiles_of(const operand_copy &c)
{
    return c.x == nullptr ? 0 : (c.rows + TILE - 1) / TILE * ((c.cols + TILE - 1) / TILE);
}

// Copies c's tiles blockIdx.x, blockIdx.x + gridDim.x, ... through tile.
__device__ __forceinline__ void copy_tiles(const operand_copy &c, float (*tile)[TILE + 1])
{
    const int64_t out_ld = esmm_wide_copy_ld(c.rows);
    const int tx = threadIdx.x % TILE, ty = threadIdx.x / TILE;
    const int64_t tiles_c = (c.cols + TILE - 1) / TILE;
    const int64_t tiles = tiles_of(c);
    for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
        const int64_t r0 = t / tiles_c * TILE, c0 = t % tiles_c * TILE;
        // Fixed trip counts, so each thread's loads are all issued before any is used.
#pragma unroll
        for (int j = 0; j < TILE / ROWS_PER_PASS; ++j) {
            const int i = ty + j * ROWS_PER_PASS;
            if (r0 + i < c.rows && c0 + tx < c.cols)
                tile[i][tx] = c.x[(r0 + i) * c.ld + c0 + tx];
        }
        __syncthreads();
#pragma unroll
        for (int j = 0; j < TILE / ROWS_PER_PASS; ++j) {
            const int i = ty + j * ROWS_PER_PASS;
            if (c0 + i < c.cols && r0 + tx < c.rows)
                c.out[(c0 + i) * out_ld + r0 + tx] = tile[tx][i];
        }
        // The next tile overwrites this one.
        __syncthreads();
    }
}

// Each copy runs from the kernel's parameters as they are, and the launch
// bound keeps BLOCKS_PER_SM blocks an SM resident (a copy picked at run time
// into registers took 48 of them, 5 blocks an SM, and made the dense NN call
// at 4096^3 40 us slower).
__global__ void __launch_bounds__(THREADS, BLOCKS_PER_SM)
    transpose_operand_kernel(copy_choice choice)
{
    chain_wait();
    chain_release();
    int made = 0;
    if (choice.extraction_copy != ESMM_COPY_NONE) {
        const esmm_probe_slot_t probe = warp_probe_totals(choice.plan_gate.plan);
        made = esmm_extraction_copy_made(probe.zeros, probe.slices,
                                         (esmm_copied_t)choice.extraction_copy);
    }
    __shared__ float tile[TILE][TILE + 1];
    // At most one of the paths runs. Warp lists that read no copy leave the
    // others' gates closed, as they name the plan's form.
    if (choice.lists[0].x != nullptr && gate_open(choice.lists_gate)) {
        if (!(choice.lists[0].which & made))
            copy_tiles(choice.lists[0], tile);
        if (!(choice.lists[1].which & made))
            copy_tiles(choice.lists[1], tile);
    } else if (choice.normal.x != nullptr && gate_open(choice.normal_gate)) {
        if (!(choice.normal.which & made))
            copy_tiles(choice.normal, tile);
    } else if (choice.swapped.x != nullptr && gate_open(choice.swapped_gate)) {
        if (!(choice.swapped.which & made))
            copy_tiles(choice.swapped, tile);
    } else if (choice.dense[0].x != nullptr && gate_open(choice.plan_gate)) {
        if (!(choice.dense[0].which & made))
            copy_tiles(choice.dense[0], tile);
        if (!(choice.dense[1].which & made))
            copy_tiles(choice.dense[1], tile);
    }
}

// op(A) = A (m x k) and op(B) = B^T (B n x k) as copies, at their places in out.
operand_copy copy_of_a(const esmm_gemm_problem_t &p, float *out)
{
    return operand_copy{p.a, p.lda, p.m, p.k, ESMM_COPY_A, out + copy_offset(p, ESMM_COPY_A)};
}

operand_copy copy_of_b(const esmm_gemm_problem_t &p, float *out)
{
    return operand_copy{p.b, p.ldb, p.n, p.k, ESMM_COPY_B, out + copy_offset(p, ESMM_COPY_B)};
}

// The copies in `copied` (an esmm_copied_t set), A's first, into pair.
void copies_of(const esmm_gemm_problem_t &p, int copied, float *out, operand_copy (&pair)[2])
{
    int listed = 0;
    if (copied & ESMM_COPY_A)
        pair[listed++] = copy_of_a(p, out);
    if (copied & ESMM_COPY_B)
        pair[listed++] = copy_of_b(p, out);
}

// Launches the kernel over the longest of choice's paths (tiles of it).
cudaError_t launch_choice(const copy_choice &choice, int64_t tiles, cudaStream_t stream)
{
    int sms = 0;
    const cudaError_t err = current_sm_count(&sms);
    if (err != cudaSuccess)
        return err;
    const int64_t cap = (int64_t)sms * BLOCKS_PER_SM;
    const unsigned blocks = (unsigned)(tiles < cap ? tiles : cap);
    return launch_chained(transpose_operand_kernel, blocks, THREADS, 0, stream, choice);
}

} // namespace

cudaError_t launch_transpose(const float *x, int64_t ld, int64_t rows, int64_t cols, float *out,
                             cudaStream_t stream)
{
    // The dense kernel's slot with no plan: its gate is always open.
    copy_choice choice = {};
    choice.dense[0] = operand_copy{x, ld, rows, cols, ESMM_COPY_A, out};
    const int64_t tiles = tiles_of(choice.dense[0]);
    return tiles == 0 ? cudaSuccess : launch_choice(choice, tiles, stream);
}

cudaError_t launch_copy_operand(const esmm_gemm_problem_t &p, esmm_skip_by_t skip,
                                const esmm_plan_stats_t *plan, bool planned,
                                esmm_copied_t extraction_copy, float *out, bool &settled,
                                cudaStream_t stream)
{
    if (out == nullptr)
        return cudaSuccess;
    // The paths and their gates as launch_skip_gemm and the dense launch queue them.
    copy_choice choice = {};
    choice.extraction_copy = planned ? extraction_copy : ESMM_COPY_NONE;
    choice.normal_gate = orientation_gate(plan, planned, skip, ESMM_PLAN_SKIP_NORMAL);
    choice.swapped_gate = orientation_gate(plan, planned, skip, ESMM_PLAN_SKIP_SWAPPED);
    choice.plan_gate = dense_gate{plan, false};
    const bool lists = esmm_plan_warp_lists((int)skip, p.m, p.n, p.k, p.op_a, p.op_b) >= 0.0;
    if (lists) {
        // Beside the warp lists an orientation queues pair warps alone.
        choice.normal_gate.form = choice.swapped_gate.form = ESMM_FORM_PAIR_WARPS;
        const esmm_copied_t copied = esmm_plan_warp_lists_copy(p.op_a, p.op_b);
        choice.lists_gate = warp_lists_gate{plan, planned, false};
        copies_of(p, copied, out, choice.lists);
    }
    const int normal_wide = esmm_plan_normal_wide(p.m, p.n, p.k, p.op_a, p.op_b);
    const int swapped_wide = esmm_plan_swapped_wide(p.m, p.n, p.k, p.op_a, p.op_b);
    if ((skip & ESMM_SKIP_BY_A) && normal_wide == ESMM_WIDE_COPIED)
        choice.normal = copy_of_b(p, out);
    if ((skip & ESMM_SKIP_BY_B) && swapped_wide == ESMM_WIDE_COPIED)
        choice.swapped = copy_of_a(p, out);
    if (planned)
        copies_of(p, esmm_dense_copies(p.m, p.n, p.op_a, p.op_b), out, choice.dense);
    // A path's copies are made one after the other by the same blocks.
    int64_t tiles = 0;
    for (const int64_t t : {tiles_of(choice.lists[0]) + tiles_of(choice.lists[1]),
                            tiles_of(choice.normal), tiles_of(choice.swapped),
                            tiles_of(choice.dense[0]) + tiles_of(choice.dense[1])})
        tiles = t > tiles ? t : tiles;
    if (tiles == 0)
        return cudaSuccess;
    const cudaError_t launched = launch_choice(choice, tiles, stream);
    settled = settled || launched == cudaSuccess;
    return launched;
}

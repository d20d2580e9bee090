// The planner's statistics from the masks, and its decision. For every k,
// count_x[k] is how many strips of op(X) have it set and tiles_x[k] how many
// groups of 8 strips (a skipping-kernel tile's width) have it set in any
// strip. Then
//   work          = sum_k count_a * count_b   (strip pairs left to multiply)
//   steps_normal  = sum_k count_a * tiles_b   (CTA steps, A's strips leading)
//   steps_swapped = sum_k count_b * tiles_a   (CTA steps, B's strips leading)
// A block takes KB_PER_BLOCK k-blocks; its threads split the tiles, so each
// makes a few loads, all in flight together. The last block to finish
// decides.
#include <cuda_runtime.h>

#include "cuda/launch_cache.cuh"
#include "cuda/patterns/probe_dense.cuh"
#include "cuda/sparse/plan.cuh"

namespace {

constexpr int KB_PER_BLOCK = 8;
constexpr int TILE_GROUPS = 32;
constexpr int THREADS = KB_PER_BLOCK * TILE_GROUPS;
constexpr int TILE = ESMM_PLAN_TILE_STRIPS;

struct bit_counts {
    int strips[KB_PER_BLOCK][8]; // strips with bit i of k-block kb_local set
    int tiles[KB_PER_BLOCK][8];  // tiles with it set in any strip
};

// One operand's counts for this thread's k-block, over the tiles it takes.
struct operand_counts {
    unsigned long long set = 0; // set bits
    int strip_count[8] = {};    // strips with bit i set (all existing k when not skipped by)
    int tile_count[8] = {};     // tiles with it set in any strip

    // Adds the tile of strips t0 .. t0 + TILE - 1 whose bytes are in byte[].
    __device__ void add_tile(const unsigned *byte, int64_t t0, int64_t strips, unsigned existing,
                             bool skipped_by)
    {
        unsigned any = 0;
#pragma unroll
        for (int s = 0; s < TILE; ++s) {
            set += __popc(byte[s]);
            const unsigned used = t0 + s >= strips ? 0u : (skipped_by ? byte[s] : existing);
            any |= used;
#pragma unroll
            for (int i = 0; i < 8; ++i)
                strip_count[i] += (used >> i) & 1u;
        }
#pragma unroll
        for (int i = 0; i < 8; ++i)
            tile_count[i] += (any >> i) & 1u;
    }

    __device__ void add_to(bit_counts &counts, int kb_local) const
    {
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            if (strip_count[i])
                atomicAdd(&counts.strips[kb_local][i], strip_count[i]);
            if (tile_count[i])
                atomicAdd(&counts.tiles[kb_local][i], tile_count[i]);
        }
    }
};

// The mask bytes of k-block kb of the strips t0 .. t0 + TILE - 1 (0 past the
// last strip), all loads in flight together.
__device__ void load_tile(const uint8_t *bits, int64_t strips, int64_t kblocks, int64_t kb,
                          int64_t t0, unsigned *byte)
{
#pragma unroll
    for (int s = 0; s < TILE; ++s)
        byte[s] = t0 + s < strips ? bits[(t0 + s) * kblocks + kb] : 0u;
}

__device__ void add_block_total(unsigned long long value, unsigned long long *target)
{
    for (int offset = 16; offset > 0; offset /= 2)
        value += __shfl_down_sync(0xffffffffu, value, offset);
    if (threadIdx.x % 32 == 0 && value)
        atomicAdd(target, value);
}

__global__ void __launch_bounds__(THREADS)
    plan_kernel(esmm_masks_t masks, int64_t m, int64_t n, int64_t k, int skip,
                int normal_wide, int swapped_wide, double warp_lists, int extraction_copy,
                esmm_plan_stats_t *stats)
{
    __shared__ bit_counts count_a, count_b;
    __shared__ bool last_block;
    chain_wait();
    chain_release();
    if (warp_probe_dense(stats))
        return; // the whole grid: the decision stays dense, as cleared
    const int64_t strips_a = (m + 31) / 32, strips_b = (n + 31) / 32, kblocks = (k + 7) / 8;
    const int kb_local = threadIdx.x % KB_PER_BLOCK, group = threadIdx.x / KB_PER_BLOCK;
    for (int i = threadIdx.x; i < KB_PER_BLOCK * 8; i += THREADS) {
        (&count_a.strips[0][0])[i] = (&count_a.tiles[0][0])[i] = 0;
        (&count_b.strips[0][0])[i] = (&count_b.tiles[0][0])[i] = 0;
    }
    __syncthreads();
    const int64_t kb = blockIdx.x * (int64_t)KB_PER_BLOCK + kb_local;
    operand_counts a, b;
    if (kb < kblocks) {
        // An operand not skipped by counts every k of the block that exists.
        const unsigned existing = esmm_pattern_existing_k(kb, k);
        // Both operands' bytes are loaded before either is counted, so one
        // load latency is waited for, not two (the plan is on the critical path
        // of every call).
        for (int64_t t0 = (int64_t)group * TILE; t0 < strips_a || t0 < strips_b;
             t0 += (int64_t)TILE_GROUPS * TILE) {
            unsigned byte_a[TILE], byte_b[TILE];
            load_tile(masks.a_bits, strips_a, kblocks, kb, t0, byte_a);
            load_tile(masks.b_bits, strips_b, kblocks, kb, t0, byte_b);
            if (t0 < strips_a)
                a.add_tile(byte_a, t0, strips_a, existing, skip & ESMM_SKIP_BY_A);
            if (t0 < strips_b)
                b.add_tile(byte_b, t0, strips_b, existing, skip & ESMM_SKIP_BY_B);
        }
        a.add_to(count_a, kb_local);
        b.add_to(count_b, kb_local);
    }
    const unsigned long long set_a = a.set, set_b = b.set;
    __syncthreads();
    unsigned long long work = 0, normal = 0, swapped = 0;
    if (threadIdx.x < KB_PER_BLOCK * 8) {
        const int i = threadIdx.x;
        const unsigned long long ca = (&count_a.strips[0][0])[i], cb = (&count_b.strips[0][0])[i];
        work = ca * cb;
        normal = ca * (unsigned long long)(&count_b.tiles[0][0])[i];
        swapped = cb * (unsigned long long)(&count_a.tiles[0][0])[i];
    }
    add_block_total(work, &stats->work);
    add_block_total(normal, &stats->steps_normal);
    add_block_total(swapped, &stats->steps_swapped);
    add_block_total(set_a, &stats->bits_a);
    add_block_total(set_b, &stats->bits_b);

    // The last block sees every block's totals and writes the decision.
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        last_block = atomicAdd(&stats->blocks_done, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (last_block && threadIdx.x == 0) {
        __threadfence();
        // Atomic reads: the totals are complete, but may not be in this SM's L1.
        esmm_plan_stats_t totals = {};
        totals.steps_normal = atomicAdd(&stats->steps_normal, 0ull);
        totals.steps_swapped = atomicAdd(&stats->steps_swapped, 0ull);
        totals.work = atomicAdd(&stats->work, 0ull);
        // The copy the extraction made, by the rule it read the probe with.
        const esmm_probe_slot_t probe = esmm_probe_totals(stats);
        const esmm_copied_t made = esmm_extraction_copy_made(
            probe.zeros, probe.slices, (esmm_copied_t)extraction_copy);
        esmm_plan_decide(&totals, m, n, k, skip, normal_wide, swapped_wide, warp_lists, made);
        stats->decision = totals.decision;
        stats->orientation = totals.orientation;
        stats->form = totals.form;
    }
}

} // namespace

cudaError_t launch_plan(const esmm_masks_t &masks, int64_t m, int64_t n, int64_t k,
                        esmm_operation_t op_a, esmm_operation_t op_b, esmm_skip_by_t skip,
                        esmm_copied_t extraction_copy, esmm_plan_stats_t *stats,
                        cudaStream_t stream)
{
    const int64_t kblocks = (k + 7) / 8;
    const int64_t blocks = (kblocks + KB_PER_BLOCK - 1) / KB_PER_BLOCK;
    if (blocks > 0x7fffffff)
        return cudaErrorInvalidConfiguration;
    return launch_chained(plan_kernel, (unsigned)blocks, THREADS, 0, stream, masks, m, n, k,
                          (int)skip, esmm_plan_normal_wide(m, op_b),
                          esmm_plan_swapped_wide(n, op_a),
                          esmm_plan_warp_lists(skip, m, n, k, op_a, op_b), (int)extraction_copy,
                          stats);
}

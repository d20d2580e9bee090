// The planner's statistics from the masks, and its decision. For every k,
// count_x[k] is how many strips of op(X) have it set and tiles_x[k] how many
// groups of 8 strips (a skipping-kernel tile's width) have it set in any
// strip. Then
//   work          = sum_k count_a * count_b   (strip pairs left to multiply)
//   steps_normal  = sum_k count_a * tiles_b   (CTA steps, A's strips leading)
//   steps_swapped = sum_k count_b * tiles_a   (CTA steps, B's strips leading)
//   union_skipped = the k the union path leaves out (esmm_union_needs_k,
//                   from count_x > 0 and, where one of them is 0, whether
//                   any strip of the other is NaN/Inf there)
// A block takes KB_PER_BLOCK k-blocks (one word of the union's bits); its
// threads split the tiles, so each makes a few loads, all in flight
// together. The last block to finish decides, and where the union path
// runs, lists its k.
#include <cuda_runtime.h>

#include "cuda/launch_cache.cuh"
#include "cuda/patterns/probe_dense.cuh"
#include "cuda/sparse/plan.cuh"
#include "cuda/warp_scan.cuh"

namespace {

constexpr int KB_PER_BLOCK = ESMM_UNION_K_PER_WORD / 8;
// A block's word is two halves of one 32-k tile each (a warp's ballot, and
// the counts write_union_list writes), and every split layer starts on a
// tile (multiply_listed in 08_pipelined.cu finds its range from them).
static_assert(ESMM_UNION_K_PER_WORD == 64 && ESMM_UNION_TILE == 32, "two tiles a word");
static_assert(ESMM_SPLIT_K_ALIGN % ESMM_UNION_TILE == 0, "layers start on a tile");
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

// ORs one operand's NaN/Inf bytes over all its strips into any[kl] (shared)
// for each of the block's k-blocks kl (from kb0) that ask[kl] names. A thread
// keeps to one k-block and takes every (THREADS / KB_PER_BLOCK)-th strip, so
// the block waits for one round of loads, not one per k-block.
__device__ void or_nonfinite(const uint8_t *nonfinite, int64_t strips, int64_t kblocks,
                             int64_t kb0, const unsigned *ask, unsigned *any)
{
    const int kl = threadIdx.x % KB_PER_BLOCK;
    if (ask[kl] == 0)
        return;
    unsigned mine = 0;
#pragma unroll 4
    for (int64_t s = threadIdx.x / KB_PER_BLOCK; s < strips; s += THREADS / KB_PER_BLOCK)
        mine |= nonfinite[s * kblocks + kb0 + kl];
    if (mine)
        atomicOr(&any[kl], mine);
}

// The last block, where the union path runs: the counts before each k-tile
// (esmm_union_list_t), then the listed k from every block's word (written
// before those blocks counted themselves done) in increasing order.
__device__ void write_union_list(const esmm_union_list_t &list, unsigned words)
{
    __shared__ int warp_sums[THREADS / 32];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    int carry = 0;
    for (unsigned base = 0; base < words; base += THREADS) {
        const unsigned w = base + threadIdx.x;
        const unsigned long long bits = w < words ? __ldcg(&list.words[w]) : 0ull;
        const int count = __popcll(bits);
        const int inclusive = warp_inclusive_sum(count, lane);
        if (lane == 31)
            warp_sums[warp] = inclusive;
        __syncthreads();
        int at = carry + inclusive - count, total = 0;
        for (int i = 0; i < THREADS / 32; ++i) {
            at += i < warp ? warp_sums[i] : 0;
            total += warp_sums[i];
        }
        if (w < words) {
            list.starts[2 * w] = at;
            list.starts[2 * w + 1] = at + __popc((unsigned)bits);
        }
        carry += total;
        __syncthreads(); // warp_sums is rewritten; the starts are visible to the block
    }
    if (threadIdx.x == 0)
        list.starts[2 * words] = carry;
    // A warp per word, a lane per two of its k: a listed k's place is its
    // word's start plus the listed k below it in the word.
    for (unsigned w = warp; w < words; w += THREADS / 32) {
        const unsigned long long bits = __ldcg(&list.words[w]);
        const int start = list.starts[2 * w];
        for (int bit = lane; bit < ESMM_UNION_K_PER_WORD; bit += 32)
            if ((bits >> bit) & 1ull)
                list.entries[start + __popcll(bits & ((1ull << bit) - 1ull))] =
                    (int)(w * ESMM_UNION_K_PER_WORD) + bit;
    }
    // What a stage reads past the end (unused) is defined all the same.
    for (int i = threadIdx.x; i < ESMM_UNION_PAD; i += THREADS)
        list.entries[carry + i] = 0;
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
                int op_a, int op_b, double warp_lists, int extraction_copy, int union_mode,
                esmm_union_list_t list, esmm_plan_stats_t *stats)
{
    __shared__ bit_counts count_a, count_b;
    // Per k-block: the k where one operand is zero in every strip and the
    // other not, whose NaN/Inf then decide (ask_x: ask op(X)'s bytes), and
    // the NaN/Inf found there.
    __shared__ unsigned ask_a[KB_PER_BLOCK], ask_b[KB_PER_BLOCK];
    __shared__ unsigned nonfinite_a[KB_PER_BLOCK], nonfinite_b[KB_PER_BLOCK];
    __shared__ bool last_block;
    __shared__ int decision;
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
    if (threadIdx.x < KB_PER_BLOCK)
        ask_a[threadIdx.x] = ask_b[threadIdx.x] = nonfinite_a[threadIdx.x] =
            nonfinite_b[threadIdx.x] = 0;
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
    unsigned long long ca = 0, cb = 0;
    if (threadIdx.x < KB_PER_BLOCK * 8) {
        const int i = threadIdx.x;
        ca = (&count_a.strips[0][0])[i];
        cb = (&count_b.strips[0][0])[i];
        work = ca * cb;
        normal = ca * (unsigned long long)(&count_b.tiles[0][0])[i];
        swapped = cb * (unsigned long long)(&count_a.tiles[0][0])[i];
    }
    const bool ask = union_mode != ESMM_UNION_NOT_OFFERED && (ca > 0) != (cb > 0);
    if (ask)
        atomicOr(ca > 0 ? &ask_a[threadIdx.x / 8] : &ask_b[threadIdx.x / 8],
                 1u << (threadIdx.x % 8));
    // Only blocks with such k read NaN/Inf bytes (a block of k that every
    // strip pair needs reads none).
    if (union_mode != ESMM_UNION_NOT_OFFERED && __syncthreads_or(ask)) {
        const int64_t kb0 = blockIdx.x * (int64_t)KB_PER_BLOCK;
        or_nonfinite(masks.a_nonfinite, strips_a, kblocks, kb0, ask_a, nonfinite_a);
        or_nonfinite(masks.b_nonfinite, strips_b, kblocks, kb0, ask_b, nonfinite_b);
        __syncthreads();
    }
    bool needed = false;
    if (threadIdx.x < KB_PER_BLOCK * 8) {
        const int i = threadIdx.x;
        needed = esmm_union_needs_k(ca > 0, cb > 0, (nonfinite_a[i / 8] >> (i % 8)) & 1u,
                                    (nonfinite_b[i / 8] >> (i % 8)) & 1u);
    }
    // The block's word of the union's bits, a half per warp (k past the
    // product have no bits, so they are never listed), made visible by the
    // fence before the block counts itself done. Only k left out are
    // counted, so blocks that need every k add nothing.
    if (union_mode != ESMM_UNION_NOT_OFFERED && threadIdx.x < ESMM_UNION_K_PER_WORD) {
        const unsigned half = __ballot_sync(0xffffffffu, needed);
        const int64_t k0 = blockIdx.x * (int64_t)ESMM_UNION_K_PER_WORD + threadIdx.x / 32 * 32;
        const int64_t in_k = k - k0 < 0 ? 0 : (k - k0 < 32 ? k - k0 : 32);
        const unsigned existing = in_k == 32 ? ~0u : (1u << in_k) - 1u;
        if (threadIdx.x % 32 == 0) {
            reinterpret_cast<unsigned *>(list.words)[2 * blockIdx.x + threadIdx.x / 32] = half;
            if (existing & ~half)
                atomicAdd(&stats->union_skipped, (unsigned long long)__popc(existing & ~half));
        }
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
        totals.union_skipped = atomicAdd(&stats->union_skipped, 0ull);
        // The extraction, done before this kernel started, marked NaN/Inf.
        stats->finite = ~atomicOr(&stats->nonfinite_seen, 0u) & (ESMM_OPERAND_A | ESMM_OPERAND_B);
        // The copy the extraction made, by the rule it read the probe with.
        const esmm_probe_slot_t probe = esmm_probe_totals(stats);
        const esmm_copied_t made = esmm_extraction_copy_made(
            probe.zeros, probe.slices, (esmm_copied_t)extraction_copy);
        const double union_share =
            union_mode == ESMM_UNION_OFFERED ? esmm_union_share(&totals, k) : -1.0;
        esmm_plan_decide(&totals, m, n, k, (esmm_operation_t)op_a, (esmm_operation_t)op_b, skip,
                         warp_lists, made, union_share);
        if (union_mode == ESMM_UNION_FORCED) {
            totals.decision = ESMM_PLAN_UNION;
            totals.form = ESMM_FORM_UNION;
        }
        decision = totals.decision;
        stats->decision = totals.decision;
        stats->orientation = totals.orientation;
        stats->form = totals.form;
    }
    if (last_block) {
        __syncthreads();
        if (decision == ESMM_PLAN_UNION)
            write_union_list(list, gridDim.x);
    }
}

} // namespace

cudaError_t launch_plan(const esmm_masks_t &masks, int64_t m, int64_t n, int64_t k,
                        esmm_operation_t op_a, esmm_operation_t op_b, esmm_skip_by_t skip,
                        esmm_copied_t extraction_copy, esmm_union_mode_t union_mode,
                        esmm_union_list_t list, esmm_plan_stats_t *stats, cudaStream_t stream)
{
    const int64_t kblocks = (k + 7) / 8;
    const int64_t blocks = (kblocks + KB_PER_BLOCK - 1) / KB_PER_BLOCK;
    if (blocks > 0x7fffffff)
        return cudaErrorInvalidConfiguration;
    return launch_chained(plan_kernel, (unsigned)blocks, THREADS, 0, stream, masks, m, n, k,
                          (int)skip, (int)op_a, (int)op_b,
                          esmm_plan_warp_lists(skip, m, n, k, op_a, op_b), (int)extraction_copy,
                          (int)union_mode, list, stats);
}

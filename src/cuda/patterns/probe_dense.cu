// The dense probe (patterns/pattern_layout.h): one warp per sampled block, a
// strip of 32 lines (rows of op(X)) by one K block of 8. Lane l reads line l's
// k of the block, at most 8 loads all in flight; the lanes OR their nonzero
// bits and the block adds its warps' zero slices into its own slot, so no
// counter needs clearing first and the launch replaces the clearing of the
// plan's statistics. One round of loads: the launch is most of what it costs.
#include "cuda/patterns/probe_dense.cuh"

#include "cuda/launch_cache.cuh"

namespace {

constexpr int WARP = 32;
constexpr int WARPS_PER_BLOCK = 2 * ESMM_PROBE_BLOCKS / ESMM_PROBE_SLOTS;
constexpr unsigned ALL_LANES = 0xffffffffu;

static_assert(WARP == ESMM_PATTERN_STRIP, "a lane per line of a strip");
static_assert(WARPS_PER_BLOCK * ESMM_PROBE_SLOTS == 2 * ESMM_PROBE_BLOCKS,
              "a warp per sample of both operands");
static_assert(ESMM_PROBE_BLOCKS * ESMM_PATTERN_BK < 0x10000, "counts fit 16 bits");

struct probe_args {
    const float *x; // the stored matrix, or nullptr when given is sampled
    int64_t ld;
    bool lines_are_rows; // a line of the strip is a stored row (k along it), else a stored column
    const uint8_t *given;
    int64_t rows, k, kblocks, blocks, samples;
};

// The k of the block (existing holds those that exist) where this lane's
// line has a nonzero; 0 for lines past the matrix.
__device__ __forceinline__ unsigned line_nonzero(const probe_args &o, int64_t strip, int64_t kb,
                                                 unsigned existing, int lane)
{
    const int64_t line = strip * ESMM_PATTERN_STRIP + lane;
    if (line >= o.rows)
        return 0;
    const int64_t k0 = kb * ESMM_PATTERN_BK;
    const float *first = o.lines_are_rows ? o.x + line * o.ld + k0 : o.x + k0 * o.ld + line;
    const int64_t step = o.lines_are_rows ? 1 : o.ld;
    float v[ESMM_PATTERN_BK];
#pragma unroll
    for (int i = 0; i < ESMM_PATTERN_BK; ++i)
        v[i] = (existing >> i) & 1u ? __ldg(first + i * step) : 0.0f;
    unsigned bits = 0;
#pragma unroll
    for (int i = 0; i < ESMM_PATTERN_BK; ++i)
        bits |= (unsigned)(v[i] != 0.0f) << i;
    return bits;
}

// The zero slices and slices of sample j of operand o (a whole warp).
__device__ __forceinline__ void sample_block(const probe_args &o, int64_t j, int lane,
                                             uint32_t *zero, uint32_t *slices)
{
    const int64_t block = esmm_probe_block(j, o.blocks);
    // 32-bit division where it is exact: a 64-bit one costs a hundred instructions.
    const bool narrow = o.blocks <= (int64_t)UINT32_MAX;
    const int64_t strip = narrow ? (uint32_t)block / (uint32_t)o.kblocks : block / o.kblocks;
    const int64_t kb = block - strip * o.kblocks;
    const unsigned existing = esmm_pattern_existing_k(kb, o.k);
    unsigned nonzero =
        o.given != nullptr ? o.given[block] : line_nonzero(o, strip, kb, existing, lane);
#pragma unroll
    for (int offset = WARP / 2; offset > 0; offset /= 2)
        nonzero |= __shfl_xor_sync(ALL_LANES, nonzero, offset);
    *zero = (uint32_t)__popc(existing & ~nonzero);
    *slices = (uint32_t)__popc(existing);
}

// Warps below first.samples sample the first operand, the next
// second.samples the second; block 0 also clears the plan's fields.
__global__ void __launch_bounds__(WARPS_PER_BLOCK *WARP)
    probe_dense_kernel(const probe_args first, const probe_args second,
                       esmm_plan_stats_t *stats)
{
    __shared__ uint32_t block_zeros, block_slices;
    chain_wait();
    chain_release();
    if (threadIdx.x == 0) {
        block_zeros = block_slices = 0;
        if (blockIdx.x == 0) {
            stats->work = stats->bits_a = stats->bits_b = 0;
            stats->steps_normal = stats->steps_swapped = stats->union_skipped = 0;
            stats->blocks_done = 0;
            stats->warp_list_pairs = 0;
            stats->decision = ESMM_PLAN_DENSE;
            stats->orientation = stats->form = 0;
            // A given pattern's NaN/Inf bytes are not read in this call.
            stats->nonfinite_seen = (first.given != nullptr ? ESMM_OPERAND_A : 0u) |
                                    (second.given != nullptr ? ESMM_OPERAND_B : 0u);
            stats->finite = 0;
        }
    }
    __syncthreads();
    const int64_t warp = (int64_t)blockIdx.x * WARPS_PER_BLOCK + threadIdx.x / WARP;
    const int lane = threadIdx.x % WARP;
    const bool in_first = warp < first.samples;
    const int64_t j = in_first ? warp : warp - first.samples;
    if (in_first || j < second.samples) {
        // Two calls, each inlined on its own parameters: choosing the
        // struct first would copy it to the stack.
        uint32_t zero, slices;
        if (in_first)
            sample_block(first, j, lane, &zero, &slices);
        else
            sample_block(second, j, lane, &zero, &slices);
        if (lane == 0) {
            const int shift = in_first ? 0 : 16;
            atomicAdd(&block_zeros, zero << shift);
            atomicAdd(&block_slices, slices << shift);
        }
    }
    __syncthreads();
    if (threadIdx.x == 0)
        stats->probe[blockIdx.x] = esmm_probe_slot_t{block_zeros, block_slices};
}

probe_args describe(const probe_operand &p, bool sample)
{
    const int64_t kblocks = esmm_pattern_kblocks(p.k);
    const int64_t blocks = esmm_pattern_strips(p.rows) * kblocks;
    return probe_args{p.matrix.x, p.matrix.ld,
                      p.matrix.strips == pattern_strips::of_stored_rows, p.given, p.rows, p.k,
                      kblocks, blocks, sample ? esmm_probe_samples(blocks) : 0};
}

} // namespace

cudaError_t launch_probe_dense(const probe_operand &a, const probe_operand &b, bool sample,
                               esmm_plan_stats_t *stats, cudaStream_t stream)
{
    return launch_chained(probe_dense_kernel, ESMM_PROBE_SLOTS, WARPS_PER_BLOCK * WARP, 0, stream,
                          describe(a, sample), describe(b, sample), stats);
}

// The zero-skipping GEMM in warp-list form: a warp computes the 32 x 32 block
// of C that one strip of op(A) and one strip of op(B) make, and lists for
// itself the k that strip pair needs (DESIGN.md, Exactness: k may be skipped
// only where one strip is zero and the other finite). Its copies and its
// products follow its own list, with no barrier shared with other warps, so
// no warp loads or waits for k that another warp's pair needs: where both
// operands are sparse, work and loads shrink with the pair's own density.
// Both operands are read along m / n (op(A) = A^T, op(B) = B), each stored
// along k from its k-major copy (launch_copy_operand). Each C
// element sums its listed products in increasing k with fmaf, as the dense
// kernel does, so results equal the dense path's bit for bit. Where k is
// split (esmm_k_split), a warp sums each range from zero in turn and adds
// the ranges in order, as the finishing pass adds the other paths' partial
// sums: the same bits, with no partial sums written or read. A warp per strip
// pair already gives the SMs enough warps, which is what the other paths
// split k for.
#include <cuda_runtime.h>

#include <type_traits>

#include "cuda/dense/pipelined_tile.cuh"
#include "cuda/sparse/plan_gate.cuh"
#include "cuda/sparse/warp_list_gemm.cuh"
#include "cuda/transpose_operand.cuh"
#include "cuda/warp_scan.cuh"

namespace {

// Measured on the H100 at 4096^3, both operands at d = 0.5 / 0.25 / 0.125:
// 4 warps a CTA and 4 CTAs an SM beat 8 warps and 2 (1.05 / 0.305 / 0.125
// against 1.09 / 0.324 / 0.140 ms) and 5 or 6 CTAs an SM (d = 0.5: 1.38 and
// 1.48 against 1.245). With the copies as they are now, 8 listed k a stage
// in 3 stages beat 4 in 4 for every list (0.995 / 0.351 / 0.200 against
// 1.033 / 0.361 / 0.203 ms end to end); with the earlier, longer copies 4
// in 4 had beaten 2 in 6 and 8 in 3 or 4. The depth is now the warp's
// choice (below).
constexpr int WARPS = 4;
constexpr int CTAS_PER_SM = 4;
constexpr int64_t CAPPED_ROUNDS = 3;
// A warp's stages: STAGE_K listed k each, STAGES of them in flight.
template <int STAGE_K_, int STAGES_> struct stage_depth {
    static constexpr int STAGE_K = STAGE_K_, STAGES = STAGES_;
    static_assert(STAGE_K % 4 == 0, "a stage's entries come four at a time, one per 8 lanes");
};
// A warp picks its stages by its list's length: 16 a stage in 2 from
// LONG_LIST entries on, else 8 in 3. Measured on the H100 against 8 in 3
// for every list (ms end to end, 4096^3 unless said): both operands at
// d = 0.5 0.966 against 0.994, d = 0.25 0.342 against 0.349, 8192^3 at
// d = 0.25 2.133 against 2.175; lists of 64 or 16 entries (d = 0.125,
// 0.0625) take 8 in 3 but ran 1-1.7% slower beside the second form (0.2003
// against 0.1983, 0.172 against 0.169), as they did with the choice built
// but never taken. 12 in 2 (no more shared memory than 8 in 3) gained less
// (0.976 at d = 0.5) and lost as much on short lists; a choice from 256
// entries on left d = 0.25, whose lists straddle it, no faster. Where k is
// split, the ranges' sums leave no shared memory for the deeper stages at
// 4 CTAs an SM, so split warps keep 8 in 3.
using short_lists = stage_depth<8, 3>;
using long_lists = stage_depth<16, 2>;
constexpr int LONG_LIST = 128;
constexpr int SHORT_ENTRIES = short_lists::STAGE_K * short_lists::STAGES;
constexpr int LONG_ENTRIES = long_lists::STAGE_K * long_lists::STAGES;
constexpr int STAGED_ENTRIES = SHORT_ENTRIES > LONG_ENTRIES ? SHORT_ENTRIES : LONG_ENTRIES;
// A list takes one mask word per lane at a time, 32 lanes of 32 k.
constexpr int LIST_CAPACITY = 32 * 32;

template <bool SPLIT> struct __align__(16) warp_space {
    // per listed k: 32 of op(A)'s column, 32 of op(B)'s row
    float entry[SPLIT ? SHORT_ENTRIES : STAGED_ENTRIES][64];
    int list[LIST_CAPACITY];
};
constexpr unsigned ENTRY_BYTES = 64 * sizeof(float);
// Where k is split, after the warps' spaces: each warp's sum of the ranges so
// far, 32 values a lane, value-major.
constexpr int RANGES_SUM_FLOATS = 32 * 32;
template <bool SPLIT>
constexpr int SMEM_BYTES =
    WARPS * ((int)sizeof(warp_space<SPLIT>) + (SPLIT ? RANGES_SUM_FLOATS * (int)sizeof(float) : 0));

// Four k-blocks' mask bytes of one strip as a word, k-block 4w first (0 past
// the last). Whole words where the rows allow them.
__device__ __forceinline__ unsigned mask_word(const uint8_t *row, int64_t w, int64_t kblocks,
                                              bool words)
{
    if (words)
        return w * 4 < kblocks ? __ldg(reinterpret_cast<const unsigned *>(row) + w) : 0u;
    unsigned v = 0;
#pragma unroll
    for (int i = 0; i < 4; ++i)
        if (w * 4 + i < kblocks)
            v |= (unsigned)__ldg(row + w * 4 + i) << (8 * i);
    return v;
}

// The strip pair's mask rows, each kblocks bytes; a NaN/Inf row is nullptr
// where the plan found that operand finite, and reads as zeros.
struct pair_masks {
    const uint8_t *a, *a_nonfinite, *b, *b_nonfinite;
    int64_t kblocks;
    bool words;

    // Bit i of the word: k = 32 w + i is needed.
    __device__ __forceinline__ unsigned need(int64_t w) const
    {
        const unsigned a_nan = a_nonfinite ? mask_word(a_nonfinite, w, kblocks, words) : 0u;
        const unsigned b_nan = b_nonfinite ? mask_word(b_nonfinite, w, kblocks, words) : 0u;
        return (mask_word(a, w, kblocks, words) | b_nan) & (mask_word(b, w, kblocks, words) | a_nan);
    }
};

// Copies the first `valid` (0..4) of 4 consecutive elements (along m or n)
// of an operand row into shared memory, 16 bytes at once when VEC. Elements
// past the matrix feed only C values that are never stored: a whole chunk
// past it is not copied, and only the partial chunk of a last strip pays for
// a zero fill (measured: zero-filling every chunk made d = 0.5 7% slower).
template <bool VEC>
__device__ __forceinline__ void copy_four(float *dst, const float *src, int valid)
{
    if (VEC) {
        if (valid == 4)
            cp_async<16>(dst, src);
        else if (valid > 0)
            cp_async_zfill<16>(dst, src, valid * 4);
    } else {
#pragma unroll
        for (int j = 0; j < 4; ++j)
            cp_async<4>(dst + j, src + j, j < valid);
    }
}

// Copies 16 bytes of row k of an operand (rows row_bytes apart from row0)
// to shared address dst: the address is one 32 x 32 -> 64-bit multiply-add.
// (Through cp_async, whose source is a pointer, the compiler rebuilt both
// addresses from the kernel's parameters each stage: 28 instructions for the
// pair of copies in the SASS, against about 17 here.)
__device__ __forceinline__ void copy_row_chunk(unsigned dst, const float *row0, unsigned k,
                                               unsigned row_bytes)
{
    asm volatile("{\n .reg .u64 src;\n mad.wide.u32 src, %1, %2, %3;\n"
                 " cp.async.cg.shared.global [%0], [src], 16;\n}\n" ::"r"(dst),
                 "r"(k), "r"(row_bytes), "l"(row0));
}

// One listed k's rank-1 update of the lane's 4 x 8 values (rows 4 tr, columns 8 tc).
__device__ __forceinline__ void multiply_entry(const float *entry, int tr, int tc,
                                               float (&acc)[4][8])
{
    const float4 a = *reinterpret_cast<const float4 *>(entry + 4 * tr);
    const float4 b0 = *reinterpret_cast<const float4 *>(entry + 32 + 8 * tc);
    const float4 b1 = *reinterpret_cast<const float4 *>(entry + 32 + 8 * tc + 4);
    const float av[4] = {a.x, a.y, a.z, a.w};
    const float bv[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
        for (int i = 0; i < 4; ++i)
            acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
}

// Multiplies one strip pair's 32 x 32 block of C (strip_a of op(A), strip_b
// of op(B)) into C, in the warp's shared space (warp `warp` of the CTA).
// p: op(A) = A^T stored k x m, op(B) = B stored k x n; A_VEC / B_VEC: 16-byte
// copies; SPLIT: k cut into ranges of k_per_split.
template <bool A_VEC, bool B_VEC, bool SPLIT>
__device__ __forceinline__ void multiply_pair(const esmm_gemm_problem_t &p,
                                              const esmm_masks_t &masks, int64_t k_per_split,
                                              float *smem, int warp, int64_t strip_a,
                                              int64_t strip_b)
{
    const int lane = threadIdx.x % 32;
    warp_space<SPLIT> &space = reinterpret_cast<warp_space<SPLIT> *>(smem)[warp];
    const int64_t m0 = strip_a * 32, n0 = strip_b * 32;
    const int64_t kblocks = (p.k + 7) / 8;
    const bool words = kblocks % 4 == 0 && (reinterpret_cast<uintptr_t>(masks.a_bits) |
                                            reinterpret_cast<uintptr_t>(masks.a_nonfinite) |
                                            reinterpret_cast<uintptr_t>(masks.b_bits) |
                                            reinterpret_cast<uintptr_t>(masks.b_nonfinite)) %
                                                   4 ==
                                               0;
    const pair_masks pair = {masks.a_bits + strip_a * kblocks,
                             masks.a_nonfinite ? masks.a_nonfinite + strip_a * kblocks : nullptr,
                             masks.b_bits + strip_b * kblocks,
                             masks.b_nonfinite ? masks.b_nonfinite + strip_b * kblocks : nullptr,
                             kblocks,
                             words};
    const int64_t mask_words = (kblocks + 3) / 4;

    // Copies: lanes 8e .. 8e + 7 copy entries e, e + 4, ... of a stage, 4
    // elements each of op(A)'s column and op(B)'s row.
    const int copy_entry = lane / 8, copy_at = (lane % 8) * 4;
    const float *a_col = p.a + m0 + copy_at, *b_row = p.b + n0 + copy_at;
    const int64_t a_left = p.m - m0 - copy_at, b_left = p.n - n0 - copy_at;
    const int a_valid = (int)(a_left < 0 ? 0 : a_left < 4 ? a_left : 4);
    const int b_valid = (int)(b_left < 0 ? 0 : b_left < 4 ? b_left : 4);
    // A warp whose chunks all lie whole inside the matrix (all but the last
    // strips of m and n) copies 16 bytes without a test, the row's address
    // one multiply-add from a 32-bit k and row length in bytes. (The general
    // copy, with its tests and 64-bit row offsets, costs a stage of 4 listed
    // k about 40 instructions more: in the SASS 218 against 175, and on the
    // H100 with both operands at d = 0.5, 4096^3, 1.247 against 1.033 ms.)
    const bool whole_chunks = A_VEC && B_VEC && p.lda < (1 << 29) && p.ldb < (1 << 29) &&
                              __all_sync(0xffffffffu, a_valid == 4 && b_valid == 4);
    const unsigned a_row_bytes = (unsigned)p.lda * 4u, b_row_bytes = (unsigned)p.ldb * 4u;
    // Where the lane's first copy of stage 0 goes (shared address).
    const unsigned lane_stage0 =
        (unsigned)__cvta_generic_to_shared(&space.entry[copy_entry][copy_at]);
    // Products: the lane's 4 x 8 block of the warp's 32 x 32.
    const int tr = lane / 4, tc = lane % 4;
    float acc[4][8];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j)
            acc[i][j] = 0.0f;

    // Where k is split (esmm_k_split), each range of k_per_split sums from
    // zero and the ranges add in order (finish_splits.cu): the warp lists and
    // copies its k as when whole, and at the first listed k past a range
    // closes it, adding it to its lane's ranges_sum (value-major), which
    // starts at -0 (-0 + x is x for every x, -0 included). k is below 2^31
    // (the list holds it as int), so range ends fit in 32 bits.
    const unsigned range_k = (unsigned)k_per_split;
    unsigned next_range_k = range_k;
    auto ranges_sum = [&](int v) -> float & {
        return reinterpret_cast<float *>(reinterpret_cast<warp_space<SPLIT> *>(smem) +
                                         WARPS)[(warp * 32 + v) * 32 + lane];
    };
    auto close_range = [&] {
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < 8; ++j) {
                ranges_sum(i * 8 + j) += acc[i][j];
                acc[i][j] = 0.0f;
            }
    };
    // Closes every range that ends before listed entry e's k.
    auto close_ranges_before = [&](int e) {
        for (const unsigned k = space.list[e]; k >= next_range_k; next_range_k += range_k)
            close_range();
    };
    if (SPLIT) {
#pragma unroll
        for (int v = 0; v < 32; ++v)
            ranges_sum(v) = -0.0f;
    }

    unsigned next_need = pair.need(lane);
    for (int64_t w0 = 0; w0 < mask_words;) {
        // List as many words of k as fit, one per lane at a time, in order.
        int listed = 0;
        while (w0 < mask_words) {
            unsigned need = next_need;
            const int count = __popc(need);
            const int inclusive = warp_inclusive_sum(count, lane);
            const int words_listed = __shfl_sync(0xffffffffu, inclusive, 31);
            if (listed + words_listed > LIST_CAPACITY)
                break;
            next_need = pair.need(w0 + 32 + lane);
            int at = listed + inclusive - count;
            const int k_base = (int)((w0 + lane) * 32);
            for (; need; need &= need - 1)
                space.list[at++] = k_base + __ffs(need) - 1;
            listed += words_listed;
            w0 += 32;
        }
        __syncwarp();

        // The stages of the list, copied WHOLE (see whole_chunks) or tested,
        // Depth::STAGE_K listed k a stage.
        auto multiply_list = [&](auto whole, auto depth) {
            constexpr bool WHOLE = decltype(whole)::value;
            using Depth = decltype(depth);
            constexpr int STAGE_K = Depth::STAGE_K, STAGES = Depth::STAGES;
            constexpr unsigned STAGE_BYTES = STAGE_K * ENTRY_BYTES;
            auto issue = [&](int s) {
#pragma unroll
                for (int r = 0; r < STAGE_K / 4; ++r) {
                    const int e = s * STAGE_K + 4 * r + copy_entry;
                    if (e < listed) { // and so s is a stage of the list
                        const unsigned k = (unsigned)space.list[e];
                        if (WHOLE) {
                            const unsigned dst = lane_stage0 +
                                                 (unsigned)s % STAGES * STAGE_BYTES +
                                                 4 * r * ENTRY_BYTES;
                            copy_row_chunk(dst, a_col, k, a_row_bytes);
                            copy_row_chunk(dst + ENTRY_BYTES / 2, b_row, k, b_row_bytes);
                        } else {
                            float *entry =
                                space.entry[(unsigned)s % STAGES * STAGE_K + 4 * r + copy_entry];
                            copy_four<A_VEC>(entry + copy_at, a_col + (int64_t)k * p.lda,
                                             a_valid);
                            copy_four<B_VEC>(entry + 32 + copy_at, b_row + (int64_t)k * p.ldb,
                                             b_valid);
                        }
                    }
                }
                cp_async_commit();
            };
            // Stage s is visible to the warp, and every lane has multiplied
            // stage s - 1, whose buffer the next copy overwrites.
            auto next_stage = [&](int s) {
                cp_async_wait<STAGES - 2>();
                __syncwarp();
                issue(s + STAGES - 1);
                return &space.entry[(unsigned)s % STAGES * STAGE_K];
            };
#pragma unroll
            for (int s = 0; s < STAGES - 1; ++s)
                issue(s);
            const int full_stages = listed / STAGE_K;
            int s = 0;
            // Full stages, unrolled, but where a range of a split ends.
            for (; s < full_stages; ++s) {
                const float(*stage)[64] = next_stage(s);
                if (SPLIT && (unsigned)space.list[s * STAGE_K + STAGE_K - 1] >= next_range_k) {
                    // A range ends in this stage: close it (and any empty
                    // ones) before the first entry past it.
                    for (int e = 0; e < STAGE_K; ++e) {
                        close_ranges_before(s * STAGE_K + e);
                        multiply_entry(stage[e], tr, tc, acc);
                    }
                } else {
#pragma unroll
                    for (int e = 0; e < STAGE_K; ++e)
                        multiply_entry(stage[e], tr, tc, acc);
                }
            }
            if (s * STAGE_K < listed) { // the last, partial stage
                const float(*stage)[64] = next_stage(s);
                for (int e = 0; e < listed - s * STAGE_K; ++e) {
                    if (SPLIT)
                        close_ranges_before(s * STAGE_K + e);
                    multiply_entry(stage[e], tr, tc, acc);
                }
            }
        };
        auto multiply_list_at = [&](auto depth) {
            if (whole_chunks)
                multiply_list(std::true_type{}, depth);
            else
                multiply_list(std::false_type{}, depth);
        };
        // The list's length is the same in every lane: one branch a warp.
        if constexpr (SPLIT)
            multiply_list_at(short_lists{});
        else if (listed >= LONG_LIST)
            multiply_list_at(long_lists{});
        else
            multiply_list_at(short_lists{});
        cp_async_wait<0>();
        // The next list and stages overwrite these.
        __syncwarp();
    }

    if (SPLIT) {
        for (; next_range_k < (unsigned)p.k; next_range_k += range_k)
            close_range();
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < 8; ++j)
                acc[i][j] = ranges_sum(i * 8 + j) + acc[i][j];
    }

    const bool vector_c = (p.ldc % 4) == 0 && ((uintptr_t)p.c % 16) == 0;
    const int64_t col = n0 + 8 * tc;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const int64_t row = m0 + 4 * tr + i;
        if (row >= p.m)
            break;
        float *out = p.c + row * p.ldc + col;
        store_c_row(p, out, acc[i], p.n - col, vector_c);
        store_c_row(p, out + 4, acc[i] + 4, p.n - col - 4, vector_c);
    }
}

// A CTA per group of WARPS strip pairs (one strip of op(A), WARPS
// consecutive strips of op(B)), or, with CLAIMS, a grid that launch caps:
// pairs are numbered by strip_a, then strip_b, each row of them padded to
// whole groups, and warp w of the grid multiplies pair w, then takes pairs
// in turn from the plan's counter (cleared by the probe), claiming the next
// before it multiplies the one it holds, so the claim's wait hides behind
// the work. (Taken in turn, not every gridDim.x-th group: the CTAs' shares
// then differ with the data, and both operands at d = 0.25, 4096^3, took 3%
// longer. Uncapped sizes keep the form without claims: with them, 2048^3 at
// d = 0.25 took 1.8% longer, claiming nothing.)
template <bool A_VEC, bool B_VEC, bool SPLIT, bool CLAIMS>
__global__ void __launch_bounds__(WARPS * 32, CTAS_PER_SM)
    warp_list_kernel(esmm_gemm_problem_t p, esmm_masks_t masks, warp_lists_gate gate,
                     int64_t k_per_split)
{
    if (!enter_gated(gate))
        return;
    // The NaN/Inf bytes of an operand the plan found finite would add no k
    // to a list: they go unread.
    const unsigned finite = gate.plan->finite;
    const esmm_masks_t read = {masks.a_bits, finite & ESMM_OPERAND_A ? nullptr : masks.a_nonfinite,
                               masks.b_bits, finite & ESMM_OPERAND_B ? nullptr : masks.b_nonfinite};
    extern __shared__ __align__(16) float smem[];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int64_t strips_b = (p.n + 31) / 32;
    const int64_t groups_b = (strips_b + WARPS - 1) / WARPS;
    if (!CLAIMS) {
        const int64_t strip_b = blockIdx.x % groups_b * WARPS + warp;
        // No barrier is shared: a warp past n leaves at once.
        if (strip_b < strips_b)
            multiply_pair<A_VEC, B_VEC, SPLIT>(p, read, k_per_split, smem, warp,
                                               blockIdx.x / groups_b, strip_b);
        return;
    }
    const uint64_t row_pairs = (uint64_t)groups_b * WARPS;
    const uint64_t pairs = (uint64_t)(p.m + 31) / 32 * row_pairs;
    const unsigned long long first_taken = (unsigned long long)gridDim.x * WARPS;
    unsigned long long pair = (unsigned long long)blockIdx.x * WARPS + warp;
    while (pair < pairs) {
        const unsigned long long next =
            lane == 0 ? first_taken + atomicAdd(gate.pairs_taken, 1ull) : 0ull;
        const uint64_t strip_b = pair % row_pairs;
        if (strip_b < (uint64_t)strips_b)
            multiply_pair<A_VEC, B_VEC, SPLIT>(p, read, k_per_split, smem, warp,
                                               (int64_t)(pair / row_pairs), (int64_t)strip_b);
        pair = __shfl_sync(0xffffffffu, next, 0);
    }
}

template <bool A_VEC, bool B_VEC, bool SPLIT, bool CLAIMS>
cudaError_t launch_grid(const esmm_gemm_problem_t &q, const esmm_masks_t &masks,
                        const warp_lists_gate &gate, int64_t k_per_split, int64_t blocks,
                        cudaStream_t stream)
{
    auto kernel = warp_list_kernel<A_VEC, B_VEC, SPLIT, CLAIMS>;
    const cudaError_t err =
        grant_dynamic_smem(reinterpret_cast<const void *>(kernel), SMEM_BYTES<SPLIT>);
    if (err != cudaSuccess)
        return err;
    if (CLAIMS) {
        int resident = 0;
        const cudaError_t counted = resident_blocks(reinterpret_cast<const void *>(kernel),
                                                    WARPS * 32, SMEM_BYTES<SPLIT>, &resident);
        if (counted != cudaSuccess)
            return counted;
        blocks = resident > 0 ? resident : 1; // any grid takes every pair
    }
    warp_lists_gate launched = gate;
    launched.settled = settled_launch(gate.settled, false, blocks, CTAS_PER_SM);
    return launch_chained(kernel, (unsigned)blocks, WARPS * 32, SMEM_BYTES<SPLIT>, stream, q,
                          masks, launched, k_per_split);
}

// A CTA a group of WARPS pairs, but where that would be more than
// CAPPED_ROUNDS rounds of CTAS_PER_SM CTAs an SM: then as many CTAs as the
// SMs hold at once, with claims, so that a launch the plan closes passes in
// one round (closed, the 4096 CTAs of 4096^3 took 6.8 us, the 396 an H200
// holds 3.4).
template <bool A_VEC, bool B_VEC, bool SPLIT>
cudaError_t launch(const esmm_gemm_problem_t &q, const esmm_masks_t &masks,
                   const warp_lists_gate &gate, int64_t k_per_split, cudaStream_t stream)
{
    const int64_t groups = (q.m + 31) / 32 * (((q.n + 31) / 32 + WARPS - 1) / WARPS);
    int sms = 0;
    const cudaError_t counted = current_sm_count(&sms);
    if (counted != cudaSuccess)
        return counted;
    if (groups > CAPPED_ROUNDS * CTAS_PER_SM * sms)
        return launch_grid<A_VEC, B_VEC, SPLIT, true>(q, masks, gate, k_per_split, 0, stream);
    return launch_grid<A_VEC, B_VEC, SPLIT, false>(q, masks, gate, k_per_split, groups, stream);
}

template <bool A_VEC, bool B_VEC>
cudaError_t launch_split_or_not(const esmm_gemm_problem_t &q, const esmm_masks_t &masks,
                                const warp_lists_gate &gate, cudaStream_t stream)
{
    const esmm_k_split_t split = esmm_k_split(q.m, q.n, q.k);
    return split.splits > 1
               ? launch<A_VEC, B_VEC, true>(q, masks, gate, split.k_per_split, stream)
               : launch<A_VEC, B_VEC, false>(q, masks, gate, q.k, stream);
}

} // namespace

cudaError_t launch_warp_list_gemm(const esmm_gemm_problem_t &p, const esmm_masks_t &masks,
                                  const warp_lists_gate &gate, float *wide_copy,
                                  cudaStream_t stream)
{
    const esmm_copied_t copied = esmm_plan_warp_lists_copy(p.op_a, p.op_b);
    if (copied != ESMM_COPY_NONE && wide_copy == nullptr)
        return cudaErrorInvalidValue;
    const esmm_gemm_problem_t q = reading_copies(p, copied, wide_copy);
    if (q.op_a != ESMM_OP_T || q.op_b != ESMM_OP_N || q.k > 0x7fffffffLL - 32)
        return cudaErrorInvalidValue; // the list holds k as int
    const bool a_vec = q.lda % 4 == 0 && (uintptr_t)q.a % 16 == 0;
    const bool b_vec = q.ldb % 4 == 0 && (uintptr_t)q.b % 16 == 0;
    if (a_vec)
        return b_vec ? launch_split_or_not<true, true>(q, masks, gate, stream)
                     : launch_split_or_not<true, false>(q, masks, gate, stream);
    return b_vec ? launch_split_or_not<false, true>(q, masks, gate, stream)
                 : launch_split_or_not<false, false>(q, masks, gate, stream);
}

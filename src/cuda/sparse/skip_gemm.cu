// The zero-skipping GEMM. A CTA computes one 32-row strip of op(A) against 256
// columns (8 strips) of op(B), the granularity of the masks along m, with the
// dense kernel's arithmetic: 8x8 values per thread, 4 warps of 32 rows x 2
// strips of B (pair warps), or 8x4, 8 warps of one strip each (strip warps;
// the plan picks the form). Per segment of k, the CTA
//   1. lists the k whose product is not proven zero for its A strip and at
//      least one of its B strips, in increasing order, with an 8-bit mask of
//      the B strips that need each;
//   2. copies only those A columns / B rows into shared memory (the dense
//      kernel's layout, cp.async), gathering by the list, and of the B rows
//      only the strips that need them, so loads shrink with the list;
//   3. lets every warp multiply the listed k its own B strips need. When A
//      alone is skipped by, every warp needs every listed k (but for strips
//      past n and B's NaN/Inf slices): the stage runs the unrolled dense
//      loop, and work and loads scale with A's density.
// Skipping by B runs the transposed product C^T = op(B)^T op(A)^T, so B's
// strips take A's place. Each C element sums its nonzero products in
// increasing k with fmaf, as the dense kernel does: results equal the dense
// path's bit for bit.
#include <cuda_runtime.h>

#include "cuda/dense/pipelined_tile.cuh"
#include "cuda/sparse/plan_gate.cuh"
#include "cuda/sparse/skip_gemm.cuh"
#include "cuda/sparse/warp_list_gemm.cuh"
#include "cuda/transpose_operand.cuh"

namespace {

// QN: accumulator quadrants per thread along n (a warp owns QN B strips);
// BK listed k per pipeline stage.
template <int QN_, int BK_, int STAGES_, int CTAS_PER_SM_, int AHEAD_> struct skip_config {
    static constexpr int BM = 32, BN = 256;
    static constexpr int BK = BK_;
    static constexpr int STAGES = STAGES_;
    static constexpr int QM = 2, QN = QN_;
    static constexpr int THREADS = (BM / (4 * QM)) * (BN / (4 * QN));
    static constexpr int WARPS = THREADS / 32;
    static constexpr int GROUP_M = 8;
    // Rows along m/n padded too (smem_row): unpadded, they ran pair warps
    // slower at 4096^3 (A only, d = 0.5: 1.625 ms against 1.601; B only 1.679
    // against 1.621).
    static constexpr int MN_ROW_PAD = 4;
    // Room for the padded shared rows; laid_out gives the lengths.
    static constexpr int A_STAGE = BK * (BM + SMEM_ROW_PAD), B_STAGE = BK * (BN + SMEM_ROW_PAD);
    static constexpr int B_STRIPS = BN / 32;
    // One k-block (8 k) per thread of the first 128 per segment.
    static constexpr int SEGMENT_KBLOCKS = 128;
    static constexpr int LIST_CAPACITY = SEGMENT_KBLOCKS * 8;
    // What the CTAs of an SM take decides the carveout, and what it leaves
    // the L1 that the 4-byte gathers of a k-contiguous A hit (measured for
    // pair warps: three 70 KB CTAs, needing the 228 KB carveout, ran d = 0.125
    // 6% slower than three of 62 KB).
    static constexpr int SMEM_BYTES = STAGES * (A_STAGE + B_STAGE) * (int)sizeof(float) +
                                      LIST_CAPACITY * (int)(sizeof(int) + sizeof(uint8_t));
    static constexpr int CTAS_PER_SM = CTAS_PER_SM_;
    // Entries whose fragments load ahead where a warp multiplies only some
    // of a stage.
    static constexpr int AHEAD = AHEAD_;
    static_assert(BK <= 32, "a stage's needs fit one ballot");
    static_assert(B_STRIPS <= 8, "a listed k's needs fit one byte");
    static_assert(SEGMENT_KBLOCKS <= THREADS, "a thread per k-block of a segment");
    static_assert(LIST_CAPACITY % BK == 0, "a stage's reads of the list stay inside it");
};

// Two forms, measured on the H100 at 4096^3 (esmm_sgemm, ms):
// - pair warps: 8x8 values per thread, 4 warps that each own two B strips,
//   16 listed k per stage in 2 stages, 4 CTAs per SM. Faster where a warp
//   needs most of what its tile lists (one operand skipped: A only
//   d = 0.5 1.885 against 2.041). 4 CTAs of 2 stages, at 128 registers,
//   beat 3 of 3 stages by 7-9% where one operand is skipped (A only d = 0.5
//   1.66 against 1.81 ms) and by 10% at 1024^3 with both at d = 0.25;
//   ptxas spills only where the wide operand is transposed on the way in,
//   and that ran 6% faster all the same (A only, NT, m = 1024).
// - strip warps: 8x4 values per thread, 8 warps that each own one B strip,
//   so a warp multiplies only the k its strip pair needs; 32 listed k per
//   stage in 2, 2 CTAs per SM. Faster where the B strips of a tile differ
//   (both skipped: d = 0.5 1.511 against 1.667, d = 0.25 0.654 against
//   0.697; since strip warps load fragments two entries ahead and copy only
//   the strips an entry needs, 1.434 and 0.567, and they also win at
//   d = 0.125).
// The plan picks one (esmm_plan_decide). Where the warp-list form
// (warp_list_gemm.cu) is queued, it takes the strip warps' place.
using pair_warps = skip_config<2, 16, 2, 4, 1>;
using strip_warps = skip_config<1, 32, 2, 2, 2>;

// The mask bytes of up to four strips of one operand for one k-block, one
// byte per strip: what the operand contributes (all existing k when it is not
// skipped by) and its NaN/Inf slices.
struct strip_bytes {
    unsigned bits = 0, nonfinite = 0;

    // Strip s's byte of k-block kb lies at (strip0 + s) * stride + kb. The
    // COUNT strips load independently, all in flight together.
    template <int COUNT>
    __device__ void load(const uint8_t *bits_in, const uint8_t *nonfinite_in, int64_t strip0,
                         int64_t strips, int64_t kb, int64_t stride, unsigned existing,
                         bool skipped_by)
    {
        const int64_t first = strip0 * stride + kb;
#pragma unroll
        for (int s = 0; s < COUNT; ++s) {
            if (strip0 + s < strips) {
                const int64_t at = first + s * stride;
                bits |= (skipped_by ? (unsigned)bits_in[at] : existing) << (8 * s);
                nonfinite |= (unsigned)nonfinite_in[at] << (8 * s);
            }
        }
    }

    __device__ unsigned bits_of(int s) const { return (bits >> (8 * s)) & 0xffu; }
    __device__ unsigned nonfinite_of(int s) const { return (nonfinite >> (8 * s)) & 0xffu; }
};

// Lists, for the k-blocks kb0 .. kb0 + SEGMENT_KBLOCKS - 1 (of kblocks), the
// k the tile needs, ascending, each with the set of B strips that need it,
// and returns how many. uniform: every B strip inside C needs every listed k
// (as where only A has zeros), so no warp need ask which entries are its
// own: it multiplies them all (a strip past C reads zero-filled or stale
// rows into values never stored). The masks' rows are `stride` k-blocks
// long (the whole product's; a split's masks start at its first k-block). A strip pair may
// skip k only if A's strip is zero there and B's strip finite, or B's strip
// zero and A's strip finite (DESIGN.md, Exactness).
template <class cfg>
__device__ int list_needed_k(const esmm_masks_t &masks, int64_t strip_a, int64_t strips_a,
                             int64_t strip_b0, int64_t strips_b, int64_t kb0, int64_t kblocks,
                             int64_t stride, int64_t k, int skip, int *list, uint8_t *needs,
                             int *warp_totals, bool &uniform)
{
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int64_t kb = kb0 + threadIdx.x;
    strip_bytes a, b_lo, b_hi; // B strips 0-3 and 4-7
    unsigned need_by_strip[cfg::B_STRIPS];
    unsigned any = 0;
#pragma unroll
    for (int t = 0; t < cfg::B_STRIPS; ++t)
        need_by_strip[t] = 0;
    if (threadIdx.x < cfg::SEGMENT_KBLOCKS && kb < kblocks) {
        const int64_t left = k - kb * 8;
        const unsigned existing = left >= 8 ? 0xffu : (1u << left) - 1u;
        a.load<1>(masks.a_bits, masks.a_nonfinite, strip_a, strips_a, kb, stride, existing,
                  skip & ESMM_SKIP_BY_A);
        b_lo.load<4>(masks.b_bits, masks.b_nonfinite, strip_b0, strips_b, kb, stride, existing,
                     skip & ESMM_SKIP_BY_B);
        b_hi.load<4>(masks.b_bits, masks.b_nonfinite, strip_b0 + 4, strips_b, kb, stride,
                     existing, skip & ESMM_SKIP_BY_B);
#pragma unroll
        for (int t = 0; t < cfg::B_STRIPS; ++t) {
            const strip_bytes &b = t < 4 ? b_lo : b_hi;
            need_by_strip[t] = (a.bits_of(0) | b.nonfinite_of(t % 4)) &
                               (b.bits_of(t % 4) | a.nonfinite_of(0));
            any |= need_by_strip[t];
        }
    }
    // Block-wide exclusive scan of the counts gives each k-block its place.
    const int count = __popc(any);
    int inclusive = count;
    for (int offset = 1; offset < 32; offset *= 2) {
        const int v = __shfl_up_sync(0xffffffffu, inclusive, offset);
        if (lane >= offset)
            inclusive += v;
    }
    if (lane == 31)
        warp_totals[warp] = inclusive;
    __syncthreads();
    if (warp == 0) {
        int total = lane < cfg::WARPS ? warp_totals[lane] : 0;
        for (int offset = 1; offset < 32; offset *= 2) {
            const int v = __shfl_up_sync(0xffffffffu, total, offset);
            if (lane >= offset)
                total += v;
        }
        if (lane < cfg::WARPS)
            warp_totals[lane] = total;
    }
    __syncthreads();
    int at = inclusive - count + (warp > 0 ? warp_totals[warp - 1] : 0);
    unsigned inside = 0;
#pragma unroll
    for (int t = 0; t < cfg::B_STRIPS; ++t)
        inside |= (strip_b0 + t < strips_b ? 1u : 0u) << t;
    bool all_needed = true;
    for (unsigned rest = any; rest; rest &= rest - 1) {
        const int i = __ffs(rest) - 1;
        unsigned need = 0;
#pragma unroll
        for (int t = 0; t < cfg::B_STRIPS; ++t)
            need |= ((need_by_strip[t] >> i) & 1u) << t;
        list[at] = (int)(kb * 8 + i);
        needs[at] = (uint8_t)need;
        all_needed = all_needed && (need & inside) == inside;
        ++at;
    }
    const int listed = warp_totals[cfg::WARPS - 1];
    uniform = __syncthreads_and(all_needed) != 0;
    return listed;
}

// Multiplies the entries of one stage this warp needs (needs[e] & mine);
// in a uniform segment (list_needed_k) that is every entry, unasked. The
// kernel's loop multiplies a full uniform stage itself, so a uniform stage
// here is a segment's partial last one. (Sent down the ballot's path with a
// made-up todo instead, it compiled the whole function worse: A only at
// d = 0.5, 4096^3, 1.93 ms against 1.65.)
template <class cfg>
__device__ __forceinline__ void multiply_stage(warp_tile_accumulator<cfg> &acc,
                                               const float *a_stage, const float *b_stage,
                                               const uint8_t *needs, int entries, unsigned mine,
                                               bool uniform)
{
    if (uniform) {
        multiply_entries(acc, a_stage, b_stage, entries);
        return;
    }
    const int lane = threadIdx.x % 32;
    unsigned todo = __ballot_sync(0xffffffffu, lane < cfg::BK && lane < entries &&
                                                   (needs[lane] & mine) != 0);
    if (todo == ~0u >> (32 - cfg::BK)) {
        multiply_entries(acc, a_stage, b_stage, cfg::BK);
        return;
    }
    // cfg::AHEAD (1 or 2) entries ahead: an entry's fragments load while the
    // ones before it multiply. AHEAD + 1 fragment sets take turns, so none is
    // copied. (Written out for each depth: a loop over an array of sets cost
    // pair warps 20 registers.)
    auto load_next = [&]() {
        const int e = __ffs(todo) - 1;
        todo &= todo - 1;
        return acc.load(a_stage + e * cfg::A_ROW, b_stage + e * cfg::B_ROW);
    };
    static_assert(cfg::AHEAD == 1 || cfg::AHEAD == 2, "one or two entries ahead");
    if (todo == 0)
        return;
    auto first = load_next();
    if (cfg::AHEAD == 1) {
        while (todo) {
            const auto second = load_next();
            acc.multiply(first);
            if (todo == 0) {
                acc.multiply(second);
                return;
            }
            first = load_next();
            acc.multiply(second);
        }
        acc.multiply(first);
        return;
    }
    if (todo == 0) {
        acc.multiply(first);
        return;
    }
    auto second = load_next();
    while (todo) {
        const auto third = load_next();
        acc.multiply(first);
        if (todo == 0) {
            acc.multiply(second);
            acc.multiply(third);
            return;
        }
        first = load_next();
        acc.multiply(second);
        if (todo == 0) {
            acc.multiply(third);
            acc.multiply(first);
            return;
        }
        second = load_next();
        acc.multiply(third);
    }
    acc.multiply(first);
    acc.multiply(second);
}

template <class cfg, tile_layout A_LAYOUT, tile_layout B_LAYOUT, bool TRANSPOSED_C, bool SPLIT>
__global__ void __launch_bounds__(cfg::THREADS, cfg::CTAS_PER_SM)
    skip_kernel(esmm_gemm_problem_t whole, k_layers layers, esmm_masks_t all_masks, int skip,
                skip_gate gate)
{
    if (!enter_gated(gate))
        return;
    const esmm_gemm_problem_t p = layer_problem<SPLIT, TRANSPOSED_C>(whole, layers);
    // The layer's masks: the whole product's rows (stride), from its first k-block.
    const int64_t stride = (whole.k + 7) / 8;
    const int64_t first_kb = SPLIT ? blockIdx.z * layers.k_per_split / 8 : 0;
    const esmm_masks_t masks = {all_masks.a_bits + first_kb, all_masks.a_nonfinite + first_kb,
                                all_masks.b_bits + first_kb, all_masks.b_nonfinite + first_kb};
    extern __shared__ __align__(16) float smem[];
    float *a_smem = smem;
    float *b_smem = smem + cfg::STAGES * cfg::A_STAGE;
    int *list = reinterpret_cast<int *>(b_smem + cfg::STAGES * cfg::B_STAGE);
    uint8_t *needs = reinterpret_cast<uint8_t *>(list + cfg::LIST_CAPACITY);
    __shared__ int warp_totals[cfg::WARPS];

    int64_t tile_m, tile_n;
    pipelined_tile_coords<cfg>(p.m, p.n, tile_m, tile_n);
    const int64_t m0 = tile_m * cfg::BM, n0 = tile_n * cfg::BN;
    const tile_loader<cfg, A_LAYOUT, cfg::BM> a_load(p.a, p.lda, m0, p.m);
    const tile_loader<cfg, B_LAYOUT, cfg::BN> b_load(p.b, p.ldb, n0, p.n);
    const int64_t kblocks = (p.k + 7) / 8;
    // The B strips of this warp's columns: 32 per accumulator quadrant, the
    // quadrants BN / QN apart.
    using rows = laid_out<cfg, A_LAYOUT, B_LAYOUT>;
    using accumulator = warp_tile_accumulator<rows>;
    const int warp = threadIdx.x / 32;
    unsigned mine = 0;
#pragma unroll
    for (int q = 0; q < cfg::QN; ++q)
        mine |= 1u << (warp % accumulator::WARP_COLS + q * accumulator::N_STRIDE / 32);

    accumulator acc;
    for (int64_t kb0 = 0; kb0 < kblocks; kb0 += cfg::SEGMENT_KBLOCKS) {
        bool uniform;
        const int listed = list_needed_k<cfg>(masks, m0 / 32, (p.m + 31) / 32, n0 / 32,
                                         (p.n + 31) / 32, kb0, kblocks, stride, p.k, skip,
                                         list, needs, warp_totals, uniform);
        // Unsigned: the stage index's divide and remainder become shifts.
        const unsigned stages = ((unsigned)listed + cfg::BK - 1) / cfg::BK;
        auto issue = [&](unsigned s) {
            if (s < stages) {
                const unsigned stage = s % cfg::STAGES;
                const int *k_of = list + s * cfg::BK;
                const int count = listed - (int)(s * cfg::BK);
                float *b_stage = b_smem + stage * cfg::B_STAGE;
                const listed_row_offset<B_LAYOUT> b_row{k_of, p.ldb};
                a_load.issue_list(a_smem + stage * cfg::A_STAGE, count,
                                  listed_row_offset<A_LAYOUT>{k_of, p.lda}, every_strip{});
                // B strips read by a warp beside one that needs the entry
                // (pair warps) are zero-filled; a strip warp reads only its own.
                // In a uniform segment every strip inside C needs every entry,
                // so pair warps may copy them unasked (strips past C read rows
                // clamped inside B, or copy no bytes, into values never
                // stored). Measured at 4096^3, d = 0.5, that is faster where A
                // is gathered along k (A only: 1.620 -> 1.600 ms) and slower
                // where A's rows are (B only: 1.621 -> 1.654 ms).
                if (cfg::QN > 1 && A_LAYOUT == tile_layout::K_CONTIG && uniform)
                    b_load.issue_list(b_stage, count, b_row, every_strip{});
                else
                    b_load.issue_list(b_stage, count, b_row,
                                      listed_strips<(cfg::QN > 1)>{needs + s * cfg::BK});
            }
            cp_async_commit();
        };
#pragma unroll
        for (unsigned s = 0; s < cfg::STAGES - 1; ++s)
            issue(s);
        for (unsigned s = 0; s < stages; ++s) {
            cp_async_wait<cfg::STAGES - 2>();
            __syncthreads();
            const unsigned stage = s % cfg::STAGES;
            const float *a_stage = a_smem + stage * cfg::A_STAGE;
            const float *b_stage = b_smem + stage * cfg::B_STAGE;
            const int entries = listed - (int)(s * cfg::BK);
            if (uniform && entries >= cfg::BK) {
                // A full uniform stage: entry 0's fragments load before the
                // next stage's copies are issued, so the first products do
                // not wait on them.
                const auto first = acc.load(a_stage, b_stage);
                issue(s + cfg::STAGES - 1);
                acc.multiply(first);
                multiply_entries<rows, 1>(acc, a_stage, b_stage, cfg::BK);
            } else {
                issue(s + cfg::STAGES - 1);
                multiply_stage(acc, a_stage, b_stage, needs + s * cfg::BK, entries, mine,
                               uniform);
            }
        }
        cp_async_wait<0>();
        // The next segment rewrites the list and the stages.
        __syncthreads();
    }
    acc.template store<TRANSPOSED_C>(p, m0, n0);
}

// Launches the kernel in form cfg for the layouts of one orientation's problem.
template <class cfg> struct skip_launch {
    esmm_masks_t masks;
    int skip;
    skip_gate gate;
    float *partials;
    cudaStream_t stream;

    template <tile_layout A_LAYOUT, tile_layout B_LAYOUT, bool TRANSPOSED_C>
    cudaError_t run(const esmm_gemm_problem_t &p)
    {
        const k_layers layers = split_layers(p, partials);
        auto kernel = layers.count > 1
                          ? skip_kernel<cfg, A_LAYOUT, B_LAYOUT, TRANSPOSED_C, true>
                          : skip_kernel<cfg, A_LAYOUT, B_LAYOUT, TRANSPOSED_C, false>;
        skip_gate launched = gate;
        launched.settled = settled_launch(gate.settled, gate.behind_lists,
                                          pipelined_tile_count<cfg>(p.m, p.n) * layers.count,
                                          cfg::CTAS_PER_SM);
        return launch_cfg_tiles<cfg>(kernel, p, layers.count, stream, p, layers, masks, skip,
                                      launched);
    }
};

} // namespace

// Runs one orientation's problem q behind gate. When q's wide operand
// (op(B) = B^T) runs along k and the plan's rule copies it (wide), the kernel
// reads its k-major copy (launch_copy_operand made it). The pair-warp form is
// queued, behind the plan's choice of form when the plan picks among several
// (form_picked), and with strip_form the strip-warp form beside it. Each
// launch after the first is settled (plan_gate.cuh).
static cudaError_t launch_orientation(esmm_gemm_problem_t q, bool transposed_c, int wide,
                                      const esmm_masks_t &masks, int skip, skip_gate gate,
                                      bool form_picked, bool strip_form, float *partials,
                                      float *wide_copy, cudaStream_t stream)
{
    if (wide == ESMM_WIDE_COPIED && wide_copy != nullptr)
        q = reading_copy(q, ESMM_COPY_B, wide_copy);
    skip_gate pair_gate = gate;
    pair_gate.form = form_picked ? ESMM_FORM_PAIR_WARPS : -1;
    skip_launch<pair_warps> pair = {masks, skip, pair_gate, partials, stream};
    cudaError_t err = transposed_c ? dispatch_operand_layouts<true>(q, pair)
                                   : dispatch_operand_layouts<false>(q, pair);
    if (err != cudaSuccess || !strip_form)
        return err;
    skip_gate strip_gate = gate;
    strip_gate.form = ESMM_FORM_STRIP_WARPS;
    strip_gate.settled = true;
    skip_launch<strip_warps> strip = {masks, skip, strip_gate, partials, stream};
    return transposed_c ? dispatch_operand_layouts<true>(q, strip)
                        : dispatch_operand_layouts<false>(q, strip);
}

cudaError_t launch_skip_gemm(const esmm_gemm_problem_t &p, const esmm_masks_t &masks,
                             esmm_skip_by_t skip, esmm_plan_stats_t *plan, bool planned,
                             float *partials, float *wide_copy, bool &settled,
                             cudaStream_t stream)
{
    if (p.k > 0x7fffffffLL - 8)
        return cudaErrorInvalidValue; // the list holds k as int
    // Skipping by one operand puts it in A's place; skipping by both queues
    // both orientations and the plan on the device lets one run (each reads
    // its wide operand's copy at that copy's place in wide_copy).
    // Skipping by one operand, every warp needs every listed k: pair warps.
    // Skipping by both, large products queue a second form, the warp lists
    // (one launch for both orientations) where they read the operands the
    // copy rule allows, else strip warps.
    const bool lists = esmm_plan_warp_lists((int)skip, p.m, p.n, p.k, p.op_a, p.op_b) >= 0.0;
    const bool strip_form = !lists && esmm_plan_queues_strip_warps(skip, p.m, p.n, p.k);
    cudaError_t err = cudaSuccess;
    // The warp lists go first: where they run (both operands sparse), the
    // closed orientations behind them pass through their tail on the
    // settled gate, whatever their size (settled_launch). Measured on the
    // H100 against the lists queued last (ms, NN 4096^3, both operands at
    // d): d = 0.125 0.197 against 0.202, d = 0.25 0.342 against 0.345,
    // 2048^3 at d = 0.25 0.0824 against 0.085-0.087; products with one
    // operand skipped, and dense ones, moved by 0.4% or less.
    if (lists) {
        err = launch_warp_list_gemm(
            p, masks, warp_lists_gate{plan, planned, settled, &plan->warp_list_pairs}, wide_copy,
            stream);
        settled = settled || err == cudaSuccess;
    }
    if (err == cudaSuccess && (skip & ESMM_SKIP_BY_A)) {
        skip_gate gate = orientation_gate(plan, planned, skip, ESMM_PLAN_SKIP_NORMAL);
        gate.settled = settled;
        gate.behind_lists = lists;
        err = launch_orientation(p, false, esmm_plan_normal_wide(p.m, p.n, p.k, p.op_a, p.op_b),
                                 masks, (int)skip, gate, lists || strip_form, strip_form,
                                 partials,
                                 wide_copy ? wide_copy + copy_offset(p, ESMM_COPY_B) : nullptr,
                                 stream);
        settled = settled || err == cudaSuccess;
    }
    if (err == cudaSuccess && (skip & ESMM_SKIP_BY_B)) {
        skip_gate gate = orientation_gate(plan, planned, skip, ESMM_PLAN_SKIP_SWAPPED);
        gate.settled = settled;
        gate.behind_lists = lists;
        const esmm_masks_t swapped = {masks.b_bits, masks.b_nonfinite, masks.a_bits,
                                      masks.a_nonfinite};
        const int by = (skip & ESMM_SKIP_BY_A ? ESMM_SKIP_BY_B : 0) | ESMM_SKIP_BY_A;
        err = launch_orientation(transposed_problem(p), true,
                                 esmm_plan_swapped_wide(p.m, p.n, p.k, p.op_a, p.op_b),
                                 swapped, by, gate, lists || strip_form, strip_form, partials,
                                 wide_copy ? wide_copy + copy_offset(p, ESMM_COPY_A) : nullptr,
                                 stream);
        settled = settled || err == cudaSuccess;
    }
    return err;
}

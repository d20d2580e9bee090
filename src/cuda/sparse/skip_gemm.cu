// The zero-skipping GEMM. A CTA computes a 128x128 tile of C with 16 warps,
// each owning exactly one (32-row strip of A, 32-column strip of B) pair, the
// granularity of the masks. Per segment of k, the CTA
//   1. lists the k whose product is not proven zero for at least one of its
//      16 pairs (the union), in increasing order, with a 16-bit mask of the
//      pairs that need each;
//   2. copies only those A columns / B rows into shared memory, through the
//      same cp.async pipeline and copy paths as the dense kernel (gathering by
//      the list), so loads shrink with the union;
//   3. lets every warp multiply only the listed k its own pair needs, so
//      arithmetic shrinks with each pair's own density. A stage every entry
//      of which the warp needs runs the unrolled dense loop: the exact form of
//      the "uniform pattern" idea, taken per warp and per stage.
// Each C element sums its nonzero products in increasing k with fmaf, as the
// dense kernel does, so the result equals the dense path's bit for bit.
#include <cuda_runtime.h>

#include "cuda/dense/pipelined_tile.cuh"
#include "cuda/sparse/plan_gate.cuh"
#include "cuda/sparse/skip_gemm.cuh"

namespace {

struct skip_config {
    static constexpr int BM = 128, BN = 128;
    static constexpr int BK = 16; // listed k per pipeline stage
    static constexpr int STAGES = 4;
    static constexpr int THREADS = 512;
    static constexpr int WARPS = THREADS / 32;
    static constexpr int ROW = BM + 4; // as pipelined_config: aligned, conflict-free
    static constexpr int STAGE_FLOATS = BK * ROW;
    static constexpr int GROUP_M = 8;
    static constexpr int STRIPS = BM / 32; // strips of A (and of B) per tile
    // One k-block (8 k) per thread per segment.
    static constexpr int SEGMENT_KBLOCKS = THREADS;
    static constexpr int LIST_CAPACITY = SEGMENT_KBLOCKS * 8;
    static constexpr int SMEM_BYTES = 2 * STAGES * STAGE_FLOATS * (int)sizeof(float) +
                                      LIST_CAPACITY * (int)(sizeof(int) + sizeof(uint16_t));
    static_assert(WARPS == STRIPS * STRIPS, "one warp per strip pair");
    static_assert(BK <= 32, "a stage's needs fit one ballot");
};

// Each thread holds 4 rows x 8 columns of its warp's 32x32 pair.
struct pair_accumulator {
    using cfg = skip_config;
    float c[4][8];
    int pair;     // warp index: A strip pair / 4, B strip pair % 4
    int a_offset; // first row within the tile
    int b_offset; // first column within the tile

    __device__ pair_accumulator()
    {
        const int lane = threadIdx.x % 32;
        pair = threadIdx.x / 32;
        a_offset = (pair / cfg::STRIPS) * 32 + (lane / 4) * 4;
        b_offset = (pair % cfg::STRIPS) * 32 + (lane % 4) * 8;
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < 8; ++j)
                c[i][j] = 0.0f;
    }

    // A thread's operands of one k: 4 values of A's column, 8 of B's row.
    struct fragments {
        float4 a, b0, b1;
    };

    __device__ __forceinline__ fragments load(const float *a_row, const float *b_row) const
    {
        return {*reinterpret_cast<const float4 *>(a_row + a_offset),
                *reinterpret_cast<const float4 *>(b_row + b_offset),
                *reinterpret_cast<const float4 *>(b_row + b_offset + 4)};
    }

    __device__ __forceinline__ void multiply(const fragments &f)
    {
        const float a[4] = {f.a.x, f.a.y, f.a.z, f.a.w};
        const float b[8] = {f.b0.x, f.b0.y, f.b0.z, f.b0.w, f.b1.x, f.b1.y, f.b1.z, f.b1.w};
#pragma unroll
        for (int j = 0; j < 8; ++j)
#pragma unroll
            for (int i = 0; i < 4; ++i)
                c[i][j] = fmaf(a[i], b[j], c[i][j]);
    }

    __device__ __forceinline__ void multiply_k(const float *a_row, const float *b_row)
    {
        multiply(load(a_row, b_row));
    }

    // Multiplies the stage entries this warp's pair needs: needs[e] has bit
    // `pair` set when entry e's product is not proven zero for the pair.
    __device__ __forceinline__ void multiply_stage(const float *a_stage, const float *b_stage,
                                                   const uint16_t *needs, int entries)
    {
        const int lane = threadIdx.x % 32;
        const bool mine = lane < cfg::BK && lane < entries && ((needs[lane] >> pair) & 1u);
        unsigned todo = __ballot_sync(0xffffffffu, mine);
        if (todo == ~0u >> (32 - cfg::BK)) {
#pragma unroll
            for (int e = 0; e < cfg::BK; ++e)
                multiply_k(a_stage + e * cfg::ROW, b_stage + e * cfg::ROW);
            return;
        }
        // One entry ahead: the next entry's fragments load while this one's
        // products run.
        if (todo == 0)
            return;
        int e = __ffs(todo) - 1;
        fragments f = load(a_stage + e * cfg::ROW, b_stage + e * cfg::ROW);
        for (todo &= todo - 1; todo; todo &= todo - 1) {
            e = __ffs(todo) - 1;
            const fragments next = load(a_stage + e * cfg::ROW, b_stage + e * cfg::ROW);
            multiply(f);
            f = next;
        }
        multiply(f);
    }

    // As warp_tile_accumulator::store: with TRANSPOSED_C the tile is C^T.
    template <bool TRANSPOSED_C>
    __device__ void store(const esmm_gemm_problem_t &p, int64_t m0, int64_t n0) const
    {
        const bool vector_c = (p.ldc % 4) == 0 && ((uintptr_t)p.c % 16) == 0;
        const int64_t row = m0 + a_offset, col = n0 + b_offset;
        if (TRANSPOSED_C) {
#pragma unroll
            for (int j = 0; j < 8; ++j) {
                if (col + j >= p.n)
                    break;
                const float v[4] = {c[0][j], c[1][j], c[2][j], c[3][j]};
                store_c_row(p, p.c + (col + j) * p.ldc + row, v, p.m - row, vector_c);
            }
        } else {
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                if (row + i >= p.m)
                    break;
#pragma unroll
                for (int h = 0; h < 2; ++h)
                    store_c_row(p, p.c + (row + i) * p.ldc + col + 4 * h, &c[i][4 * h],
                                p.n - col - 4 * h, vector_c);
            }
        }
    }
};

// The mask bytes of the tile's four strips of one operand for one k-block,
// packed one byte per strip: what the operand contributes (all existing k
// when it is not skipped by) and its NaN/Inf slices.
struct strip_bytes {
    unsigned bits, nonfinite;

    __device__ void load(const uint8_t *bits_in, const uint8_t *nonfinite_in, int64_t strip0,
                         int64_t strips, int64_t kb, int64_t kblocks, int64_t k, bool skipped_by)
    {
        const int64_t left = k - kb * 8;
        const unsigned existing = left >= 8 ? 0xffu : (1u << left) - 1u;
        bits = nonfinite = 0;
#pragma unroll
        for (int s = 0; s < skip_config::STRIPS; ++s) {
            if (strip0 + s >= strips)
                break;
            const int64_t at = (strip0 + s) * kblocks + kb;
            bits |= (skipped_by ? (unsigned)bits_in[at] : existing) << (8 * s);
            nonfinite |= (unsigned)nonfinite_in[at] << (8 * s);
        }
    }

    __device__ unsigned bits_of(int s) const { return (bits >> (8 * s)) & 0xffu; }
    __device__ unsigned nonfinite_of(int s) const { return (nonfinite >> (8 * s)) & 0xffu; }
};

// The k of a k-block that pair (s, t) may not skip: A's strip s may be skipped
// only where it is zero and B's strip t finite, or B's strip t zero and A's
// strip s finite (DESIGN.md, Exactness).
__device__ __forceinline__ unsigned pair_needs(const strip_bytes &a, const strip_bytes &b, int s,
                                               int t)
{
    return (a.bits_of(s) | b.nonfinite_of(t)) & (b.bits_of(t) | a.nonfinite_of(s));
}

// Lists, for the k-blocks kb0 .. kb0 + SEGMENT_KBLOCKS - 1, the k at least one
// pair of the tile needs, ascending, each with the 16-bit set of pairs that
// need it, and returns how many.
__device__ int list_needed_k(const esmm_masks_t &masks, int64_t strip_a0, int64_t strips_a,
                             int64_t strip_b0, int64_t strips_b, int64_t kb0, int64_t kblocks,
                             int64_t k, int skip, int *list, uint16_t *needs, int *warp_totals)
{
    using cfg = skip_config;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int64_t kb = kb0 + threadIdx.x;
    strip_bytes a = {0, 0}, b = {0, 0};
    unsigned any = 0;
    if (kb < kblocks) {
        a.load(masks.a_bits, masks.a_nonfinite, strip_a0, strips_a, kb, kblocks, k,
               skip & ESMM_SKIP_BY_A);
        b.load(masks.b_bits, masks.b_nonfinite, strip_b0, strips_b, kb, kblocks, k,
               skip & ESMM_SKIP_BY_B);
#pragma unroll
        for (int s = 0; s < cfg::STRIPS; ++s)
#pragma unroll
            for (int t = 0; t < cfg::STRIPS; ++t)
                any |= pair_needs(a, b, s, t);
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
    for (unsigned rest = any; rest; rest &= rest - 1) {
        const int i = __ffs(rest) - 1;
        unsigned need = 0;
#pragma unroll
        for (int s = 0; s < cfg::STRIPS; ++s)
#pragma unroll
            for (int t = 0; t < cfg::STRIPS; ++t)
                need |= ((pair_needs(a, b, s, t) >> i) & 1u) << (s * cfg::STRIPS + t);
        list[at] = (int)(kb * 8 + i);
        needs[at] = (uint16_t)need;
        ++at;
    }
    const int listed = warp_totals[cfg::WARPS - 1];
    __syncthreads();
    return listed;
}

template <tile_layout A_LAYOUT, tile_layout B_LAYOUT, bool TRANSPOSED_C>
__global__ void __launch_bounds__(skip_config::THREADS, 1)
    skip_kernel(esmm_gemm_problem_t p, esmm_masks_t masks, int skip, const esmm_plan_stats_t *gate)
{
    using cfg = skip_config;
    if (gate != nullptr && !plan_selects_sparse(gate, p.m, p.n, p.k))
        return;
    extern __shared__ __align__(16) float smem[];
    float *a_smem = smem;
    float *b_smem = smem + cfg::STAGES * cfg::STAGE_FLOATS;
    int *list = reinterpret_cast<int *>(smem + 2 * cfg::STAGES * cfg::STAGE_FLOATS);
    uint16_t *needs = reinterpret_cast<uint16_t *>(list + cfg::LIST_CAPACITY);
    __shared__ int warp_totals[cfg::WARPS];

    int64_t tile_m, tile_n;
    pipelined_tile_coords<cfg>(p.m, p.n, tile_m, tile_n);
    const int64_t m0 = tile_m * cfg::BM, n0 = tile_n * cfg::BN;
    const tile_loader<cfg, A_LAYOUT> a_load(p.a, p.lda, m0, p.m);
    const tile_loader<cfg, B_LAYOUT> b_load(p.b, p.ldb, n0, p.n);
    const int64_t kblocks = (p.k + 7) / 8;

    pair_accumulator acc;
    for (int64_t kb0 = 0; kb0 < kblocks; kb0 += cfg::SEGMENT_KBLOCKS) {
        const int listed = list_needed_k(masks, m0 / 32, (p.m + 31) / 32, n0 / 32,
                                         (p.n + 31) / 32, kb0, kblocks, p.k, skip, list, needs,
                                         warp_totals);
        const int stages = (listed + cfg::BK - 1) / cfg::BK;
        auto issue = [&](int s) {
            if (s < stages) {
                const int stage = s % cfg::STAGES;
                a_load.issue_list(a_smem + stage * cfg::STAGE_FLOATS, list + s * cfg::BK,
                                  listed - s * cfg::BK, p.lda);
                b_load.issue_list(b_smem + stage * cfg::STAGE_FLOATS, list + s * cfg::BK,
                                  listed - s * cfg::BK, p.ldb);
            }
            cp_async_commit();
        };
#pragma unroll
        for (int s = 0; s < cfg::STAGES - 1; ++s)
            issue(s);
        for (int s = 0; s < stages; ++s) {
            cp_async_wait<cfg::STAGES - 2>();
            __syncthreads();
            issue(s + cfg::STAGES - 1);
            const int stage = s % cfg::STAGES;
            acc.multiply_stage(a_smem + stage * cfg::STAGE_FLOATS,
                               b_smem + stage * cfg::STAGE_FLOATS, needs + s * cfg::BK,
                               listed - s * cfg::BK);
        }
        cp_async_wait<0>();
        // The next segment rewrites the list and the stages.
        __syncthreads();
    }
    acc.template store<TRANSPOSED_C>(p, m0, n0);
}

// Launches the kernel for the layouts dispatch_layouts picks; a transposed
// problem takes B's masks in A's place.
struct skip_launch {
    esmm_masks_t masks;
    int skip;
    const esmm_plan_stats_t *gate;
    cudaStream_t stream;

    template <tile_layout A_LAYOUT, tile_layout B_LAYOUT, bool TRANSPOSED_C>
    cudaError_t run(const esmm_gemm_problem_t &p)
    {
        using cfg = skip_config;
        auto kernel = skip_kernel<A_LAYOUT, B_LAYOUT, TRANSPOSED_C>;
        cudaError_t err = cudaFuncSetAttribute(
            kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, cfg::SMEM_BYTES);
        if (err != cudaSuccess)
            return err;
        const int64_t tiles = pipelined_tile_count<cfg>(p.m, p.n);
        if (tiles > 0x7fffffff)
            return cudaErrorInvalidConfiguration;
        esmm_masks_t m = masks;
        int by = skip;
        if (TRANSPOSED_C) {
            m = {masks.b_bits, masks.b_nonfinite, masks.a_bits, masks.a_nonfinite};
            by = (skip & ESMM_SKIP_BY_A ? ESMM_SKIP_BY_B : 0) |
                 (skip & ESMM_SKIP_BY_B ? ESMM_SKIP_BY_A : 0);
        }
        kernel<<<(unsigned)tiles, cfg::THREADS, cfg::SMEM_BYTES, stream>>>(p, m, by, gate);
        return cudaGetLastError();
    }
};

} // namespace

cudaError_t launch_skip_gemm(const esmm_gemm_problem_t &p, const esmm_masks_t &masks,
                             esmm_skip_by_t skip, const esmm_plan_stats_t *gate,
                             cudaStream_t stream)
{
    if (p.k > 0x7fffffffLL - 8)
        return cudaErrorInvalidValue; // the list holds k as int
    skip_launch launch = {masks, (int)skip, gate, stream};
    return dispatch_layouts(p, launch);
}

// Building blocks of the pipelined kernel (08) that the sparse kernels reuse:
// the tile configuration, cp.async wrappers, the global->shared tile loader
// and the per-thread accumulator (4x4 quadrants: 8x8 in the dense kernel,
// 8x8 or 8x4 in the skipping kernel) with its epilogue.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

extern "C" {
#include "cuda/cuda_backend.h"
#include "gemm_problem.h"
}

#include "cuda/launch_cache.cuh"

// Floats added to a shared row that 4-byte copies transpose into (smem_row).
constexpr int SMEM_ROW_PAD = 4;

// K_TILE (k per pipeline stage) and STAGE_COUNT are set by the kernel that
// uses the tile, as are the C tile (TILE_M x TILE_N), the 4x4 quadrants each
// thread owns along m and n, and the CTAs per SM the registers are set for.
template <int K_TILE, int STAGE_COUNT, int TILE_M = 128, int TILE_N = 128, int QUADS_M = 2,
          int QUADS_N = 2, int CTAS_PER_SM = 2>
struct pipelined_config {
    static constexpr int BM = TILE_M; // C tile rows per CTA
    static constexpr int BN = TILE_N; // C tile columns per CTA
    static constexpr int BK = K_TILE;
    static constexpr int STAGES = STAGE_COUNT;
    // Each thread owns QM x QN quadrants of 4x4 C values, BM/QM rows and
    // BN/QN columns apart.
    static constexpr int QM = QUADS_M;
    static constexpr int QN = QUADS_N;
    static constexpr int THREADS = (BM / (4 * QM)) * (BN / (4 * QN));
    static constexpr int WARPS = THREADS / 32;
    // Rows copied along m/n carry no pad here (smem_row). A stage holds BK
    // shared rows of each operand, with room for the padded ones.
    static constexpr int MN_ROW_PAD = 0;
    static constexpr int A_STAGE = BK * (BM + SMEM_ROW_PAD), B_STAGE = BK * (BN + SMEM_ROW_PAD);
    static constexpr int SMEM_BYTES = STAGES * (A_STAGE + B_STAGE) * (int)sizeof(float);
    static constexpr int MIN_CTAS_PER_SM = CTAS_PER_SM;
    // Tile rows walked together, so concurrent CTAs share A and B panels in L2.
    static constexpr int GROUP_M = 8;
    static_assert(BK % 8 == 0, "transposing loads cover 8 k per warp");
    static_assert((BN / (4 * QN)) % 8 == 0, "a warp spans 8 thread columns");
};

// One cp.async of a SIZE-byte chunk (16: cached in L2 only, 4: in L1 too),
// issued only when copy is true (else the stage keeps what it held).
template <int SIZE>
__device__ __forceinline__ void cp_async(float *dst, const float *src, bool copy = true)
{
    static_assert(SIZE == 16 || SIZE == 4, "cp.async copies 16 or 4 bytes here");
    const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    if (SIZE == 16)
        asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %2, 0;\n"
                     " @p cp.async.cg.shared.global [%0], [%1], 16;\n}\n" ::"r"(d),
                     "l"(src), "r"((int)copy));
    else
        asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %2, 0;\n"
                     " @p cp.async.ca.shared.global [%0], [%1], 4;\n}\n" ::"r"(d),
                     "l"(src), "r"((int)copy));
}

// The same, copying the first `bytes` (0..SIZE) and zero-filling the rest;
// the fill costs a few instructions per copy (it shifts the source address).
template <int SIZE>
__device__ __forceinline__ void cp_async_zfill(float *dst, const float *src, int bytes,
                                               bool copy = true)
{
    static_assert(SIZE == 16 || SIZE == 4, "cp.async copies 16 or 4 bytes here");
    const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    if (SIZE == 16)
        asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %2, 0;\n"
                     " @p cp.async.cg.shared.global [%0], [%1], 16, %3;\n}\n" ::"r"(d),
                     "l"(src), "r"((int)copy), "r"(bytes));
    else
        asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %2, 0;\n"
                     " @p cp.async.ca.shared.global [%0], [%1], 4, %3;\n}\n" ::"r"(d),
                     "l"(src), "r"((int)copy), "r"(bytes));
}

__device__ __forceinline__ void cp_async_commit()
{
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}

template <int PENDING> __device__ __forceinline__ void cp_async_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING) : "memory");
}

// Which 32-wide strips of a tile need each listed entry, for the listed
// copies (issue_list): a chunk of a strip that does not need its entry is not
// read from global memory. With ZERO_FILL it is written as zeros instead,
// for a warp that reads it beside a strip that needs the entry: a zero there
// adds nothing, as the skipped product is zero and finite (the list's rule).
// Without, its warp never reads it, and the stage keeps what it held.
struct every_strip {
    static constexpr bool ZERO_FILL = false;
    __device__ __forceinline__ unsigned operator()(int) const { return ~0u; }
};

template <bool ZERO_FILL_> struct listed_strips {
    static constexpr bool ZERO_FILL = ZERO_FILL_;
    const uint8_t *needs; // a stage's entries, bit s for strip s
    __device__ __forceinline__ unsigned operator()(int e) const { return needs[e]; }
};

// One listed copy of SIZE bytes of an entry inside the stage's count (ok),
// for a strip that may not need it. WHOLE: all SIZE bytes lie inside the
// matrix; else the first `bytes` do and the rest is zero-filled.
template <int SIZE, bool WHOLE, class StripNeeds>
__device__ __forceinline__ void cp_async_listed(float *dst, const float *src, int bytes, bool ok,
                                                bool needed)
{
    if (WHOLE && !StripNeeds::ZERO_FILL)
        cp_async<SIZE>(dst, src, ok && needed);
    else
        cp_async_zfill<SIZE>(dst, src, needed ? bytes : 0,
                             StripNeeds::ZERO_FILL ? ok : ok && needed);
}

// Split-K as a launch sees it (esmm_k_split): grid layer blockIdx.z
// multiplies k from z * k_per_split on and adds its raw sums (alpha 1, beta 0)
// into its C-shaped slice of the partial sums. partials == nullptr: one
// layer, the product itself.
struct k_layers {
    int64_t k_per_split;
    float *partials;
    unsigned count; // grid layers
};

inline k_layers split_layers(const esmm_gemm_problem_t &p, float *partials)
{
    const esmm_k_split_t split = esmm_k_split(p.m, p.n, p.k);
    if (split.splits <= 1)
        return {p.k, nullptr, 1};
    return {split.k_per_split, partials, (unsigned)split.splits};
}

// The part of p (as the kernel receives it: with TRANSPOSED_C the problem of
// C^T, whose C is p.n x p.m) that this CTA's layer multiplies. Kernels
// instantiate the split case apart (SPLIT): unsplit, they use p as it is, its
// fields read from the kernel's parameters at no register cost and C known
// to be global memory (measured: 3% of the dense kernel at 4096^3 otherwise).
template <bool SPLIT, bool TRANSPOSED_C>
__device__ __forceinline__ esmm_gemm_problem_t layer_problem(const esmm_gemm_problem_t &p,
                                                             const k_layers &layers)
{
    if (!SPLIT)
        return p;
    esmm_gemm_problem_t q = p;
    const int64_t k0 = blockIdx.z * layers.k_per_split;
    q.k = p.k - k0 < layers.k_per_split ? p.k - k0 : layers.k_per_split;
    // op(A) = A and op(B) = B^T run along k within a stored row.
    q.a = p.a + k0 * (p.op_a == ESMM_OP_N ? 1 : p.lda);
    q.b = p.b + k0 * (p.op_b == ESMM_OP_T ? 1 : p.ldb);
    const int64_t c_rows = TRANSPOSED_C ? p.n : p.m, c_cols = TRANSPOSED_C ? p.m : p.n;
    q.c = layers.partials + blockIdx.z * c_rows * c_cols;
    q.ldc = c_cols;
    q.alpha = 1.0f;
    q.beta = 0.0f;
    return q;
}

template <class cfg> __host__ __device__ inline int64_t pipelined_tile_count(int64_t m, int64_t n)
{
    return ((m + cfg::BM - 1) / cfg::BM) * ((n + cfg::BN - 1) / cfg::BN);
}

// Launches kernel(args...) on cfg's tiles, chained (launch_cache.cuh), a CTA
// per C tile on each layer, granting it cfg::SMEM_BYTES of dynamic shared
// memory.
template <class cfg, class Kernel, class... Args>
cudaError_t launch_cfg_tiles(Kernel kernel, const esmm_gemm_problem_t &p, unsigned layers,
                             cudaStream_t stream, Args... args)
{
    const cudaError_t err =
        grant_dynamic_smem(reinterpret_cast<const void *>(kernel), cfg::SMEM_BYTES);
    if (err != cudaSuccess)
        return err;
    const int64_t tiles = pipelined_tile_count<cfg>(p.m, p.n);
    if (tiles > 0x7fffffff)
        return cudaErrorInvalidConfiguration;
    return launch_chained(kernel, dim3((unsigned)tiles, 1, layers), cfg::THREADS,
                          cfg::SMEM_BYTES, stream, args...);
}

// Maps blockIdx.x to a C tile: GROUP_M tile rows are walked column by column,
// so the CTAs resident at once reuse a few A row panels and B column panels.
template <class cfg>
__device__ inline void pipelined_tile_coords(int64_t m, int64_t n, int64_t &tile_m, int64_t &tile_n)
{
    const int64_t tiles_m = (m + cfg::BM - 1) / cfg::BM;
    const int64_t tiles_n = (n + cfg::BN - 1) / cfg::BN;
    const int64_t id = blockIdx.x;
    const int64_t per_group = (int64_t)cfg::GROUP_M * tiles_n;
    const int64_t first_m = (id / per_group) * cfg::GROUP_M;
    const int64_t rows = tiles_m - first_m < cfg::GROUP_M ? tiles_m - first_m : cfg::GROUP_M;
    const int64_t in_group = id % per_group;
    tile_m = first_m + in_group % rows;
    tile_n = in_group / rows;
}

// How an operand is stored, which decides how its tiles are copied:
//   K_CONTIG:  its rows run along k (A for op N, B for op T); 4-byte copies
//              transpose it into [k][mn].
//   MN_VECTOR: its rows run along m/n, 16-byte aligned with ld % 4 == 0;
//              16-byte copies.
//   MN_SCALAR: rows along m/n but not 16-byte aligned; 4-byte copies.
// The launcher picks one per operand, so no copy path carries another's code.
enum class tile_layout { K_CONTIG, MN_VECTOR, MN_SCALAR };

// Shared memory holds an operand's tile as [k][mn] rows of MN values. Rows
// that 4-byte copies transpose on the way in (K_CONTIG) carry SMEM_ROW_PAD
// more, 4 (mod 32) floats, so a warp's copies (8 k x 4 mn) hit all 32 banks.
// Rows copied along m/n carry cfg::MN_ROW_PAD floats more: unpadded,
// the dense kernel's copies land on 128-byte lines as they leave them, and
// padded they made the L1 fetch 1.5x the sectors they carry (ncu, 4096^3 TN:
// 201 M against 134 M; the call took 2.720 ms against 2.684). Either length
// keeps float4 reads aligned.
template <class cfg, tile_layout LAYOUT, int MN> constexpr int smem_row()
{
    return LAYOUT == tile_layout::K_CONTIG ? MN + SMEM_ROW_PAD : MN + cfg::MN_ROW_PAD;
}

// A tile configuration with the shared row lengths of its operands' layouts,
// which the loaders write and the accumulator reads.
// A stage holds BK rows of SMEM_ROW_PAD more than the tile, room for either.
template <class cfg, tile_layout A_LAYOUT, tile_layout B_LAYOUT> struct laid_out : cfg {
    static_assert(cfg::MN_ROW_PAD <= SMEM_ROW_PAD, "a stage has room for the rows");
    static constexpr int A_ROW = smem_row<cfg, A_LAYOUT, cfg::BM>();
    static constexpr int B_ROW = smem_row<cfg, B_LAYOUT, cfg::BN>();
};

// The copy layout of an operand: along k when op(X)'s k runs along X's rows,
// else 16-byte copies when X allows them.
inline tile_layout operand_layout(bool k_contig, const float *x, int64_t ld)
{
    if (k_contig)
        return tile_layout::K_CONTIG;
    return ld % 4 == 0 && (uintptr_t)x % 16 == 0 ? tile_layout::MN_VECTOR
                                                 : tile_layout::MN_SCALAR;
}

// The same product as C^T = op(B)^T op(A)^T, stored transposed: B takes A's
// place with the opposite op (op(B)^T is B^T for N, B for T), and A B's.
inline esmm_gemm_problem_t transposed_problem(const esmm_gemm_problem_t &p)
{
    esmm_gemm_problem_t t = p;
    t.m = p.n, t.n = p.m;
    t.a = p.b, t.lda = p.ldb;
    t.b = p.a, t.ldb = p.lda;
    t.op_a = p.op_b == ESMM_OP_N ? ESMM_OP_T : ESMM_OP_N;
    t.op_b = p.op_a == ESMM_OP_N ? ESMM_OP_T : ESMM_OP_N;
    return t;
}

// Runs launch.template run<A_LAYOUT, B_LAYOUT, TRANSPOSED_C>(p) with the copy
// layouts of p's operands.
template <tile_layout A_LAYOUT, bool TRANSPOSED_C, class Launch>
cudaError_t dispatch_b_layout(tile_layout b, const esmm_gemm_problem_t &p, Launch &launch)
{
    switch (b) {
    case tile_layout::K_CONTIG:
        return launch.template run<A_LAYOUT, tile_layout::K_CONTIG, TRANSPOSED_C>(p);
    case tile_layout::MN_VECTOR:
        return launch.template run<A_LAYOUT, tile_layout::MN_VECTOR, TRANSPOSED_C>(p);
    case tile_layout::MN_SCALAR:
        return launch.template run<A_LAYOUT, tile_layout::MN_SCALAR, TRANSPOSED_C>(p);
    }
    return cudaErrorInvalidValue;
}

template <bool TRANSPOSED_C, class Launch>
cudaError_t dispatch_operand_layouts(const esmm_gemm_problem_t &p, Launch &launch)
{
    // op(A) = A (N): A's rows run along k. op(B) = B^T (T): B's rows run along k.
    const tile_layout a = operand_layout(p.op_a == ESMM_OP_N, p.a, p.lda);
    const tile_layout b = operand_layout(p.op_b == ESMM_OP_T, p.b, p.ldb);
    switch (a) {
    case tile_layout::K_CONTIG:
        return dispatch_b_layout<tile_layout::K_CONTIG, TRANSPOSED_C>(b, p, launch);
    case tile_layout::MN_VECTOR:
        return dispatch_b_layout<tile_layout::MN_VECTOR, TRANSPOSED_C>(b, p, launch);
    case tile_layout::MN_SCALAR:
        return dispatch_b_layout<tile_layout::MN_SCALAR, TRANSPOSED_C>(b, p, launch);
    }
    return cudaErrorInvalidValue;
}

// The dense kernel's choice: when A must be transposed on the way in and B
// need not, it runs transposed_problem(p) (TRANSPOSED_C): the kernel is
// fastest with the transposed operand in B's place (measured: TT 0.97x
// against NN 0.89x cuBLAS), and each product still sees the same operands in
// the same k order, so results are bit-identical.
template <class Launch> cudaError_t dispatch_layouts(const esmm_gemm_problem_t &p, Launch &launch)
{
    const tile_layout a = operand_layout(p.op_a == ESMM_OP_N, p.a, p.lda);
    const tile_layout b = operand_layout(p.op_b == ESMM_OP_T, p.b, p.ldb);
    if (a == tile_layout::K_CONTIG && b != tile_layout::K_CONTIG) {
        const esmm_gemm_problem_t t = transposed_problem(p);
        return b == tile_layout::MN_VECTOR
                   ? launch.template run<tile_layout::MN_VECTOR, tile_layout::K_CONTIG, true>(t)
                   : launch.template run<tile_layout::MN_SCALAR, tile_layout::K_CONTIG, true>(t);
    }
    return dispatch_operand_layouts<false>(p, launch);
}

// Copies one BK x MN slice of op(X) into shared memory as [k][mn], rows
// smem_row<cfg, LAYOUT, MN>() floats apart.
//
// Rows (mn) past the matrix feed only C entries that are never stored, so
// their addresses are clamped into the matrix instead of predicated: full
// k-tiles copy without any per-element test. Only k past the end must read as
// zero, and only the last k-tile (CHECK_K) pays for that. (The listed copies
// of rows along m/n test their chunks instead; see issue_list.)
template <class cfg, tile_layout LAYOUT, int MN> struct tile_loader;

template <class cfg, int MN> struct tile_loader<cfg, tile_layout::K_CONTIG, MN> {
    static constexpr int ROW = smem_row<cfg, tile_layout::K_CONTIG, MN>();
    // A warp copies a 4 (mn) x 8 (k) block per instruction: each group of 8
    // lanes reads 32 contiguous bytes of one row.
    static constexpr int ROW_GROUPS = MN / (4 * cfg::WARPS);
    static_assert(ROW_GROUPS * 4 * cfg::WARPS == MN, "loader covers the tile exactly");
    static constexpr int K_GROUPS = cfg::BK / 8;

    const float *row[ROW_GROUPS]; // this thread's rows at k = k_lane
    int k_lane;
    int smem_offset;

    __device__ tile_loader(const float *x, int64_t ld, int64_t mn0, int64_t mn)
    {
        const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
        const int mn_in_tile = warp * 4 + lane / 8;
        k_lane = lane % 8;
        smem_offset = k_lane * ROW + mn_in_tile;
#pragma unroll
        for (int r = 0; r < ROW_GROUPS; ++r) {
            const int64_t i = mn0 + mn_in_tile + r * cfg::WARPS * 4;
            row[r] = x + (i < mn ? i : mn - 1) * ld + k_lane;
        }
    }

    // Copies k-tile kt; k and ld are the problem's (read from kernel
    // parameters, so they cost no registers).
    template <bool CHECK_K>
    __device__ __forceinline__ void issue(float *stage, int64_t kt, int64_t k, int64_t) const
    {
#pragma unroll
        for (int r = 0; r < ROW_GROUPS; ++r)
#pragma unroll
            for (int kg = 0; kg < K_GROUPS; ++kg) {
                const float *src = row[r] + kt * cfg::BK + kg * 8;
                float *dst = stage + smem_offset + kg * 8 * ROW + r * cfg::WARPS * 4;
                if (CHECK_K) {
                    // Column 0 of the row is a safe address for the zero fill.
                    const bool ok = kt * cfg::BK + kg * 8 + k_lane < k;
                    cp_async_zfill<4>(dst, ok ? src : row[r] - k_lane, ok ? 4 : 0);
                } else {
                    cp_async<4>(dst, src);
                }
            }
    }

    // Copies the listed k of entries 0 .. count-1 of a stage, row_offset(e)
    // being entry e's k (an element offset along the stored row; it is read
    // for every entry of the stage, but used only below count), for the
    // strips that need it (strips(e)); entries past count keep what the stage
    // held, as nothing reads them. Same lane mapping as issue (a lane-per-row
    // mapping was measured 1.2-2.5x slower: each instruction then touches 32
    // sectors).
    template <class RowOffset, class StripNeeds>
    __device__ __forceinline__ void issue_list(float *stage, int count, RowOffset row_offset,
                                               StripNeeds strips) const
    {
        const int mn_in_tile = smem_offset - k_lane * ROW;
        // The stage's list is read before any copy is issued: a shared load
        // between two copies costs three issue slots (ptxas pads the copy).
        // Listed k fit an int (masked calls need k <= INT32_MAX - 8), so each source
        // address adds a 32-bit offset to row[r], which sits at k_lane, not a
        // 64-bit one. (Computed unsigned: entries past count may hold
        // anything.)
        int k_from_row[K_GROUPS];
        unsigned need[K_GROUPS];
#pragma unroll
        for (int kg = 0; kg < K_GROUPS; ++kg) {
            k_from_row[kg] = (int)((unsigned)row_offset(kg * 8 + k_lane) - (unsigned)k_lane);
            need[kg] = strips(kg * 8 + k_lane);
        }
#pragma unroll
        for (int kg = 0; kg < K_GROUPS; ++kg) {
            const bool ok = kg * 8 + k_lane < count;
#pragma unroll
            for (int r = 0; r < ROW_GROUPS; ++r) {
                const int strip = (mn_in_tile + r * cfg::WARPS * 4) / 32;
                cp_async_listed<4, true, StripNeeds>(stage + smem_offset + kg * 8 * ROW +
                                                         r * cfg::WARPS * 4,
                                                     row[r] + k_from_row[kg], 4, ok,
                                                     (need[kg] >> strip) & 1u);
            }
        }
    }
};

// Layouts along m/n: a warp copies one 512-byte row of the tile per pass.
template <class cfg, tile_layout LAYOUT, int MN> struct tile_loader {
    static_assert(LAYOUT != tile_layout::K_CONTIG, "specialised above");
    static constexpr int ROW = smem_row<cfg, LAYOUT, MN>();
    static constexpr int CHUNKS_PER_ROW = MN / 4;
    static constexpr int ROWS_PER_PASS = cfg::THREADS / CHUNKS_PER_ROW;
    static constexpr int ITERS = cfg::BK / ROWS_PER_PASS;
    static_assert(ITERS * ROWS_PER_PASS == cfg::BK, "loader covers the tile exactly");

    const float *column; // row 0 at this thread's 4 columns, clamped inside
    const float *chunk;  // row k_row of k-tile 0 there
    int valid;           // columns of the chunk inside the matrix (0..4)
    int k_row;
    int smem_offset;
    const float *tile_row; // row 0 at the tile's first column (listed copies)
    int64_t tile_left;     // columns of the matrix from there on

    __device__ tile_loader(const float *x, int64_t ld, int64_t mn0, int64_t mn)
    {
        const int chunk_index = threadIdx.x % CHUNKS_PER_ROW;
        k_row = threadIdx.x / CHUNKS_PER_ROW;
        smem_offset = k_row * ROW + chunk_index * 4;
        const int64_t col = mn0 + chunk_index * 4;
        const int64_t left = mn - col;
        valid = left <= 0 ? 0 : (left >= 4 ? 4 : (int)left);
        // A chunk wholly past the matrix copies nothing, yet a 16-byte copy's
        // source must be 16-byte aligned all the same.
        column = x + (left > 0 ? col : (mn - 1) / 4 * 4);
        chunk = column + (int64_t)k_row * ld;
        tile_row = x + mn0;
        tile_left = mn - mn0;
    }

    template <bool CHECK_K>
    __device__ __forceinline__ void issue(float *stage, int64_t kt, int64_t k, int64_t ld) const
    {
        const float *tile = chunk + kt * cfg::BK * ld;
#pragma unroll
        for (int i = 0; i < ITERS; ++i) {
            const bool k_ok = !CHECK_K || kt * cfg::BK + k_row + i * ROWS_PER_PASS < k;
            const float *src = tile + i * ROWS_PER_PASS * ld;
            float *dst = stage + smem_offset + i * ROWS_PER_PASS * ROW;
            if (LAYOUT == tile_layout::MN_VECTOR) {
                // Partial chunks copy their valid bytes and zero-fill the rest.
                cp_async_zfill<16>(dst, k_ok ? src : chunk, k_ok ? valid * 4 : 0);
            } else {
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    const bool ok = k_ok && j < valid;
                    cp_async_zfill<4>(dst + j, ok ? src + j : chunk, ok ? 4 : 0);
                }
            }
        }
    }

    // Copies the listed rows of entries 0 .. count-1 of a stage, row_offset(e)
    // being the element offset of entry e's row (k * ld), where the chunk's
    // strip needs it (strips(e)); entries past count keep what the stage
    // held, as nothing reads them. Eight threads copy an entry, each every
    // eighth 4-column chunk of its row, so a thread reads one row offset and
    // its chunks lie one per strip; a warp's 16-byte copy covers four
    // 128-byte runs. (One row offset per chunk, with the dense copy's
    // mapping, cost 13 instructions per 16-byte copy.) Unlike the dense
    // copy, chunks past the matrix are tested, in the last tile column only.
    static constexpr int PER_ENTRY = 8; // threads per listed entry: 4 x 8 = 32 columns apart
    static constexpr int ENTRIES_PER_PASS = cfg::THREADS / PER_ENTRY;

    template <class RowOffset, class StripNeeds>
    __device__ __forceinline__ void issue_list(float *stage, int count, RowOffset row_offset,
                                               StripNeeds strips) const
    {
        static_assert(cfg::BK % ENTRIES_PER_PASS == 0, "passes of the threads cover a stage");
        // One pass (the skipping kernels') on its own: written as a loop of
        // one, it compiled differently and ran B only at d = 0.5 3% slower.
        if constexpr (ENTRIES_PER_PASS == cfg::BK) {
            issue_entry(stage, threadIdx.x / PER_ENTRY, count, row_offset, strips);
        } else {
#pragma unroll
            for (int pass = 0; pass < cfg::BK / ENTRIES_PER_PASS; ++pass)
                issue_entry(stage, threadIdx.x / PER_ENTRY + pass * ENTRIES_PER_PASS, count,
                            row_offset, strips);
        }
    }

    // One listed entry's row, by PER_ENTRY threads, if it is inside the count.
    template <class RowOffset, class StripNeeds>
    __device__ __forceinline__ void issue_entry(float *stage, int entry, int count,
                                                RowOffset row_offset, StripNeeds strips) const
    {
        constexpr int CHUNKS = CHUNKS_PER_ROW / PER_ENTRY;
        static_assert(CHUNKS * PER_ENTRY == CHUNKS_PER_ROW, "the threads cover a row exactly");
        const int lane = threadIdx.x % PER_ENTRY;
        if (entry >= count)
            return;
        const unsigned need = strips(entry);
        const float *row = tile_row + row_offset(entry) + lane * 4;
        float *dst = stage + entry * ROW + lane * 4;
        // Tiles wholly inside the matrix (all but the last tile column) need
        // no bounds per chunk; chunk j lies in strip j.
        if (tile_left >= MN) {
#pragma unroll
            for (int j = 0; j < CHUNKS; ++j) {
                const bool needed = (need >> j) & 1u;
                if (LAYOUT == tile_layout::MN_VECTOR)
                    cp_async_listed<16, true, StripNeeds>(dst + j * 32, row + j * 32, 16, true,
                                                          needed);
                else
#pragma unroll
                    for (int i = 0; i < 4; ++i)
                        cp_async_listed<4, true, StripNeeds>(dst + j * 32 + i, row + j * 32 + i, 4,
                                                             true, needed);
            }
            return;
        }
#pragma unroll
        for (int j = 0; j < CHUNKS; ++j) {
            const bool needed = (need >> j) & 1u;
            const int64_t left = tile_left - (lane * 4 + j * 32); // columns of the chunk inside
            const int inside = left <= 0 ? 0 : (left >= 4 ? 4 : (int)left);
            // A chunk (or column) wholly past the matrix copies no bytes, from
            // the tile's first element, inside the matrix.
            if (LAYOUT == tile_layout::MN_VECTOR) {
                cp_async_listed<16, false, StripNeeds>(
                    dst + j * 32, inside > 0 ? row + j * 32 : tile_row, inside * 4, true, needed);
            } else {
#pragma unroll
                for (int i = 0; i < 4; ++i)
                    cp_async_listed<4, false, StripNeeds>(
                        dst + j * 32 + i, i < inside ? row + j * 32 + i : tile_row,
                        i < inside ? 4 : 0, true, needed);
            }
        }
    }
};

// Writes C = alpha * v + beta * C for up to four values (fewer when `left`
// < 4) of one C row; beta == 0 never reads C.
__device__ inline void store_c_row(const esmm_gemm_problem_t &p, float *out, const float *v,
                                   int64_t left, bool vector_c)
{
    if (vector_c && left >= 4) {
        float4 w = make_float4(p.alpha * v[0], p.alpha * v[1], p.alpha * v[2], p.alpha * v[3]);
        if (p.beta != 0.0f) {
            const float4 old = *reinterpret_cast<const float4 *>(out);
            w.x = fmaf(p.beta, old.x, w.x);
            w.y = fmaf(p.beta, old.y, w.y);
            w.z = fmaf(p.beta, old.z, w.z);
            w.w = fmaf(p.beta, old.w, w.w);
        }
        *reinterpret_cast<float4 *>(out) = w;
        return;
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        if (j >= left)
            break;
        const float w = p.alpha * v[j];
        out[j] = p.beta != 0.0f ? fmaf(p.beta, out[j], w) : w;
    }
}

// Each thread owns QM x QN quadrants of 4x4 C values. A warp is 4 thread rows
// x 8 thread columns, so a k step reads 4 distinct float4 of A and 8 of B per
// instruction: broadcasts, no bank conflicts. cfg is laid_out: its row
// lengths step through a stage.
template <class cfg> struct warp_tile_accumulator {
    static constexpr int TM = 4 * cfg::QM, TN = 4 * cfg::QN;
    static constexpr int M_STRIDE = cfg::BM / cfg::QM, N_STRIDE = cfg::BN / cfg::QN;
    static constexpr int WARP_COLS = cfg::BN / TN / 8;
    float c[TM][TN];
    int a_offset; // first row of the thread's quadrants within the tile
    int b_offset; // first column

    __device__ warp_tile_accumulator()
    {
        const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
        a_offset = ((warp / WARP_COLS) * 4 + lane / 8) * 4;
        b_offset = ((warp % WARP_COLS) * 8 + lane % 8) * 4;
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j)
                c[i][j] = 0.0f;
    }

    // A thread's operands of one k: its TM values of op(A)'s column and TN of
    // op(B)'s row.
    struct fragments {
        float a[TM], b[TN];
    };

    __device__ __forceinline__ fragments load(const float *a_row, const float *b_row) const
    {
        fragments f;
#pragma unroll
        for (int q = 0; q < cfg::QM; ++q) {
            const float4 v = *reinterpret_cast<const float4 *>(a_row + a_offset + q * M_STRIDE);
            f.a[4 * q] = v.x, f.a[4 * q + 1] = v.y, f.a[4 * q + 2] = v.z, f.a[4 * q + 3] = v.w;
        }
#pragma unroll
        for (int q = 0; q < cfg::QN; ++q) {
            const float4 v = *reinterpret_cast<const float4 *>(b_row + b_offset + q * N_STRIDE);
            f.b[4 * q] = v.x, f.b[4 * q + 1] = v.y, f.b[4 * q + 2] = v.z, f.b[4 * q + 3] = v.w;
        }
        return f;
    }

    // One rank-1 update from shared rows a_row = op(A)[.][k], b_row = op(B)[k][.].
    __device__ __forceinline__ void multiply_k(const float *a_row, const float *b_row)
    {
        multiply(load(a_row, b_row));
    }

    __device__ __forceinline__ void multiply(const fragments &f)
    {
        const float *a = f.a, *b = f.b;
        // Column-outer order: measured on the SASS, it gives the register
        // allocator an assignment with half the same-bank operand pairs of
        // row-outer order, and runs 9-10% faster at 4096^3 on the H100.
#pragma unroll
        for (int j = 0; j < TN; ++j)
#pragma unroll
            for (int i = 0; i < TM; ++i)
                c[i][j] = fmaf(a[i], b[j], c[i][j]);
    }

    __device__ __forceinline__ void multiply_tile(const float *a_stage, const float *b_stage)
    {
#pragma unroll
        for (int kk = 0; kk < cfg::BK; ++kk)
            multiply_k(a_stage + kk * cfg::A_ROW, b_stage + kk * cfg::B_ROW);
    }

    // C = alpha * acc + beta * C over the in-bounds part of the thread's block;
    // beta == 0 never reads C. With TRANSPOSED_C the tile holds C^T (the
    // problem's m and n are C's n and m): each 4x4 quadrant is written
    // transposed, still as 16-byte rows of C.
    template <bool TRANSPOSED_C>
    __device__ void store(const esmm_gemm_problem_t &p, int64_t m0, int64_t n0) const
    {
        const bool vector_c = (p.ldc % 4) == 0 && ((uintptr_t)p.c % 16) == 0;
#pragma unroll
        for (int qm = 0; qm < cfg::QM; ++qm)
#pragma unroll
            for (int qn = 0; qn < cfg::QN; ++qn) {
                const int64_t row = m0 + qm * M_STRIDE + a_offset;
                const int64_t col = n0 + qn * N_STRIDE + b_offset;
#pragma unroll
                for (int r = 0; r < 4; ++r) {
                    // Four consecutive values of one row of C, and where they go.
                    float v[4];
                    int64_t c_row, c_col, c_cols;
#pragma unroll
                    for (int j = 0; j < 4; ++j)
                        v[j] = TRANSPOSED_C ? c[4 * qm + j][4 * qn + r] : c[4 * qm + r][4 * qn + j];
                    if (TRANSPOSED_C)
                        c_row = col + r, c_col = row, c_cols = p.m;
                    else
                        c_row = row + r, c_col = col, c_cols = p.n;
                    if (c_row >= (TRANSPOSED_C ? p.n : p.m))
                        continue;
                    store_c_row(p, p.c + c_row * p.ldc + c_col, v,
                              c_cols - c_col, vector_c);
                }
            }
    }
};

// The element offset of a stage's listed k along an operand stored with
// leading dimension ld: k itself where its rows run along k, else row k.
template <tile_layout LAYOUT> struct listed_row_offset {
    const int *k_of;
    int64_t ld;

    __device__ __forceinline__ int64_t operator()(int e) const
    {
        // Listed k are non-negative: an unsigned product needs two multiplies, not three.
        const uint64_t k = (unsigned)k_of[e];
        return LAYOUT == tile_layout::K_CONTIG ? (int64_t)k : (int64_t)(k * (uint64_t)ld);
    }
};

// Multiplies a stage's entries FIRST .. entries - 1 in order (at cfg::BK,
// the unrolled dense loop).
template <class cfg, int FIRST = 0>
__device__ __forceinline__ void multiply_entries(warp_tile_accumulator<cfg> &acc,
                                                 const float *a_stage, const float *b_stage,
                                                 int entries)
{
#pragma unroll
    for (int e = FIRST; e < cfg::BK; ++e) {
        if (e >= entries)
            return;
        acc.multiply_k(a_stage + e * cfg::A_ROW, b_stage + e * cfg::B_ROW);
    }
}

// A cfg::STAGES-deep cp.async pipeline over `count` stages: issue(t, buffer)
// copies stage t into stage buffer `buffer` and commits one group (even
// empty, so wait_group counts stay uniform; t may be past count), and
// multiply(t, buffer) multiplies it once it has landed.
template <class cfg, class Issue, class Multiply>
__device__ __forceinline__ void run_pipeline(int64_t count, Issue issue, Multiply multiply)
{
#pragma unroll
    for (int s = 0; s < cfg::STAGES - 1; ++s)
        issue(s, s);
    int read_stage = 0, write_stage = cfg::STAGES - 1;
    for (int64_t t = 0; t < count; ++t) {
        cp_async_wait<cfg::STAGES - 2>();
        // Stage t is visible to every thread, and every thread has finished
        // multiplying stage t-1, whose buffer the next copy overwrites.
        __syncthreads();
        issue(t + cfg::STAGES - 1, write_stage);
        multiply(t, read_stage);
        read_stage = read_stage + 1 == cfg::STAGES ? 0 : read_stage + 1;
        write_stage = write_stage + 1 == cfg::STAGES ? 0 : write_stage + 1;
    }
    cp_async_wait<0>();
}

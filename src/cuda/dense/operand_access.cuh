// What the dense ladder kernels share: element and tile access to op(A) and
// op(B) with out-of-range elements read as zero, float4 loads where alignment
// and bounds allow, the guarded epilogue C = alpha * acc + beta * C, and the
// mapping of a 1-D grid onto the tiles of C.
//
// Indices and offsets into global memory are 64-bit; indices inside a tile or
// a block are int.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>
#include <type_traits>

#include "cuda/dense/ladder.cuh"

// ---------------------------------------------------------------------------
// Element access with runtime strides (kernels 01-05)

// op(X) seen as a rows x cols matrix whose element (r, c) is at
// data[r * row_stride + c * col_stride]; a transpose only swaps the strides.
struct operand_view {
    const float *data;
    int64_t row_stride, col_stride;
    int64_t rows, cols;

    __device__ __forceinline__ float at(int64_t r, int64_t c) const
    {
        return __ldg(data + r * row_stride + c * col_stride);
    }

    __device__ __forceinline__ float at_or_zero(int64_t r, int64_t c) const
    {
        return r < rows && c < cols ? at(r, c) : 0.0f;
    }
};

// op(A), m x k.
__device__ __forceinline__ operand_view op_a_view(const esmm_gemm_problem_t &p)
{
    return p.op_a == ESMM_OP_N ? operand_view{p.a, p.lda, 1, p.m, p.k}
                               : operand_view{p.a, 1, p.lda, p.m, p.k};
}

// op(B), k x n.
__device__ __forceinline__ operand_view op_b_view(const esmm_gemm_problem_t &p)
{
    return p.op_b == ESMM_OP_N ? operand_view{p.b, p.ldb, 1, p.k, p.n}
                               : operand_view{p.b, 1, p.ldb, p.k, p.n};
}

// Row i of op(A) times column j of op(B); i < m and j < n.
__device__ __forceinline__ float dot_row_col(const operand_view &a, const operand_view &b,
                                             int64_t i, int64_t j)
{
    float acc = 0.0f;
    for (int64_t kk = 0; kk < a.cols; ++kk)
        acc += a.at(i, kk) * b.at(kk, j);
    return acc;
}

// Copies the ROWS x COLS tile of v whose corner is (r0, c0) into shared
// memory, zeros outside v. Consecutive threads walk the dimension that is
// contiguous in memory, so the global reads coalesce whatever the op.
template <int ROWS, int COLS, int THREADS>
__device__ __forceinline__ void load_tile(const operand_view &v, int64_t r0, int64_t c0,
                                          float (&tile)[ROWS][COLS])
{
    static_assert(ROWS * COLS % THREADS == 0, "the tile must split evenly over the threads");
    const bool along_cols = v.col_stride == 1;
#pragma unroll
    for (int it = 0; it < ROWS * COLS / THREADS; ++it) {
        const int idx = it * THREADS + (int)threadIdx.x;
        const int r = along_cols ? idx / COLS : idx % ROWS;
        const int c = along_cols ? idx % COLS : idx / ROWS;
        tile[r][c] = v.at_or_zero(r0 + r, c0 + c);
    }
}

// ---------------------------------------------------------------------------
// Vector access with compile-time layouts (kernels 06 onwards)

__device__ __forceinline__ bool is_aligned16(const void *ptr)
{
    return (reinterpret_cast<uintptr_t>(ptr) & 15u) == 0;
}

// src[0..3], of which only the first `avail` lie inside the matrix (avail
// may be <= 0 or > 4); the others read as zero. One float4 load when all four
// are inside and the address allows it.
__device__ __forceinline__ float4 load4_or_zero(const float *src, int avail)
{
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (avail >= 4 && is_aligned16(src))
        return __ldg(reinterpret_cast<const float4 *>(src));
    if (avail > 0)
        v.x = __ldg(src);
    if (avail > 1)
        v.y = __ldg(src + 1);
    if (avail > 2)
        v.z = __ldg(src + 2);
    if (avail > 3)
        v.w = __ldg(src + 3);
    return v;
}

// Moves BK x BX slices of an operand into a k-major shared-memory tile:
// tile[kk][x] = element (x0 + x, k0 + kk) of the operand seen as x_size x
// k_size, where x runs along m (for op(A)) or n (for op(B)). The stored matrix
// holds element (x, kk) at data[x * ld + kk] when CONTIG_K (A with op N, B
// with op T), else at data[kk * ld + x]. Both operands thus land k-major, so
// the inner product reads float4 runs along m and n. Elements outside the
// operand are zero.
//
// A block makes one loader per operand; then, for k0 = 0, BK, 2 BK, ..., it
// calls fetch() and, once the block is done reading the tile of the previous
// step, store(). fetch() puts all of a thread's global loads in flight before
// store() needs any of them.
template <int BK, int BX, int THREADS, bool CONTIG_K>
class k_major_tile_loader {
    static constexpr int RUN = CONTIG_K ? BK : BX; // tile elements contiguous in global memory
    static constexpr int RUNS = CONTIG_K ? BX : BK;
    static constexpr int VECS_PER_RUN = RUN / 4;
    static constexpr int VECS_PER_THREAD = RUNS * VECS_PER_RUN / THREADS;
    static_assert(BK % 4 == 0 && BX % 4 == 0, "tile sides must be multiples of 4");
    static_assert(RUNS * VECS_PER_RUN % THREADS == 0,
                  "the tile must split evenly over the threads");
    // A thread's float4s are adjacent in one run, so they share one address
    // and one bounds test, which keeps the loader's registers few.
    static_assert(VECS_PER_RUN % VECS_PER_THREAD == 0, "a thread's float4s must share a run");

    const float *next_;  // the thread's first float4 of the next slice
    int64_t k_step_;     // how far that moves from one slice to the next
    int x_count_;        // x extent of the slices inside the operand
    float4 staged_[VECS_PER_THREAD];

    __device__ __forceinline__ static int run()
    {
        return (int)threadIdx.x * VECS_PER_THREAD / VECS_PER_RUN;
    }
    __device__ __forceinline__ static int pos() // in elements
    {
        return (int)threadIdx.x * VECS_PER_THREAD % VECS_PER_RUN * 4;
    }

  public:
    // x0 < x_size.
    __device__ __forceinline__ k_major_tile_loader(const float *data, int64_t ld, int64_t x0,
                                                   int64_t x_size)
        : next_(CONTIG_K ? data + (x0 + run()) * ld + pos() : data + run() * ld + x0 + pos()),
          k_step_(CONTIG_K ? BK : BK * ld), x_count_((int)min(x_size - x0, (int64_t)BX))
    {
    }

    // Loads the next slice, of which the first k_count (1..BK) k columns lie
    // inside the operand.
    __device__ __forceinline__ void fetch(int k_count)
    {
        const int runs_inside = CONTIG_K ? x_count_ : k_count;
        const int run_inside = CONTIG_K ? k_count : x_count_;
        const int avail = run() < runs_inside ? run_inside - pos() : 0;
#pragma unroll
        for (int it = 0; it < VECS_PER_THREAD; ++it)
            staged_[it] = load4_or_zero(next_ + 4 * it, avail - 4 * it);
        next_ += k_step_;
    }

    __device__ __forceinline__ void store(float (&tile)[BK][BX]) const
    {
#pragma unroll
        for (int it = 0; it < VECS_PER_THREAD; ++it) {
            const int at = pos() + 4 * it;
            if (CONTIG_K) {
                tile[at + 0][run()] = staged_[it].x;
                tile[at + 1][run()] = staged_[it].y;
                tile[at + 2][run()] = staged_[it].z;
                tile[at + 3][run()] = staged_[it].w;
            } else {
                *reinterpret_cast<float4 *>(&tile[run()][at]) = staged_[it];
            }
        }
    }
};

// ---------------------------------------------------------------------------
// Epilogue

// The one formula for a result of C; the float4 path applies it lane-wise.
__device__ __forceinline__ float scale_add(float acc, float old, float alpha, float beta)
{
    return alpha * acc + beta * old;
}

// New value of C at dst. C is not read when beta == 0, so NaN there does not
// leak into the result (BLAS semantics).
__device__ __forceinline__ float updated_c(const esmm_gemm_problem_t &p, float acc,
                                           const float *dst)
{
    return p.beta == 0.0f ? p.alpha * acc : scale_add(acc, *dst, p.alpha, p.beta);
}

// C(i, j) = alpha * acc + beta * C(i, j), skipped outside C.
__device__ __forceinline__ void store_c(const esmm_gemm_problem_t &p, int64_t i, int64_t j,
                                        float acc)
{
    if (i >= p.m || j >= p.n)
        return;
    float *dst = p.c + i * p.ldc + j;
    *dst = updated_c(p, acc, dst);
}

// C at dst[0..3] from acc.x..acc.w, of which only the first `avail` lie
// inside C (avail may be <= 0 or > 4): one float4 access when all four are
// inside and the address allows it, else per element.
__device__ __forceinline__ void store_c4(const esmm_gemm_problem_t &p, float *dst, int avail,
                                         float4 acc)
{
    if (avail >= 4 && is_aligned16(dst)) {
        float4 out;
        if (p.beta == 0.0f) {
            out = make_float4(p.alpha * acc.x, p.alpha * acc.y, p.alpha * acc.z, p.alpha * acc.w);
        } else {
            const float4 old = *reinterpret_cast<const float4 *>(dst);
            out = make_float4(scale_add(acc.x, old.x, p.alpha, p.beta),
                              scale_add(acc.y, old.y, p.alpha, p.beta),
                              scale_add(acc.z, old.z, p.alpha, p.beta),
                              scale_add(acc.w, old.w, p.alpha, p.beta));
        }
        *reinterpret_cast<float4 *>(dst) = out;
        return;
    }
    const float lanes[4] = {acc.x, acc.y, acc.z, acc.w};
#pragma unroll
    for (int e = 0; e < 4; ++e)
        if (e < avail)
            dst[e] = updated_c(p, lanes[e], dst + e);
}

// Where a thread's sub-tile of C starts, and how many rows and columns of C
// lie at or past that corner (<= 0 when none), so that the epilogue tests
// bounds in int.
struct c_corner {
    float *ptr; // element (i0, j0) of C; only dereferenced inside C
    int rows, cols;
};

__device__ __forceinline__ c_corner c_corner_at(const esmm_gemm_problem_t &p, int64_t i0,
                                                int64_t j0)
{
    return c_corner{p.c + i0 * p.ldc + j0, (int)min(p.m - i0, (int64_t)INT32_MAX),
                    (int)min(p.n - j0, (int64_t)INT32_MAX)};
}

// ---------------------------------------------------------------------------
// Grid and launch

__host__ __device__ constexpr int64_t ceil_div(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

// One block per TILE_M x TILE_N tile of C, flattened into gridDim.x (whose
// limit is 2^31 - 1, unlike gridDim.y's 65535). False when C has more tiles.
inline bool tile_grid(int64_t m, int64_t n, int64_t tile_m, int64_t tile_n, dim3 &grid)
{
    const int64_t tiles_n = ceil_div(n, tile_n);
    const int64_t tiles_m = ceil_div(m, tile_m);
    if (tiles_m > INT32_MAX / tiles_n)
        return false;
    grid = dim3((unsigned)(tiles_m * tiles_n));
    return true;
}

// Launches kernel with one block of `threads` per tile_m x tile_n tile of C.
inline cudaError_t launch_over_tiles(void (*kernel)(esmm_gemm_problem_t),
                                     const esmm_gemm_problem_t &p, int tile_m, int tile_n,
                                     int threads, cudaStream_t stream)
{
    dim3 grid;
    if (!tile_grid(p.m, p.n, tile_m, tile_n, grid))
        return cudaErrorInvalidValue;
    kernel<<<grid, threads, 0, stream>>>(p);
    return cudaGetLastError();
}

// Calls launch(a_t, b_t) with std::true_type / std::false_type for whether
// op(A) and op(B) are transposes, turning the runtime ops into template
// arguments (decltype(a_t)::value).
template <typename Launch>
cudaError_t dispatch_layouts(const esmm_gemm_problem_t &p, Launch &&launch)
{
    using transposed = std::true_type;
    using plain = std::false_type;
    if (p.op_a == ESMM_OP_T)
        return p.op_b == ESMM_OP_T ? launch(transposed{}, transposed{})
                                   : launch(transposed{}, plain{});
    return p.op_b == ESMM_OP_T ? launch(plain{}, transposed{}) : launch(plain{}, plain{});
}

struct tile_coord {
    int64_t row, col; // tile indices, not element indices
};

// The tile of C this block computes, for a grid made by tile_grid. Blocks go
// column by column through bands of GROUP_ROWS tile rows, so the blocks in
// flight at once share both A rows and B columns in L2 (GROUP_ROWS = 1 is
// plain row-major order).
template <int GROUP_ROWS>
__device__ __forceinline__ tile_coord tile_of_block(int64_t m, int64_t n, int tile_m, int tile_n)
{
    const int64_t tiles_m = ceil_div(m, tile_m);
    const int64_t tiles_n = ceil_div(n, tile_n);
    const int64_t block = blockIdx.x;
    const int64_t band_tiles = GROUP_ROWS * tiles_n;
    const int64_t band = block / band_tiles;
    const int64_t first_row = band * GROUP_ROWS;
    const int64_t band_rows = min(tiles_m - first_row, (int64_t)GROUP_ROWS);
    const int64_t in_band = block - band * band_tiles;
    return tile_coord{first_row + in_band % band_rows, in_band / band_rows};
}

// Pattern extraction (patterns/pattern_layout.h): one pass over a stored
// operand, every byte of bits[] and nonfinite[] written exactly once, so the
// caller never clears them.
//
// A warp owns a 32 x 128 tile of the stored matrix. Lane l reads stored
// columns 4l .. 4l+3 of each of the tile's 32 rows, one float4 per row where
// rows are 16-byte aligned, so each row of the tile is one coalesced 512-byte
// read. What the warp makes of the tile depends on which way the strips run:
//  - strips of stored rows: the tile is one strip by 16 K blocks. Each lane
//    folds its 4 columns down the 32 rows into a nibble; lane pairs join their
//    nibbles into the byte of one K block.
//  - strips of stored columns: the tile is 4 K blocks by 4 strips. Each lane
//    keeps one bit per row for its 4 columns; the 8 lanes of a strip OR their
//    words, whose 4 bytes are the strip's 4 K blocks.
//
// Strips of stored rows run along k, and the paths read such an operand from
// its k-major copy. A planned call may have the extraction write that copy
// as it reads (esmm_extraction_copy_made), so the operand is read once. The
// warp then takes its tile in four 32 x 32 parts through shared memory: lane
// l loads stored columns 4 (l % 8) .. +3 of rows l / 8 + 4 i, so a load is 4
// rows of 128 bytes, and the copy's stores are 4 copy rows of 128 bytes (a
// store of 32 lanes to 32 copy rows, straight from the loaded registers, made
// the call 0.14 ms slower at 4096^3).
//
// Values are judged by their bits with the sign cleared: nonzero when not 0
// (so -0.0 is zero), nonfinite when at least the bits of +Inf (Inf and NaN).
// That magnitude is monotonic in both tests, so a maximum folds any number
// of values into one word without losing either answer.
#include <climits>

#include "cuda/patterns/extract_pattern.cuh"
#include "cuda/launch_cache.cuh"
#include "cuda/patterns/probe_dense.cuh"

extern "C" {
#include "cuda/cuda_backend.h"
}

namespace {

constexpr int WARP = 32;
constexpr int TILE_ROWS = 32;
constexpr int LANE_COLS = 4; // one float4
constexpr int TILE_COLS = WARP * LANE_COLS;
constexpr int WARPS_PER_BLOCK = 8;
constexpr int THREADS = WARPS_PER_BLOCK * WARP;
constexpr int ROWS_IN_FLIGHT = 16; // rows loaded before any of them is folded
constexpr int MIN_BLOCKS_PER_SM = 2;
constexpr unsigned ALL_LANES = 0xffffffffu;
constexpr uint32_t MAGNITUDE_MASK = 0x7fffffffu;
constexpr uint32_t INF_BITS = 0x7f800000u;
constexpr int PART = 32;                     // a copied tile's parts are PART x PART
constexpr int PART_LANES = PART / LANE_COLS; // lanes across a part's row
constexpr int PART_ROWS_PER_LOAD = WARP / PART_LANES;

static_assert(TILE_ROWS == ESMM_PATTERN_STRIP, "a tile is one strip of stored rows");
static_assert(2 * LANE_COLS == ESMM_PATTERN_BK, "two lanes' nibbles make one K-block byte");
static_assert(TILE_COLS % ESMM_PATTERN_STRIP == 0 && ESMM_PATTERN_STRIP % LANE_COLS == 0,
              "a tile holds whole strips of stored columns");
static_assert(TILE_ROWS == 4 * ESMM_PATTERN_BK, "a row-bit word holds 4 K-block bytes");
static_assert(TILE_ROWS % ROWS_IN_FLIGHT == 0, "rows are loaded in whole batches");
static_assert(PART == TILE_ROWS && TILE_COLS % PART == 0, "a copied tile is whole parts");

__device__ __forceinline__ uint4 magnitudes(uint4 v)
{
    return make_uint4(v.x & MAGNITUDE_MASK, v.y & MAGNITUDE_MASK, v.z & MAGNITUDE_MASK,
                      v.w & MAGNITUDE_MASK);
}

// This lane's 4 columns of one row (row points at the first): one float4, or
// 4 floats of which those past the matrix (cols of them are in it) read as 0.
template <bool VECTOR>
__device__ __forceinline__ uint4 load_row(const float *row, int64_t cols)
{
    if constexpr (VECTOR) {
        return __ldg(reinterpret_cast<const uint4 *>(row));
    } else {
        uint32_t e[LANE_COLS];
#pragma unroll
        for (int c = 0; c < LANE_COLS; ++c)
            e[c] = c < cols ? __float_as_uint(__ldg(row + c)) : 0u;
        return make_uint4(e[0], e[1], e[2], e[3]);
    }
}

// Calls fold(r, magnitudes of this lane's columns in row r) for the tile's 32
// rows, columns past the matrix reading as zero. Rows past the matrix repeat
// its last row: the row pointer stops there instead of the loads being
// predicated, so every load of a batch is unconditional and the whole batch
// is loaded, all in flight together, before any of it is folded.
template <bool VECTOR, typename Fold>
__device__ __forceinline__ void fold_tile_rows(const float *row, int64_t ld, int rows,
                                               int64_t cols, Fold fold)
{
#pragma unroll
    for (int r0 = 0; r0 < TILE_ROWS; r0 += ROWS_IN_FLIGHT) {
        uint4 v[ROWS_IN_FLIGHT];
#pragma unroll
        for (int i = 0; i < ROWS_IN_FLIGHT; ++i) {
            v[i] = load_row<VECTOR>(row, cols);
            row += r0 + i + 1 < rows ? ld : 0;
        }
#pragma unroll
        for (int i = 0; i < ROWS_IN_FLIGHT; ++i)
            fold(r0 + i, magnitudes(v[i]));
    }
}

// fold_tile_rows over this lane's columns, with float4 loads where they allow.
template <typename Fold>
__device__ __forceinline__ void fold_tile(const float *tile, int64_t ld, int rows,
                                          int64_t lane_col, int64_t cols, bool vector_rows,
                                          Fold fold)
{
    const float *first = tile + lane_col;
    if (vector_rows && lane_col + LANE_COLS <= cols)
        fold_tile_rows<true>(first, ld, rows, LANE_COLS, fold);
    else
        fold_tile_rows<false>(first, ld, rows, cols - lane_col, fold);
}

__device__ __forceinline__ uint32_t max4(uint4 v)
{
    return max(max(v.x, v.y), max(v.z, v.w));
}

struct extract_args {
    const float *x;
    int64_t ld, rows, cols; // the stored matrix
    bool by_rows;           // strips of stored rows (else of stored columns)
    bool vector_rows;       // x and ld keep every row 16-byte aligned
    int64_t tiles_across, tiles;
    int64_t strips, kblocks;
    uint8_t *bits, *nonfinite;
    unsigned *nonfinite_seen; // where NaN/Inf found is marked (nullptr: nowhere)
    unsigned operand;         // this operand's ESMM_OPERAND_* bit
};

// Marks the operand in a.nonfinite_seen where any lane of the warp found
// NaN/Inf: one atomic a warp at most, none on finite data.
__device__ __forceinline__ void mark_nonfinite(const extract_args &a, int lane, bool found)
{
    if (__any_sync(ALL_LANES, found) && lane == 0 && a.nonfinite_seen != nullptr)
        atomicOr(a.nonfinite_seen, a.operand);
}

// The k-major copy an operand of a launch writes (strips of stored rows).
struct copy_args {
    float *out; // nullptr: none
    int64_t ld; // its row length (esmm_wide_copy_ld of the operand's rows)
    int copied; // which copy it is (esmm_copied_t), for esmm_extraction_copy_made
};

// The K-block bytes of a strip of stored rows from each lane's column
// maxima (magnitudes) of 4 stored columns: lane pairs (lane, lane ^ 1) join
// their nibbles; the even lane writes the nonzero byte of K block kb, the
// odd one the nonfinite byte, where write.
__device__ __forceinline__ void write_kblock_byte(const extract_args &a, int lane, uint4 column_max,
                                                  int64_t tile_row, int64_t kb, bool write)
{
    const uint32_t c[LANE_COLS] = {column_max.x, column_max.y, column_max.z, column_max.w};
    uint32_t nibbles = 0; // nonzero in bits 0-3, nonfinite in bits 4-7
#pragma unroll
    for (int i = 0; i < LANE_COLS; ++i)
        nibbles |= (uint32_t)(c[i] != 0) << i | (uint32_t)(c[i] >= INF_BITS) << (i + 4);
    const uint32_t partner = __shfl_xor_sync(ALL_LANES, nibbles, 1);
    mark_nonfinite(a, lane, write && kb < a.kblocks && (nibbles & 0xf0u) != 0);
    const bool low = lane % 2 == 0;
    const uint32_t lo = low ? nibbles : partner, hi = low ? partner : nibbles;
    if (write && kb < a.kblocks) {
        const int64_t at = tile_row * a.kblocks + kb;
        if (low)
            a.bits[at] = (uint8_t)((lo & 0xfu) | (hi & 0xfu) << 4);
        else
            a.nonfinite[at] = (uint8_t)(lo >> 4 | (hi & 0xf0u));
    }
}

__device__ __forceinline__ uint4 max_each(uint4 a, uint4 b)
{
    return make_uint4(max(a.x, b.x), max(a.y, b.y), max(a.z, b.z), max(a.w, b.w));
}

// Strips of stored rows: the tile is one strip by 16 K blocks.
__device__ __forceinline__ void extract_strip_of_rows(const extract_args &a, int lane,
                                                      int64_t tile_row, int64_t tile_col,
                                                      int64_t col, int tile_rows,
                                                      const float *tile_start)
{
    // A repeated last row changes no maximum.
    uint4 column_max = make_uint4(0, 0, 0, 0);
    fold_tile(tile_start, a.ld, tile_rows, col, a.cols, a.vector_rows,
              [&](int, uint4 m) { column_max = max_each(column_max, m); });
    write_kblock_byte(a, lane, column_max, tile_row,
                      tile_col * (TILE_COLS / ESMM_PATTERN_BK) + lane / 2, true);
}

// The same, also writing the tile to the k-major copy, part by part through
// part (this warp's PART x PART + 1 floats: the padding column keeps both the
// row-wise writes and the column-wise reads on 32 banks).
__device__ __forceinline__ void extract_and_copy_strip_of_rows(const extract_args &a,
                                                               const copy_args &copy, int lane,
                                                               int64_t tile_row, int64_t tile_col,
                                                               int tile_rows,
                                                               const float *tile_start,
                                                               float (*part)[PART + 1])
{
    const int row_in = lane / PART_LANES, quad = lane % PART_LANES;
    const int64_t row0 = tile_row * TILE_ROWS;
    for (int p = 0; p < TILE_COLS / PART; ++p) {
        const int64_t part_col = tile_col * TILE_COLS + p * PART;
        const int64_t col = part_col + quad * LANE_COLS;
        const bool vector = a.vector_rows && col + LANE_COLS <= a.cols;
        uint4 v[PART / PART_ROWS_PER_LOAD];
#pragma unroll
        for (int i = 0; i < PART / PART_ROWS_PER_LOAD; ++i) {
            // Rows past the matrix repeat its last row, as in fold_tile_rows.
            const int r = min(row_in + PART_ROWS_PER_LOAD * i, tile_rows - 1);
            const float *row = tile_start + r * a.ld + col;
            v[i] = vector ? load_row<true>(row, LANE_COLS) : load_row<false>(row, a.cols - col);
        }
        uint4 column_max = make_uint4(0, 0, 0, 0);
#pragma unroll
        for (int i = 0; i < PART / PART_ROWS_PER_LOAD; ++i) {
            column_max = max_each(column_max, magnitudes(v[i]));
            const int r = row_in + PART_ROWS_PER_LOAD * i;
            part[r][quad * LANE_COLS + 0] = __uint_as_float(v[i].x);
            part[r][quad * LANE_COLS + 1] = __uint_as_float(v[i].y);
            part[r][quad * LANE_COLS + 2] = __uint_as_float(v[i].z);
            part[r][quad * LANE_COLS + 3] = __uint_as_float(v[i].w);
        }
        // The lanes of a quad hold every row of its columns between them.
#pragma unroll
        for (int offset = PART_LANES; offset < WARP; offset *= 2)
            column_max = max_each(column_max,
                                  make_uint4(__shfl_xor_sync(ALL_LANES, column_max.x, offset),
                                             __shfl_xor_sync(ALL_LANES, column_max.y, offset),
                                             __shfl_xor_sync(ALL_LANES, column_max.z, offset),
                                             __shfl_xor_sync(ALL_LANES, column_max.w, offset)));
        write_kblock_byte(a, lane, column_max, tile_row,
                          part_col / ESMM_PATTERN_BK + quad / 2, row_in == 0);
        __syncwarp();
        // Copy row part_col + c, stored columns row0 + 4 quad .. +3: 4 copy
        // rows of 128 bytes a store. Rows past the matrix fall in the copy
        // row's padding (esmm_wide_copy_ld), which no product reads.
        const int64_t m0 = row0 + quad * LANE_COLS;
#pragma unroll
        for (int i = 0; i < PART / PART_ROWS_PER_LOAD; ++i) {
            const int c = row_in + PART_ROWS_PER_LOAD * i;
            if (m0 < a.rows && part_col + c < a.cols)
                *reinterpret_cast<float4 *>(copy.out + (part_col + c) * copy.ld + m0) =
                    make_float4(part[quad * LANE_COLS + 0][c], part[quad * LANE_COLS + 1][c],
                                part[quad * LANE_COLS + 2][c], part[quad * LANE_COLS + 3][c]);
        }
        // The next part overwrites this one.
        __syncwarp();
    }
}

// Strips of stored columns: the tile is 4 K blocks by 4 strips.
__device__ __forceinline__ void extract_strips_of_cols(const extract_args &a, int lane,
                                                       int64_t tile_row, int64_t tile_col,
                                                       int64_t col, int tile_rows,
                                                       const float *tile_start)
{
    uint32_t nonzero_rows = 0, nonfinite_rows = 0; // bit r: row r of the tile
    fold_tile(tile_start, a.ld, tile_rows, col, a.cols, a.vector_rows, [&](int r, uint4 m) {
        const uint32_t row_max = max4(m);
        nonzero_rows |= (uint32_t)(row_max != 0) << r;
        nonfinite_rows |= (uint32_t)(row_max >= INF_BITS) << r;
    });
    // Repeats of the last row stand for rows past the matrix: clear their bits.
    const uint32_t rows_in = tile_rows == TILE_ROWS ? ~0u : (1u << tile_rows) - 1;
    nonzero_rows &= rows_in;
    nonfinite_rows &= rows_in;
    constexpr int strip_lanes = ESMM_PATTERN_STRIP / LANE_COLS;
#pragma unroll
    for (int offset = 1; offset < strip_lanes; offset *= 2) {
        nonzero_rows |= __shfl_xor_sync(ALL_LANES, nonzero_rows, offset);
        nonfinite_rows |= __shfl_xor_sync(ALL_LANES, nonfinite_rows, offset);
    }
    mark_nonfinite(a, lane, nonfinite_rows != 0);
    // Lanes 0-3 of a strip write its nonzero bytes, lanes 4-7 its nonfinite bytes.
    constexpr int row_bytes = TILE_ROWS / ESMM_PATTERN_BK;
    const int lane_in_strip = lane % strip_lanes;
    const int byte = lane_in_strip % row_bytes;
    const int64_t strip = tile_col * (TILE_COLS / ESMM_PATTERN_STRIP) + lane / strip_lanes;
    const int64_t kb = tile_row * row_bytes + byte;
    if (strip < a.strips && kb < a.kblocks) {
        const bool want_nonzero = lane_in_strip < row_bytes;
        uint8_t *out = want_nonzero ? a.bits : a.nonfinite;
        const uint32_t word = want_nonzero ? nonzero_rows : nonfinite_rows;
        out[strip * a.kblocks + kb] = (uint8_t)(word >> (ESMM_PATTERN_BK * byte));
    }
}

// One or two operands in one launch: blocks below first_blocks take the
// first, the rest the second, so both extractions of a product share the GPU
// (each alone fills few SMs at moderate sizes) and cost one launch.
// With gate, a product the dense probe sent to the dense path reads nothing,
// and the operand with a copy writes it where the probe's counts say so.
__global__ __launch_bounds__(THREADS, MIN_BLOCKS_PER_SM) void extract_pattern_kernel(
    const extract_args first, const extract_args second, unsigned first_blocks,
    const esmm_plan_stats_t *gate, const copy_args first_copy, const copy_args second_copy)
{
    __shared__ float parts[WARPS_PER_BLOCK][PART][PART + 1];
    chain_wait();
    chain_release();
    esmm_probe_slot_t probe = {0, 0};
    if (gate != nullptr) {
        probe = warp_probe_totals(gate);
        if (esmm_probe_rule(probe.zeros, probe.slices))
            return;
    }
    const bool in_first = blockIdx.x < first_blocks;
    const extract_args a = in_first ? first : second;
    const int64_t block = in_first ? blockIdx.x : blockIdx.x - first_blocks;
    const int64_t tile = block * WARPS_PER_BLOCK + threadIdx.x / WARP;
    if (tile >= a.tiles)
        return; // the whole warp: the shuffles below see only full warps
    const int lane = threadIdx.x % WARP;
    const int64_t tile_row = tile / a.tiles_across, tile_col = tile % a.tiles_across;
    const int64_t row0 = tile_row * TILE_ROWS;
    const int64_t col = tile_col * TILE_COLS + lane * LANE_COLS;
    const int tile_rows = (int)min(a.rows - row0, (int64_t)TILE_ROWS);
    const float *tile_start = a.x + row0 * a.ld;
    const copy_args copy = in_first ? first_copy : second_copy;
    const bool copying = copy.out != nullptr &&
                         esmm_extraction_copy_made(probe.zeros, probe.slices,
                                                   (esmm_copied_t)copy.copied) != ESMM_COPY_NONE;
    if (copying)
        extract_and_copy_strip_of_rows(a, copy, lane, tile_row, tile_col, tile_rows, tile_start,
                                       parts[threadIdx.x / WARP]);
    else if (a.by_rows)
        extract_strip_of_rows(a, lane, tile_row, tile_col, col, tile_rows, tile_start);
    else
        extract_strips_of_cols(a, lane, tile_row, tile_col, col, tile_rows, tile_start);
}

// The arguments and block count of one operand (blocks 0: nothing to read).
cudaError_t describe(const pattern_extraction &e, extract_args *args, int64_t *blocks)
{
    if (e.rows < 0 || e.cols < 0 || e.ld < (e.cols > 1 ? e.cols : 1))
        return cudaErrorInvalidValue;
    *blocks = 0;
    *args = extract_args{};
    if (e.rows == 0 || e.cols == 0)
        return cudaSuccess;
    if (e.x == nullptr || e.bits == nullptr || e.nonfinite == nullptr ||
        (e.copy != nullptr && (e.strips != pattern_strips::of_stored_rows ||
                               reinterpret_cast<uintptr_t>(e.copy) % sizeof(float4) != 0)))
        return cudaErrorInvalidValue;
    const int64_t tiles_down = (e.rows + TILE_ROWS - 1) / TILE_ROWS;
    const int64_t tiles_across = (e.cols + TILE_COLS - 1) / TILE_COLS;
    const int64_t tiles = tiles_down * tiles_across;
    const bool by_rows = e.strips == pattern_strips::of_stored_rows;
    *args = extract_args{
        e.x, e.ld, e.rows, e.cols, by_rows,
        reinterpret_cast<uintptr_t>(e.x) % sizeof(float4) == 0 && e.ld % LANE_COLS == 0,
        tiles_across, tiles,
        esmm_pattern_strips(by_rows ? e.rows : e.cols),
        esmm_pattern_kblocks(by_rows ? e.cols : e.rows),
        e.bits, e.nonfinite, nullptr, 0};
    *blocks = (tiles + WARPS_PER_BLOCK - 1) / WARPS_PER_BLOCK;
    return cudaSuccess;
}

} // namespace

cudaError_t launch_extract_patterns(const pattern_extraction *first,
                                    const pattern_extraction *second,
                                    esmm_plan_stats_t *stats, cudaStream_t stream)
{
    extract_args args[2] = {};
    int64_t blocks[2] = {0, 0};
    copy_args copy[2] = {};
    const pattern_extraction *each[2] = {first, second};
    for (int i = 0; i < 2; ++i) {
        if (each[i] == nullptr)
            continue;
        const cudaError_t err = describe(*each[i], &args[i], &blocks[i]);
        if (err != cudaSuccess)
            return err;
        if (stats != nullptr) {
            args[i].nonfinite_seen = &stats->nonfinite_seen;
            args[i].operand = i == 0 ? ESMM_OPERAND_A : ESMM_OPERAND_B;
        }
        if (each[i]->copy != nullptr && blocks[i] > 0)
            copy[i] = copy_args{each[i]->copy, esmm_wide_copy_ld(each[i]->rows),
                                (int)each[i]->copied};
    }
    if (blocks[0] + blocks[1] == 0)
        return cudaSuccess;
    if (blocks[0] + blocks[1] > INT_MAX)
        return cudaErrorInvalidConfiguration;
    return launch_chained(extract_pattern_kernel, (unsigned)(blocks[0] + blocks[1]), THREADS, 0,
                          stream, args[0], args[1], (unsigned)blocks[0],
                          static_cast<const esmm_plan_stats_t *>(stats), copy[0], copy[1]);
}

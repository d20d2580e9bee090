/*
 * Pattern metadata shared by the CPU and GPU extraction, so both can be
 * compared byte for byte (DESIGN.md, "Pattern metadata").
 *
 * K is cut into blocks of ESMM_PATTERN_BK = 8 columns (the last may be
 * partial); M (for A) and N (for B) into strips of ESMM_PATTERN_STRIP = 32.
 *
 *   A = op(A), m x k:  bits[strip * kblocks + kb], bit i set when any row of
 *                      the strip has a nonzero in column 8*kb + i.
 *   B = op(B), k x n:  bits[strip * kblocks + kb], bit i set when row 8*kb + i
 *                      has a nonzero among the strip's columns.
 *
 * Both operands are stored strip-major with K blocks contiguous, so a tile
 * walking K reads its masks as one contiguous run. Rows/columns past the
 * matrix and bits past K are zero. "Nonzero" is x != 0.0f: -0.0 is zero,
 * NaN and +-Inf are nonzero. nonfinite[] has the same layout and sets a bit
 * when the slice holds a NaN or Inf; a slice may only be skipped because the
 * other operand is zero there if it holds no NaN/Inf (DESIGN.md, Exactness).
 */
#ifndef ESMM_PATTERN_LAYOUT_H
#define ESMM_PATTERN_LAYOUT_H

#include <stdint.h>

#define ESMM_PATTERN_BK 8
#define ESMM_PATTERN_STRIP 32

#ifdef __CUDACC__
#define ESMM_HOST_DEVICE __host__ __device__
#else
#define ESMM_HOST_DEVICE
#endif

typedef struct {
    int64_t strips;     /* ceil(rows / 32): rows = m for A, n for B */
    int64_t kblocks;    /* ceil(k / 8) */
    uint8_t *bits;      /* strips * kblocks bytes */
    uint8_t *nonfinite; /* strips * kblocks bytes */
} esmm_strip_masks_t;

static inline ESMM_HOST_DEVICE int64_t esmm_pattern_strips(int64_t rows)
{
    return (rows + ESMM_PATTERN_STRIP - 1) / ESMM_PATTERN_STRIP;
}

static inline ESMM_HOST_DEVICE int64_t esmm_pattern_kblocks(int64_t k)
{
    return (k + ESMM_PATTERN_BK - 1) / ESMM_PATTERN_BK;
}

/* Bytes of one mask array of an operand with `rows` strip-wise rows and k,
 * or -1 where rows, k or the count are too large for int64. */
static inline int64_t esmm_pattern_mask_bytes(int64_t rows, int64_t k)
{
    if (rows > INT64_MAX - ESMM_PATTERN_STRIP || k > INT64_MAX - ESMM_PATTERN_BK)
        return -1;
    const int64_t strips = esmm_pattern_strips(rows), kblocks = esmm_pattern_kblocks(k);
    return kblocks > 0 && strips > INT64_MAX / kblocks ? -1 : strips * kblocks;
}

/* The k of K block kb that exist, as mask bits. */
static inline ESMM_HOST_DEVICE unsigned esmm_pattern_existing_k(int64_t kb, int64_t k)
{
    const int64_t left = k - kb * ESMM_PATTERN_BK;
    return left >= ESMM_PATTERN_BK ? 0xffu : (1u << left) - 1u;
}

/*
 * The dense probe. Before extracting, a planned product samples blocks of
 * each operand: a block is one mask byte's place (a strip by a K block,
 * strips * kblocks of them in the order of bits[]), and each of its existing
 * k is a slice, zero when the strip holds no nonzero there. The sample takes
 * one block from each of ESMM_PROBE_BLOCKS equal runs of that order, at a
 * fixed pseudo-random place in the run, or every block when there are no
 * more; the CPU and GPU probes read the same blocks, so they count the same
 * zero slices.
 */
#define ESMM_PROBE_BLOCKS 256

static inline ESMM_HOST_DEVICE int64_t esmm_probe_samples(int64_t blocks)
{
    return blocks < ESMM_PROBE_BLOCKS ? blocks : ESMM_PROBE_BLOCKS;
}

/* The block of sample j (0 <= j < esmm_probe_samples(blocks)). */
static inline ESMM_HOST_DEVICE int64_t esmm_probe_block(int64_t j, int64_t blocks)
{
    if (blocks <= ESMM_PROBE_BLOCKS)
        return j;
    const int64_t first = j * blocks / ESMM_PROBE_BLOCKS;
    const int64_t run = (j + 1) * blocks / ESMM_PROBE_BLOCKS - first;
    const uint64_t hash = ((uint64_t)j + 1u) * 0x9E3779B97F4A7C15ull;
    /* The same remainder either way; 32 bits cost the GPU far less. */
    if (run <= (int64_t)UINT32_MAX)
        return first + (int64_t)((uint32_t)(hash >> 33) % (uint32_t)run);
    return first + (int64_t)((hash >> 33) % (uint64_t)run);
}

#endif

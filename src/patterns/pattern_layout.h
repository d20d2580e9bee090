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

typedef struct {
    int64_t strips;     /* ceil(rows / 32): rows = m for A, n for B */
    int64_t kblocks;    /* ceil(k / 8) */
    uint8_t *bits;      /* strips * kblocks bytes */
    uint8_t *nonfinite; /* strips * kblocks bytes */
} esmm_strip_masks_t;

static inline int64_t esmm_pattern_strips(int64_t rows)
{
    return (rows + ESMM_PATTERN_STRIP - 1) / ESMM_PATTERN_STRIP;
}

static inline int64_t esmm_pattern_kblocks(int64_t k)
{
    return (k + ESMM_PATTERN_BK - 1) / ESMM_PATTERN_BK;
}

#endif

/* Pattern extraction (patterns/pattern_layout.h) and pattern buffers.
 *
 * Each operand is read once, in storage order. Storage comes in two shapes
 * whatever the operand: the strip dimension runs down the stored rows (A with
 * op N, B with op T: rows x k) or along them (A with op T, B with op N:
 * k x rows). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_backend.h"

enum { STRIP = ESMM_PATTERN_STRIP, BK = ESMM_PATTERN_BK };

static int popcount8(unsigned byte)
{
    int count = 0;
    for (int i = 0; i < BK; i++)
        count += (byte >> i) & 1u;
    return count;
}

/* Below this many elements one thread reads the operand: waking a team costs
 * more than it saves. */
static int worth_parallel(int64_t rows, int64_t k)
{
    return (double)rows * (double)k >= 1e6;
}

/* Stored rows x k: one strip of 32 stored rows fills one row of bytes, so
 * strips run in parallel without sharing a byte. */
static void extract_strip_major(const float *x, int64_t ld, int64_t rows, int64_t k,
                                esmm_strip_masks_t *out)
{
    const int64_t strips = esmm_pattern_strips(rows), kblocks = esmm_pattern_kblocks(k);
#pragma omp parallel for schedule(static) if (worth_parallel(rows, k))
    for (int64_t s = 0; s < strips; s++) {
        uint8_t *bits = out->bits + s * kblocks;
        uint8_t *nonfinite = out->nonfinite + s * kblocks;
        memset(bits, 0, (size_t)kblocks);
        memset(nonfinite, 0, (size_t)kblocks);
        const int64_t row_end = s * STRIP + STRIP < rows ? s * STRIP + STRIP : rows;
        for (int64_t r = s * STRIP; r < row_end; r++) {
            const float *row = x + r * ld;
            for (int64_t kb = 0; kb < kblocks; kb++) {
                const int64_t kn = k - kb * BK < BK ? k - kb * BK : BK;
                unsigned nonzero = 0, nonfinite_byte = 0;
                for (int64_t i = 0; i < kn; i++) {
                    const float v = row[kb * BK + i];
                    nonzero |= (unsigned)(v != 0.0f) << i;
                    nonfinite_byte |= (unsigned)!isfinite(v) << i;
                }
                bits[kb] |= (uint8_t)nonzero;
                nonfinite[kb] |= (uint8_t)nonfinite_byte;
            }
        }
    }
}

/* Stored k x rows: 8 stored rows make one column of bytes (one per strip),
 * so K blocks run in parallel without sharing a byte. */
static void extract_k_major(const float *x, int64_t ld, int64_t rows, int64_t k,
                            esmm_strip_masks_t *out)
{
    const int64_t strips = esmm_pattern_strips(rows), kblocks = esmm_pattern_kblocks(k);
#pragma omp parallel for schedule(static) if (worth_parallel(rows, k))
    for (int64_t kb = 0; kb < kblocks; kb++) {
        for (int64_t s = 0; s < strips; s++) {
            out->bits[s * kblocks + kb] = 0;
            out->nonfinite[s * kblocks + kb] = 0;
        }
        const int64_t kk_end = kb * BK + BK < k ? kb * BK + BK : k;
        for (int64_t kk = kb * BK; kk < kk_end; kk++) {
            const float *row = x + kk * ld;
            const unsigned bit = 1u << (kk % BK);
            for (int64_t s = 0; s < strips; s++) {
                const int64_t col_end = s * STRIP + STRIP < rows ? s * STRIP + STRIP : rows;
                int nonzero = 0, nonfinite = 0;
                for (int64_t c = s * STRIP; c < col_end; c++) {
                    nonzero |= row[c] != 0.0f;
                    nonfinite |= !isfinite(row[c]);
                }
                if (nonzero)
                    out->bits[s * kblocks + kb] |= (uint8_t)bit;
                if (nonfinite)
                    out->nonfinite[s * kblocks + kb] |= (uint8_t)bit;
            }
        }
    }
}

void esmm_cpu_extract_a(esmm_operation_t op, const float *a, int64_t lda, int64_t m, int64_t k,
                        esmm_strip_masks_t *out)
{
    if (op == ESMM_OP_N)
        extract_strip_major(a, lda, m, k, out);
    else
        extract_k_major(a, lda, m, k, out);
}

void esmm_cpu_extract_b(esmm_operation_t op, const float *b, int64_t ldb, int64_t k, int64_t n,
                        esmm_strip_masks_t *out)
{
    if (op == ESMM_OP_T)
        extract_strip_major(b, ldb, n, k, out);
    else
        extract_k_major(b, ldb, n, k, out);
}

/* The k of block kb (existing holds those that exist) where the strip's
 * line has a nonzero: a stored row with k along it, or a stored column. */
static unsigned line_nonzero(const float *x, int64_t ld, int lines_are_rows, int64_t line,
                             int64_t kb, unsigned existing)
{
    unsigned bits = 0;
    for (int i = 0; i < BK; i++) {
        if (!((existing >> i) & 1u))
            continue;
        const int64_t kk = kb * BK + i;
        const float v = lines_are_rows ? x[line * ld + kk] : x[kk * ld + line];
        bits |= (unsigned)(v != 0.0f) << i;
    }
    return bits;
}

void esmm_cpu_probe(int is_b, esmm_operation_t op, const float *x, int64_t ld, int64_t rows,
                    int64_t k, const uint8_t *given, unsigned *zero, unsigned *slices)
{
    const int lines_are_rows = is_b ? op == ESMM_OP_T : op == ESMM_OP_N;
    const int64_t kblocks = esmm_pattern_kblocks(k);
    const int64_t blocks = esmm_pattern_strips(rows) * kblocks;
    const int64_t samples = esmm_probe_samples(blocks);
    for (int64_t j = 0; j < samples; j++) {
        const int64_t block = esmm_probe_block(j, blocks);
        const int64_t strip = block / kblocks, kb = block % kblocks;
        const unsigned existing = esmm_pattern_existing_k(kb, k);
        unsigned nonzero = 0;
        if (given != NULL) {
            nonzero = given[block];
        } else {
            const int64_t line_end = strip * STRIP + STRIP < rows ? strip * STRIP + STRIP : rows;
            for (int64_t line = strip * STRIP; line < line_end; line++)
                nonzero |= line_nonzero(x, ld, lines_are_rows, line, kb, existing);
        }
        *zero += (unsigned)popcount8(existing & ~nonzero);
        *slices += (unsigned)popcount8(existing);
    }
}

esmm_status_t esmm_strip_masks_alloc(esmm_strip_masks_t *pattern, int64_t rows, int64_t k)
{
    if (pattern == NULL || rows < 0 || k < 0)
        return ESMM_STATUS_INVALID_VALUE;
    memset(pattern, 0, sizeof *pattern);
    const int64_t count = esmm_pattern_mask_bytes(rows, k);
    if (count < 0)
        return ESMM_STATUS_ALLOC_FAILED;
    const int64_t strips = esmm_pattern_strips(rows), kblocks = esmm_pattern_kblocks(k);
    /* At least one byte, so an empty pattern still has non-NULL buffers. */
    const size_t bytes = count > 0 ? (size_t)count : 1;
    pattern->bits = calloc(bytes, 1);
    pattern->nonfinite = calloc(bytes, 1);
    if (pattern->bits == NULL || pattern->nonfinite == NULL) {
        esmm_strip_masks_free(pattern);
        return ESMM_STATUS_ALLOC_FAILED;
    }
    pattern->strips = strips;
    pattern->kblocks = kblocks;
    return ESMM_STATUS_SUCCESS;
}

void esmm_strip_masks_free(esmm_strip_masks_t *pattern)
{
    if (pattern == NULL)
        return;
    free(pattern->bits);
    free(pattern->nonfinite);
    memset(pattern, 0, sizeof *pattern);
}

/*
 * Blocked CPU SGEMM and skip-GEMM.
 *
 * op(A) is packed into panels of 32 rows and op(B) into panels of 32 columns,
 * each K long and k-major, so the micro-kernel reads contiguous memory whatever
 * the ops and leading dimensions. C is cut into 32 x 32 tiles, one per
 * (A strip, B strip) pair: exactly the granularity of the pattern masks. Each
 * tile gets the increasing list of k it must visit (every k on the dense path)
 * and the one micro-kernel walks that list into float accumulators. A skipped k
 * only ever contributes exact +-0 products; an accumulator that starts at +0
 * can never become -0 (x + -x is +0), and x + (+-0) == x for every other x, so
 * skip and dense agree bit for bit.
 */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_backend.h"

enum {
    TILE = ESMM_PATTERN_STRIP, /* C tile edge: one pattern strip of A by one of B */
    BK = ESMM_PATTERN_BK,
    MR = 4, /* micro tile: MR x NR accumulators, sized for 16 SSE registers */
    NR = 8,
    KC = 128, /* active k per pass: the A and B chunks (16 KiB each) stay in L1 */
    K_CHUNK = 8192 /* k packed at once (a multiple of BK): 1 MiB per strip */
};

/* Below this many multiply-adds a product runs on one thread: waking a team
 * costs more than it saves, and far more when the cores are shared. */
#define PARALLEL_MIN_WORK 1e6

static int64_t min_i64(int64_t x, int64_t y)
{
    return x < y ? x : y;
}

/* Packs one strip of `valid` (<= TILE) rows of a K-long operand into
 * panel[kk * TILE + r], zero past `valid`, and flags per 8-k block whether the
 * strip holds a NaN or Inf. Element (r, kk) is src[r * strip_stride + kk * k_stride].
 * Blocks of 8 k by 32 rows touch few cache lines whichever stride is 1. */
static void pack_strip(const float *src, int64_t strip_stride, int64_t k_stride, int64_t valid,
                       int64_t k, float *panel, uint8_t *nonfinite)
{
    for (int64_t k0 = 0; k0 < k; k0 += BK) {
        int64_t kn = min_i64(BK, k - k0);
        unsigned nf = 0;
        for (int64_t r = 0; r < valid; r++) {
            const float *row = src + r * strip_stride + k0 * k_stride;
            for (int64_t i = 0; i < kn; i++) {
                float x = row[i * k_stride];
                panel[(k0 + i) * TILE + r] = x;
                if (!isfinite(x))
                    nf |= 1u << i;
            }
        }
        for (int64_t r = valid; r < TILE; r++)
            for (int64_t i = 0; i < kn; i++)
                panel[(k0 + i) * TILE + r] = 0.0f;
        nonfinite[k0 / BK] = (uint8_t)nf;
    }
}

/* The one micro-kernel: acc (an MR x NR block of a TILE-wide accumulator
 * tile) += the products over the listed k, in list order, one add at a time. */
static void micro_kernel(const float *a_panel, const float *b_panel, const int64_t *ks,
                         int64_t count, float *acc)
{
    float r[MR][NR];
    for (int i = 0; i < MR; i++)
        for (int j = 0; j < NR; j++)
            r[i][j] = acc[i * TILE + j];
    for (int64_t q = 0; q < count; q++) {
        const float *a = a_panel + ks[q] * TILE;
        const float *b = b_panel + ks[q] * TILE;
        for (int i = 0; i < MR; i++)
            for (int j = 0; j < NR; j++)
                r[i][j] += a[i] * b[j];
    }
    for (int i = 0; i < MR; i++)
        for (int j = 0; j < NR; j++)
            acc[i * TILE + j] = r[i][j];
}

/* acc (TILE x TILE) = init (NULL: +0) + the products over the listed k, in
 * list order. Starting the sums here, not in the caller, lets the compiler
 * keep them in vector registers (measured: 1.6x slower otherwise). */
static void compute_tile(const float *a_panel, const float *b_panel, const int64_t *ks,
                         int64_t count, float *acc, const float *init)
{
    for (int i = 0; i < TILE * TILE; i++)
        acc[i] = init ? init[i] : 0.0f;
    for (int64_t q0 = 0; q0 < count; q0 += KC) {
        int64_t qn = min_i64(KC, count - q0);
        for (int c0 = 0; c0 < TILE; c0 += NR)
            for (int r0 = 0; r0 < TILE; r0 += MR)
                micro_kernel(a_panel + r0, b_panel + c0, ks + q0, qn, acc + r0 * TILE + c0);
    }
}

/* The k a tile pair must visit, in increasing order; returns how many.
 * A product A[i,k] * B[k,j] is exactly +-0 when one factor is zero and the
 * other finite, so a k may be skipped when A's strip is zero there and B's is
 * finite, or B's strip is zero there and A's is finite. A NULL mask means
 * "not known to be zero anywhere". */
static int64_t active_k(int64_t k, int64_t kblocks, const uint8_t *a_bits, const uint8_t *b_bits,
                        const uint8_t *a_nonfinite, const uint8_t *b_nonfinite, int64_t *ks)
{
    int64_t count = 0;
    for (int64_t kb = 0; kb < kblocks; kb++) {
        unsigned a = a_bits ? a_bits[kb] : 0xFFu;
        unsigned b = b_bits ? b_bits[kb] : 0xFFu;
        unsigned active = (a | b_nonfinite[kb]) & (b | a_nonfinite[kb]);
        int64_t k0 = kb * BK;
        if (k - k0 < BK)
            active &= (1u << (k - k0)) - 1u;
        for (int i = 0; i < BK; i++)
            if (active & (1u << i))
                ks[count++] = k0 + i;
    }
    return count;
}

/* C(tile) = alpha * acc + beta * C(tile); beta == 0 never reads C. */
static void store_tile(const esmm_gemm_problem_t *p, const float *acc, int64_t row0, int64_t col0)
{
    int64_t rows = min_i64(TILE, p->m - row0);
    int64_t cols = min_i64(TILE, p->n - col0);
    for (int64_t r = 0; r < rows; r++) {
        float *c = p->c + (row0 + r) * p->ldc + col0;
        const float *acc_row = acc + r * TILE;
        if (p->beta == 0.0f) {
            for (int64_t j = 0; j < cols; j++)
                c[j] = p->alpha * acc_row[j];
        } else {
            for (int64_t j = 0; j < cols; j++)
                c[j] = p->alpha * acc_row[j] + p->beta * c[j];
        }
    }
}

/* BLAS: k == 0 or alpha == 0 reads neither A nor B, C = beta * C. */
static void scale_c(const esmm_gemm_problem_t *p)
{
    for (int64_t i = 0; i < p->m; i++) {
        float *c = p->c + i * p->ldc;
        for (int64_t j = 0; j < p->n; j++)
            c[j] = p->beta == 0.0f ? 0.0f : p->beta * c[j];
    }
}

/* malloc of count * size bytes, NULL if that overflows or fails. */
static void *alloc_array(int64_t count, size_t size)
{
    if (count < 0 || (uint64_t)count > SIZE_MAX / size)
        return NULL;
    return malloc(count > 0 ? (size_t)count * size : 1);
}

/* strips * TILE * k, or -1 when it overflows. */
static int64_t panel_floats(int64_t strips, int64_t k)
{
    if (strips > INT64_MAX / TILE / k)
        return -1;
    return strips * TILE * k;
}

static int pattern_fits(const esmm_strip_masks_t *pattern, int64_t rows, int64_t k)
{
    return pattern != NULL && pattern->bits != NULL &&
           pattern->strips == esmm_pattern_strips(rows) &&
           pattern->kblocks == esmm_pattern_kblocks(k);
}

static esmm_status_t run_gemm(const esmm_gemm_problem_t *p, esmm_skip_mode_t mode,
                              const esmm_strip_masks_t *pa, const esmm_strip_masks_t *pb)
{
    int use_a = mode == ESMM_SKIP_A || mode == ESMM_SKIP_JOINT;
    int use_b = mode == ESMM_SKIP_B || mode == ESMM_SKIP_JOINT;
    if (mode != ESMM_SKIP_NONE && !use_a && !use_b)
        return ESMM_STATUS_INVALID_VALUE;
    if ((use_a && !pattern_fits(pa, p->m, p->k)) || (use_b && !pattern_fits(pb, p->n, p->k)))
        return ESMM_STATUS_INVALID_VALUE;
    if (p->m == 0 || p->n == 0)
        return ESMM_STATUS_SUCCESS;
    if (p->k == 0 || p->alpha == 0.0f) {
        scale_c(p);
        return ESMM_STATUS_SUCCESS;
    }

    const int64_t k = p->k;
    const int64_t a_strips = esmm_pattern_strips(p->m);
    const int64_t b_strips = esmm_pattern_strips(p->n);
    const int64_t tiles = a_strips * b_strips;
    const int64_t kblocks = esmm_pattern_kblocks(k);
    const int64_t chunk = min_i64(k, K_CHUNK), chunk_blocks = esmm_pattern_kblocks(chunk);
    const int64_t threads = omp_get_max_threads();
    const int64_t a_floats = panel_floats(a_strips, chunk);
    const int64_t b_floats = panel_floats(b_strips, chunk);
    /* Sums outlive a chunk in `kept`, which exists only when there are several. */
    const int64_t kept_floats = k > chunk ? panel_floats(tiles, TILE) : 0;
    if (a_floats < 0 || b_floats < 0 || kept_floats < 0)
        return ESMM_STATUS_ALLOC_FAILED;
    /* All fit now: the nonfinite bytes are fewer than the panel floats. */
    float *a_panels = alloc_array(a_floats, sizeof(float));
    float *b_panels = alloc_array(b_floats, sizeof(float));
    uint8_t *a_nonfinite = alloc_array(a_strips * chunk_blocks, 1);
    uint8_t *b_nonfinite = alloc_array(b_strips * chunk_blocks, 1);
    int64_t *k_lists = alloc_array(chunk * threads, sizeof(int64_t));
    float *kept = alloc_array(kept_floats, sizeof(float));
    esmm_status_t status = ESMM_STATUS_ALLOC_FAILED;
    if (a_panels == NULL || b_panels == NULL || a_nonfinite == NULL || b_nonfinite == NULL ||
        k_lists == NULL || kept == NULL)
        goto done;

    /* Element (r, kk) of a strip: op(A)(row0 + r, kk) and op(B)(kk, col0 + r).
     * Packing also yields both operands' nonfinite flags, so the skip rule
     * never needs a pattern of the operand whose mask the mode ignores. */
    const int64_t a_strip_stride = p->op_a == ESMM_OP_N ? p->lda : 1;
    const int64_t a_k_stride = p->op_a == ESMM_OP_N ? 1 : p->lda;
    const int64_t b_strip_stride = p->op_b == ESMM_OP_N ? 1 : p->ldb;
    const int64_t b_k_stride = p->op_b == ESMM_OP_N ? p->ldb : 1;
    const int parallel = (double)p->m * (double)p->n * (double)k >= PARALLEL_MIN_WORK;
    for (int64_t k0 = 0; k0 < k; k0 += chunk) {
        const int64_t kn = min_i64(chunk, k - k0), kb0 = k0 / BK;
        const int first = k0 == 0, last = k0 + kn == k;
#pragma omp parallel for schedule(dynamic) if (parallel)
        for (int64_t s = 0; s < a_strips + b_strips; s++) {
            if (s < a_strips) {
                int64_t row0 = s * TILE;
                pack_strip(p->a + row0 * a_strip_stride + k0 * a_k_stride, a_strip_stride,
                           a_k_stride, min_i64(TILE, p->m - row0), kn, a_panels + s * TILE * kn,
                           a_nonfinite + s * chunk_blocks);
            } else {
                int64_t t = s - a_strips, col0 = t * TILE;
                pack_strip(p->b + col0 * b_strip_stride + k0 * b_k_stride, b_strip_stride,
                           b_k_stride, min_i64(TILE, p->n - col0), kn, b_panels + t * TILE * kn,
                           b_nonfinite + t * chunk_blocks);
            }
        }

#pragma omp parallel if (parallel)
        {
            int64_t *ks = k_lists + omp_get_thread_num() * chunk;
            float acc[TILE * TILE];
#pragma omp for schedule(dynamic, 4)
            for (int64_t tile = 0; tile < tiles; tile++) {
                int64_t s = tile / b_strips, t = tile % b_strips;
                float *tile_kept = first && last ? NULL : kept + tile * TILE * TILE;
                int64_t count =
                    active_k(kn, esmm_pattern_kblocks(kn),
                             use_a ? pa->bits + s * kblocks + kb0 : NULL,
                             use_b ? pb->bits + t * kblocks + kb0 : NULL,
                             a_nonfinite + s * chunk_blocks, b_nonfinite + t * chunk_blocks, ks);
                compute_tile(a_panels + s * TILE * kn, b_panels + t * TILE * kn, ks, count, acc,
                             first ? NULL : tile_kept);
                if (last)
                    store_tile(p, acc, s * TILE, t * TILE);
                else
                    memcpy(tile_kept, acc, sizeof acc);
            }
        }
    }
    status = ESMM_STATUS_SUCCESS;

done:
    free(a_panels);
    free(b_panels);
    free(a_nonfinite);
    free(b_nonfinite);
    free(k_lists);
    free(kept);
    return status;
}

esmm_status_t esmm_cpu_sgemm(const esmm_gemm_problem_t *p)
{
    return run_gemm(p, ESMM_SKIP_NONE, NULL, NULL);
}

esmm_status_t esmm_cpu_skip_sgemm(const esmm_gemm_problem_t *p, esmm_skip_mode_t mode,
                                  const esmm_strip_masks_t *pa, const esmm_strip_masks_t *pb)
{
    return run_gemm(p, mode, pa, pb);
}

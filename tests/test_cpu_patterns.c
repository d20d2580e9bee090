/* CPU pattern extraction against the layout's definition, written here one
 * element at a time, byte for byte; and the pattern buffer lifecycle. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cpu/cpu_backend.h"
#include "test_support.h"

/* Bytes written past the pattern buffers are caught by these guards. */
#define GUARD_BYTES 16
#define GUARD_VALUE 0x5A
#define GARBAGE_VALUE 0xA5

typedef enum { VALUES_MIXED, VALUES_SPARSE, VALUES_ALL_ZERO, VALUES_SINGLE } value_style_t;

static const char *const value_style_names[] = {"mixed", "sparse", "all-zero", "single"};

/* Specials and signed zeros among random values: -0.0 must read as zero,
 * NaN and +-Inf as nonzero and nonfinite. */
static float random_value(value_style_t style, uint64_t *rng)
{
    double u = rng_uniform(rng);
    if (style == VALUES_ALL_ZERO || style == VALUES_SINGLE)
        return u < 0.5 ? -0.0f : 0.0f;
    if (style == VALUES_SPARSE && u < 0.97)
        return u < 0.5 ? -0.0f : 0.0f;
    if (u < 0.3)
        return 0.0f;
    if (u < 0.5)
        return -0.0f;
    if (u < 0.51)
        return NAN;
    if (u < 0.52)
        return INFINITY;
    if (u < 0.53)
        return -INFINITY;
    if (u < 0.54)
        return 1e-45f; /* the smallest subnormal is nonzero */
    return (float)(u - 0.77);
}

/* The definition: bit (strip of row i, kb of kk) for each element of op(X),
 * where op(X) is seen as rows x k (op(A), or op(B) transposed). */
static void naive_pattern(const float *x, int64_t ld, int transposed, int64_t rows, int64_t k,
                          uint8_t *bits, uint8_t *nonfinite)
{
    const int64_t kblocks = (k + 7) / 8, strips = (rows + 31) / 32;
    memset(bits, 0, (size_t)(strips * kblocks));
    memset(nonfinite, 0, (size_t)(strips * kblocks));
    for (int64_t i = 0; i < rows; i++) {
        for (int64_t kk = 0; kk < k; kk++) {
            float v = transposed ? x[kk * ld + i] : x[i * ld + kk];
            int64_t byte = (i / 32) * kblocks + kk / 8;
            uint8_t bit = (uint8_t)(1u << (kk % 8));
            if (v != 0.0f)
                bits[byte] |= bit;
            if (isnan(v) || isinf(v))
                nonfinite[byte] |= bit;
        }
    }
}

/* The dense probe's counts read off a pattern's bytes at the blocks it
 * samples (patterns/pattern_layout.h). */
static void probe_from_bits(const uint8_t *bits, int64_t rows, int64_t k, unsigned *zero,
                            unsigned *slices)
{
    const int64_t kblocks = (k + 7) / 8, blocks = ((rows + 31) / 32) * kblocks;
    *zero = *slices = 0;
    for (int64_t j = 0; j < esmm_probe_samples(blocks); j++) {
        const int64_t block = esmm_probe_block(j, blocks);
        for (int64_t kk = block % kblocks * 8; kk < k && kk < block % kblocks * 8 + 8; kk++) {
            *slices += 1;
            *zero += !((bits[block] >> (kk % 8)) & 1u);
        }
    }
}

/* One operand: rows is m for A and n for B; the storage follows the op. */
static void check_extract(int is_a, esmm_operation_t op, int64_t rows, int64_t k, int64_t pad,
                          value_style_t style, uint64_t seed)
{
    uint64_t rng = seed;
    /* op(A) is rows x k; op(B) is k x rows, so B stored for op N is k x rows. */
    const int k_major = is_a ? op == ESMM_OP_T : op == ESMM_OP_N;
    const int64_t stored_rows = k_major ? k : rows, stored_cols = k_major ? rows : k;
    const int64_t ld = stored_cols + pad;
    float *x = host_alloc(stored_rows * ld, sizeof(float));
    for (int64_t i = 0; i < stored_rows; i++)
        for (int64_t j = 0; j < ld; j++)
            x[i * ld + j] = j < stored_cols ? random_value(style, &rng) : NAN;
    if (style == VALUES_SINGLE) {
        int64_t i = rng_below(&rng, stored_rows);
        int64_t j = rng_below(&rng, stored_cols);
        x[i * ld + j] = 0.5f;
    }

    const int64_t bytes = ((rows + 31) / 32) * ((k + 7) / 8);
    uint8_t *want_bits = host_alloc(bytes, 1), *want_nonfinite = host_alloc(bytes, 1);
    naive_pattern(x, ld, k_major, rows, k, want_bits, want_nonfinite);

    uint8_t *got_bits = host_alloc(bytes + GUARD_BYTES, 1);
    uint8_t *got_nonfinite = host_alloc(bytes + GUARD_BYTES, 1);
    memset(got_bits, GARBAGE_VALUE, (size_t)bytes);
    memset(got_nonfinite, GARBAGE_VALUE, (size_t)bytes);
    memset(got_bits + bytes, GUARD_VALUE, GUARD_BYTES);
    memset(got_nonfinite + bytes, GUARD_VALUE, GUARD_BYTES);
    esmm_strip_masks_t pattern = {(rows + 31) / 32, (k + 7) / 8, got_bits, got_nonfinite};
    if (is_a)
        esmm_cpu_extract_a(op, x, ld, rows, k, &pattern);
    else
        esmm_cpu_extract_b(op, x, ld, k, rows, &pattern);

    CHECK(memcmp(got_bits, want_bits, (size_t)bytes) == 0 &&
              memcmp(got_nonfinite, want_nonfinite, (size_t)bytes) == 0,
          "extract_%s op %s rows=%ld k=%ld pad=%ld %s seed=%llu: bytes differ from the definition",
          is_a ? "a" : "b", op == ESMM_OP_N ? "N" : "T", (long)rows, (long)k, (long)pad,
          value_style_names[style], (unsigned long long)seed);
    CHECK(bytes_all_equal(got_bits + bytes, GUARD_BYTES, GUARD_VALUE) &&
              bytes_all_equal(got_nonfinite + bytes, GUARD_BYTES, GUARD_VALUE),
          "extract_%s op %s rows=%ld k=%ld: wrote past the buffers", is_a ? "a" : "b",
          op == ESMM_OP_N ? "N" : "T", (long)rows, (long)k);

    /* The probe, from the matrix (whose padding is NaN, so a stray read
     * shows) and from the masks, counts what the definition's bytes say. */
    unsigned want_zero, want_slices, zero = 0, slices = 0, mask_zero = 0, mask_slices = 0;
    probe_from_bits(want_bits, rows, k, &want_zero, &want_slices);
    esmm_cpu_probe(!is_a, op, x, ld, rows, k, NULL, &zero, &slices);
    esmm_cpu_probe(!is_a, op, NULL, ld, rows, k, want_bits, &mask_zero, &mask_slices);
    CHECK(zero == want_zero && slices == want_slices && mask_zero == want_zero &&
              mask_slices == want_slices,
          "probe_%s op %s rows=%ld k=%ld pad=%ld %s: %u / %u zero slices from the matrix, "
          "%u / %u from the masks, the definition gives %u / %u",
          is_a ? "a" : "b", op == ESMM_OP_N ? "N" : "T", (long)rows, (long)k, (long)pad,
          value_style_names[style], zero, slices, mask_zero, mask_slices, want_zero,
          want_slices);

    free(x);
    free(want_bits);
    free(want_nonfinite);
    free(got_bits);
    free(got_nonfinite);
}

static void test_extract(void)
{
    static const int64_t shapes[][2] = {
        {1, 1},  {1, 9},   {31, 7},   {32, 8},   {33, 9},   {64, 16},
        {65, 17}, {100, 1}, {1, 100}, {70, 130}, {37, 250}, {200, 64},
        /* more blocks than the probe samples */
        {300, 300}, {1, 4001},
    };
    uint64_t seed = 1;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int is_a = 0; is_a <= 1; is_a++)
            for (int op = 0; op <= 1; op++)
                for (int64_t pad = 0; pad <= 5; pad += 5)
                    for (int style = VALUES_MIXED; style <= VALUES_SINGLE; style++)
                        check_extract(is_a, (esmm_operation_t)op, shapes[s][0], shapes[s][1], pad,
                                      (value_style_t)style, seed++);
}

/* The same stored matrix read as op(A) = X and as op(B) = X^T is one layout:
 * rows of X are the strips either way. */
static void test_a_b_duality(void)
{
    const int64_t rows = 71, k = 45;
    uint64_t rng = 5;
    float *x = host_alloc(rows * k, sizeof(float));
    for (int64_t i = 0; i < rows * k; i++)
        x[i] = random_value(VALUES_MIXED, &rng);
    esmm_strip_masks_t pa, pb;
    CHECK(esmm_strip_masks_alloc(&pa, rows, k) == ESMM_STATUS_SUCCESS, "alloc");
    CHECK(esmm_strip_masks_alloc(&pb, rows, k) == ESMM_STATUS_SUCCESS, "alloc");
    size_t bytes = (size_t)(pa.strips * pa.kblocks);
    /* Different poison in each, so masks left unwritten cannot agree. */
    memset(pa.bits, 0xA5, bytes), memset(pa.nonfinite, 0xA5, bytes);
    memset(pb.bits, 0x5A, bytes), memset(pb.nonfinite, 0x5A, bytes);
    esmm_cpu_extract_a(ESMM_OP_N, x, k, rows, k, &pa);
    esmm_cpu_extract_b(ESMM_OP_T, x, k, k, rows, &pb);
    CHECK(memcmp(pa.bits, pb.bits, bytes) == 0 && memcmp(pa.nonfinite, pb.nonfinite, bytes) == 0,
          "A op N and B op T of the same storage differ");
    esmm_strip_masks_free(&pa);
    esmm_strip_masks_free(&pb);
    free(x);
}

static void test_alloc(void)
{
    static const int64_t sizes[][4] = {
        /* rows, k, strips, kblocks */
        {0, 0, 0, 0}, {0, 5, 0, 1}, {5, 0, 1, 0}, {1, 1, 1, 1}, {33, 17, 2, 3}, {64, 16, 2, 2},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        esmm_strip_masks_t p;
        esmm_status_t st = esmm_strip_masks_alloc(&p, sizes[i][0], sizes[i][1]);
        CHECK(st == ESMM_STATUS_SUCCESS && p.strips == sizes[i][2] && p.kblocks == sizes[i][3] &&
                  p.bits != NULL && p.nonfinite != NULL,
              "alloc rows=%ld k=%ld: status %d strips %ld kblocks %ld", (long)sizes[i][0],
              (long)sizes[i][1], (int)st, (long)p.strips, (long)p.kblocks);
        int64_t nonzero = 0;
        for (int64_t b = 0; st == ESMM_STATUS_SUCCESS && b < p.strips * p.kblocks; b++)
            nonzero += p.bits[b] != 0 || p.nonfinite[b] != 0;
        CHECK(nonzero == 0, "alloc rows=%ld k=%ld: buffers not zeroed", (long)sizes[i][0],
              (long)sizes[i][1]);
        esmm_strip_masks_free(&p);
        CHECK(p.bits == NULL && p.nonfinite == NULL && p.strips == 0, "free clears the pattern");
        esmm_strip_masks_free(&p); /* twice is harmless */
    }
    esmm_strip_masks_free(NULL);

    esmm_strip_masks_t p;
    CHECK(esmm_strip_masks_alloc(&p, -1, 4) == ESMM_STATUS_INVALID_VALUE, "negative rows refused");
    CHECK(esmm_strip_masks_alloc(&p, 4, -1) == ESMM_STATUS_INVALID_VALUE, "negative k refused");
    CHECK(esmm_strip_masks_alloc(NULL, 4, 4) == ESMM_STATUS_INVALID_VALUE, "NULL pattern refused");
    CHECK(esmm_strip_masks_alloc(&p, INT64_MAX, INT64_MAX) == ESMM_STATUS_ALLOC_FAILED &&
              p.bits == NULL && p.nonfinite == NULL,
          "overflowing size gives ALLOC_FAILED");
    CHECK(esmm_strip_masks_alloc(&p, INT64_MAX / 2, 64) == ESMM_STATUS_ALLOC_FAILED &&
              p.bits == NULL && p.nonfinite == NULL,
          "impossible size gives ALLOC_FAILED");
}

int main(void)
{
    test_extract();
    test_a_b_duality();
    test_alloc();
    return check_finish();
}

/*
 * GPU pattern extraction against the CPU extraction, byte for byte: both
 * operands, both ops, odd shapes, padded and aligned leading dimensions,
 * misaligned base pointers, densities 0 to 1 with strip-structured and
 * element-wise zeros, signed zeros, NaN, +-Inf and subnormals in otherwise
 * zero slices, a single nonzero. In device memory everything around the
 * matrix (guards, the padding at the end of each row) holds NaN, so a kernel
 * that reads it sets bits the CPU does not. The output buffers are poisoned
 * before each run and guarded after, so an unwritten or stray byte shows.
 * The dense probe's counts, read from the matrix and from the masks, against
 * the CPU probe's. Skipped where no CUDA device exists.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cpu/cpu_backend.h"
#include "cuda/cuda_backend.h"
#include "esmm.h"
#include "test_support.h"
#include "test_support_cuda.h"

/* Floats of NaN before and after the matrix; 128 bytes keep the 16-byte
 * alignment of the allocation, so only the chosen offsets misalign. */
#define GUARD_FLOATS 32
/* Bytes after each output array that must stay poisoned. */
#define OUT_GUARD 64
#define OUT_POISON 0xA5
/* In the element-wise fills, an element of a nonzero slice is zero with
 * this probability. */
#define ELEMENT_ZERO_RATE 0.5

typedef struct {
    int64_t rows, k; /* rows: m for A, n for B */
} shape_t;

/* Whole tiles, one past them, one short, tall, wide, and empty. */
static const shape_t shapes[] = {
    {1, 1},     {2, 9},      {31, 33},   {33, 31},    {32, 8},      {64, 128},
    {65, 129},  {97, 250},   {129, 1025}, {5, 4096},  {4096, 5},    {1000, 1003},
    {4096, 300}, {300, 4096}, {0, 7},     {7, 0},
};

typedef enum {
    FILL_STRIPS,   /* (strip, k) slices nonzero with the density, all-zero otherwise */
    FILL_ELEMENTS, /* as FILL_STRIPS, and half the elements of nonzero slices zero */
    FILL_SPECIALS, /* FILL_STRIPS at 0.5, then NaN/Inf/subnormals, mostly in zero slices */
    FILL_SINGLE,   /* one nonzero at a random place */
    FILL_LAST,     /* one nonzero, the last element */
} fill_kind_t;

typedef struct {
    fill_kind_t kind;
    double density;
    const char *name;
} fill_t;

static const fill_t fills[] = {
    {FILL_STRIPS, 0.0, "zero"},          {FILL_STRIPS, 0.1, "strips 0.1"},
    {FILL_STRIPS, 0.5, "strips 0.5"},    {FILL_STRIPS, 1.0, "dense"},
    {FILL_ELEMENTS, 0.5, "elements 0.5"}, {FILL_ELEMENTS, 1.0, "elements 1.0"},
    {FILL_SPECIALS, 0.5, "specials"},    {FILL_SINGLE, 0.0, "single"},
    {FILL_LAST, 0.0, "last"},
};

typedef struct {
    int round_to_4;  /* ld = cols rounded up to a multiple of 4, then + extra */
    int64_t extra;   /* floats of padding per stored row */
    int64_t offset;  /* floats the matrix starts after its 16-byte aligned slot */
    const char *name;
} layout_case_t;

static const layout_case_t layouts[] = {
    {0, 0, 0, "tight"},
    {0, 1, 0, "ld+1"},
    {0, 3, 0, "ld+3"},
    {1, 4, 0, "ld aligned +4"},
    {1, 0, 1, "ld aligned, base +1"},
    {1, 0, 4, "ld aligned, base +4"},
};

/* ---- helpers ------------------------------------------------------------ */

static float signed_zero(uint64_t *state)
{
    return rng_next(state) & 1 ? -0.0f : 0.0f;
}

/* Uniform in (-1, 1), never zero, from one draw: this test's own
 * distribution, not test_support.h's nonzero_value. */
static float nonzero_uniform(uint64_t *state)
{
    const double u = rng_uniform(state);
    return (float)(u < 0.5 ? u - 0.5 - 0x1.0p-20 : u - 0.5 + 0x1.0p-20);
}

/* ---- the logical operand ------------------------------------------------ */

/* x is rows x k row-major in the extraction's frame: x[i * k + kk] is op(A)(i, kk)
 * for A and op(B)(kk, i) for B. */
static void fill_operand(float *x, int64_t rows, int64_t k, const fill_t *f, uint64_t seed)
{
    uint64_t rng = seed;
    const int64_t strips = esmm_pattern_strips(rows);
    uint8_t *slice_on = host_alloc(strips * k, 1);
    const double density = f->kind == FILL_SPECIALS ? 0.5 : f->density;
    for (int64_t s = 0; s < strips * k; s++)
        slice_on[s] = (uint8_t)(f->kind != FILL_SINGLE && f->kind != FILL_LAST &&
                                rng_uniform(&rng) < density);
    for (int64_t i = 0; i < rows; i++)
        for (int64_t kk = 0; kk < k; kk++) {
            const int on = slice_on[(i / ESMM_PATTERN_STRIP) * k + kk];
            const int element_zero =
                f->kind == FILL_ELEMENTS && rng_uniform(&rng) < ELEMENT_ZERO_RATE;
            x[i * k + kk] = on && !element_zero ? nonzero_uniform(&rng) : signed_zero(&rng);
        }
    if (rows * k > 0 && f->kind == FILL_SINGLE)
        x[rng_below(&rng, rows * k)] = nonzero_uniform(&rng);
    if (rows * k > 0 && f->kind == FILL_LAST)
        x[rows * k - 1] = nonzero_uniform(&rng);
    if (rows * k > 0 && f->kind == FILL_SPECIALS) {
        static const float specials[] = {NAN, -NAN, INFINITY, -INFINITY, 1e-45f, -1e-45f};
        const int64_t count = 1 + rows * k / 200;
        for (int64_t n = 0; n < count; n++) {
            /* Nine in ten go to a zero slice, where they alone decide the bits. */
            const int want_zero_slice = rng_uniform(&rng) < 0.9;
            int64_t at = rng_below(&rng, rows * k);
            for (int tries = 0; want_zero_slice && tries < 16; tries++) {
                if (!slice_on[(at / k / ESMM_PATTERN_STRIP) * k + at % k])
                    break;
                at = rng_below(&rng, rows * k);
            }
            x[at] = specials[rng_below(&rng, (int64_t)COUNT_OF(specials))];
        }
    }
    free(slice_on);
}

/* ---- device buffers ----------------------------------------------------- */

typedef struct {
    float *dev, *host; /* the staged matrix with its guards */
    int64_t cap;       /* floats */
    uint8_t *out_dev, *out_host; /* bits | guard | nonfinite | guard */
    int64_t out_cap;   /* bytes */
    esmm_plan_stats_t *stats_dev; /* the probe's counts */
} buffers_t;

/* Where the stored matrix lies in the staging buffer. */
typedef struct {
    int64_t stored_rows, stored_cols, ld;
    int64_t lead; /* floats before element (0, 0) */
    int64_t len;  /* floats used, guards included */
} layout_t;

static buffers_t buffers_alloc(int64_t rows, int64_t k)
{
    buffers_t b;
    /* Enough for either storage of rows x k under every layout case. */
    b.cap = 2 * GUARD_FLOATS + 8 + (rows + 8) * (k + 8);
    b.out_cap = 2 * (esmm_pattern_strips(rows) * esmm_pattern_kblocks(k) + OUT_GUARD);
    b.dev = device_alloc((size_t)b.cap * sizeof(float));
    b.out_dev = device_alloc((size_t)b.out_cap);
    b.stats_dev = device_alloc(sizeof *b.stats_dev);
    b.host = host_alloc(b.cap, sizeof(float));
    b.out_host = host_alloc(b.out_cap, 1);
    return b;
}

static void buffers_free(buffers_t *b)
{
    device_free(b->dev);
    device_free(b->out_dev);
    device_free(b->stats_dev);
    free(b->host);
    free(b->out_host);
}

/* Stores x (rows x k, extraction frame) as the operand with op would be
 * stored: strips of stored rows (rows x k) or of stored columns (k x rows).
 * Everything else in the staging buffer is NaN. */
static layout_t stage(buffers_t *b, const float *x, int64_t rows, int64_t k, int strips_of_rows,
                      const layout_case_t *lc)
{
    layout_t l;
    l.stored_rows = strips_of_rows ? rows : k;
    l.stored_cols = strips_of_rows ? k : rows;
    const int64_t cols = l.stored_cols > 1 ? l.stored_cols : 1;
    l.ld = (lc->round_to_4 ? (cols + 3) / 4 * 4 : cols) + lc->extra;
    l.lead = GUARD_FLOATS + lc->offset;
    l.len = l.lead + l.stored_rows * l.ld + GUARD_FLOATS;
    for (int64_t i = 0; i < l.len; i++)
        b->host[i] = NAN;
    float *base = b->host + l.lead;
    for (int64_t i = 0; i < rows; i++)
        for (int64_t kk = 0; kk < k; kk++)
            base[strips_of_rows ? i * l.ld + kk : kk * l.ld + i] = x[i * k + kk];
    device_upload(b->dev, b->host, (size_t)l.len * sizeof(float));
    return l;
}

static int64_t first_difference(const uint8_t *got, const uint8_t *want, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (got[i] != want[i])
            return i;
    return -1;
}

/* ---- one run ------------------------------------------------------------ */

static void compare(const char *what, const uint8_t *got, const uint8_t *want, int64_t kblocks,
                    int64_t bytes, const char *label)
{
    const int64_t at = first_difference(got, want, bytes);
    const int64_t shown = at < 0 ? 0 : at;
    CHECK(at < 0, "%s: %s differ first at strip %lld, K block %lld: GPU 0x%02x, CPU 0x%02x",
          label, what, (long long)(shown / kblocks), (long long)(shown % kblocks), got[shown],
          want[shown]);
}

/* The dense probe on the device against the CPU's: the operand is one side
 * of a rows x rows x k product, and its masks (just extracted, bits on the
 * device) stand as the other side's given pattern, so the GPU reads the same
 * blocks once from the matrix and once from the masks. The stats are
 * poisoned first: the probe clears them. */
static void check_probe(buffers_t *b, const float *host_base, const float *dev_base,
                        const layout_t *l, int64_t rows, int64_t k, int is_a,
                        esmm_operation_t op, const uint8_t *dev_bits, const char *label,
                        cudaStream_t stream)
{
    unsigned want_zero = 0, want_slices = 0;
    esmm_cpu_probe(!is_a, op, host_base, l->ld, rows, k, NULL, &want_zero, &want_slices);
    esmm_gemm_problem_t p = {.op_a = ESMM_OP_N, .op_b = ESMM_OP_N, .m = rows, .n = rows, .k = k};
    esmm_masks_t given = {NULL, NULL, NULL, NULL};
    if (is_a) {
        p.op_a = op;
        p.a = dev_base;
        p.lda = l->ld;
        given.b_bits = dev_bits;
    } else {
        p.op_b = op;
        p.b = dev_base;
        p.ldb = l->ld;
        given.a_bits = dev_bits;
    }
    cuda_must(cudaMemsetAsync(b->stats_dev, 0xA5, sizeof *b->stats_dev, stream), "cudaMemsetAsync");
    const esmm_status_t st = esmm_cuda_probe(&p, &given, 1, b->stats_dev, stream);
    CHECK(st == ESMM_STATUS_SUCCESS, "%s: esmm_cuda_probe returned \"%s\"", label,
          esmm_status_string(st));
    esmm_plan_stats_t got;
    cuda_must(cudaStreamSynchronize(stream), "cudaStreamSynchronize after the probe");
    device_download(&got, b->stats_dev, sizeof got);
    const esmm_probe_slot_t total = esmm_probe_totals(&got);
    const int matrix_shift = is_a ? 0 : 16, mask_shift = 16 - matrix_shift;
    const unsigned matrix_zero = total.zeros >> matrix_shift & 0xffffu;
    const unsigned matrix_slices = total.slices >> matrix_shift & 0xffffu;
    const unsigned mask_zero = total.zeros >> mask_shift & 0xffffu;
    const unsigned mask_slices = total.slices >> mask_shift & 0xffffu;
    /* The given side's NaN/Inf go unread here, so it counts as holding some. */
    const unsigned given_side = is_a ? ESMM_OPERAND_B : ESMM_OPERAND_A;
    CHECK(matrix_zero == want_zero && matrix_slices == want_slices && mask_zero == want_zero &&
              mask_slices == want_slices && got.work == 0 && got.blocks_done == 0 &&
              got.decision == ESMM_PLAN_DENSE && got.nonfinite_seen == given_side &&
              got.finite == 0,
          "%s: probe counts %u / %u zero slices from the matrix, %u / %u from the masks, the "
          "CPU %u / %u (work %llu, blocks_done %u, decision %d, NaN/Inf seen %u, finite %u "
          "after clearing)",
          label, matrix_zero, matrix_slices, mask_zero, mask_slices, want_zero, want_slices,
          got.work, got.blocks_done, got.decision, got.nonfinite_seen, got.finite);
    /* Without sampling (a named skipping kernel) it only clears. */
    cuda_must(cudaMemsetAsync(b->stats_dev, 0xA5, sizeof *b->stats_dev, stream), "cudaMemsetAsync");
    CHECK(esmm_cuda_probe(&p, &given, 0, b->stats_dev, stream) == ESMM_STATUS_SUCCESS,
          "%s: esmm_cuda_probe without sampling failed", label);
    cuda_must(cudaStreamSynchronize(stream), "cudaStreamSynchronize after the probe");
    device_download(&got, b->stats_dev, sizeof got);
    const esmm_probe_slot_t none = esmm_probe_totals(&got);
    CHECK(none.zeros == 0 && none.slices == 0 && got.steps_normal == 0 && got.bits_b == 0 &&
              !esmm_probe_dense(&got),
          "%s: without sampling the probe left counts %u / %u, steps %llu, bits %llu", label,
          none.zeros, none.slices, got.steps_normal, got.bits_b);
}

static void check_run(buffers_t *b, const float *x, int64_t rows, int64_t k, int is_a,
                      esmm_operation_t op, const layout_case_t *lc, const char *fill_name,
                      cudaStream_t stream)
{
    /* A op N and B op T store the strips as rows. */
    const int strips_of_rows = is_a ? op == ESMM_OP_N : op == ESMM_OP_T;
    const layout_t l = stage(b, x, rows, k, strips_of_rows, lc);
    const float *host_base = b->host + l.lead;
    const float *dev_base = b->dev + l.lead;

    char label[256];
    snprintf(label, sizeof label, "extract_%s op %s, %s %lld x k %lld, ld %lld (%s), %s",
             is_a ? "a" : "b", op_label(op), is_a ? "m" : "n", (long long)rows, (long long)k,
             (long long)l.ld, lc->name, fill_name);

    esmm_strip_masks_t want;
    CHECK(esmm_strip_masks_alloc(&want, rows, k) == ESMM_STATUS_SUCCESS, "%s: host alloc", label);
    if (is_a)
        esmm_cpu_extract_a(op, host_base, l.ld, rows, k, &want);
    else
        esmm_cpu_extract_b(op, host_base, l.ld, k, rows, &want);
    const int64_t bytes = want.strips * want.kblocks;

    uint8_t *bits = b->out_dev, *nonfinite = b->out_dev + bytes + OUT_GUARD;
    const int64_t out_len = 2 * (bytes + OUT_GUARD);
    cuda_must(cudaMemsetAsync(b->out_dev, OUT_POISON, (size_t)out_len, stream), "cudaMemsetAsync");
    const esmm_status_t st =
        is_a ? esmm_cuda_extract_a(op, dev_base, l.ld, rows, k, bits, nonfinite, stream)
             : esmm_cuda_extract_b(op, dev_base, l.ld, k, rows, bits, nonfinite, stream);
    CHECK(st == ESMM_STATUS_SUCCESS, "%s: returned \"%s\"", label, esmm_status_string(st));
    cuda_must(cudaStreamSynchronize(stream), "cudaStreamSynchronize after the extraction");
    device_download(b->out_host, b->out_dev, (size_t)out_len);

    const uint8_t *got_bits = b->out_host, *got_nonfinite = b->out_host + bytes + OUT_GUARD;
    compare("bits", got_bits, want.bits, want.kblocks, bytes, label);
    compare("nonfinite", got_nonfinite, want.nonfinite, want.kblocks, bytes, label);
    CHECK(bytes_all_equal(got_bits + bytes, OUT_GUARD, OUT_POISON) &&
              bytes_all_equal(got_nonfinite + bytes, OUT_GUARD, OUT_POISON),
          "%s: wrote past the end of bits or nonfinite", label);
    check_probe(b, host_base, dev_base, &l, rows, k, is_a, op, bits, label, stream);
    esmm_strip_masks_free(&want);
}

static void sweep_shape(const shape_t *s, uint64_t seed, cudaStream_t stream)
{
    buffers_t b = buffers_alloc(s->rows, s->k);
    float *x = host_alloc(s->rows * s->k, sizeof(float));
    for (size_t f = 0; f < COUNT_OF(fills); f++) {
        fill_operand(x, s->rows, s->k, &fills[f], seed + f);
        for (int is_a = 0; is_a <= 1; is_a++)
            for (int op = ESMM_OP_N; op <= ESMM_OP_T; op++)
                for (size_t lc = 0; lc < COUNT_OF(layouts); lc++)
                    check_run(&b, x, s->rows, s->k, is_a, (esmm_operation_t)op, &layouts[lc],
                              fills[f].name, stream);
    }
    free(x);
    buffers_free(&b);
}

/* Bad leading dimensions are refused before anything runs. */
static void check_invalid(cudaStream_t stream)
{
    uint8_t *out = device_alloc(64);
    float *x = device_alloc(64 * sizeof(float));
    CHECK(esmm_cuda_extract_a(ESMM_OP_N, x, 3, 2, 4, out, out + 32, stream) ==
              ESMM_STATUS_INVALID_VALUE,
          "extract_a op N with lda < k is refused");
    CHECK(esmm_cuda_extract_b(ESMM_OP_N, x, 3, 2, 4, out, out + 32, stream) ==
              ESMM_STATUS_INVALID_VALUE,
          "extract_b op N with ldb < n is refused");
    CHECK(esmm_cuda_extract_a(ESMM_OP_T, x, 4, -1, 4, out, out + 32, stream) ==
              ESMM_STATUS_INVALID_VALUE,
          "extract_a with m < 0 is refused");
    cuda_must(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    device_free(out);
    device_free(x);
}

int main(void)
{
    if (!cuda_device_present("GPU extraction tests"))
        return check_finish();
    cudaStream_t stream;
    cuda_must(cudaStreamCreate(&stream), "cudaStreamCreate");
    for (size_t i = 0; i < COUNT_OF(shapes); i++)
        sweep_shape(&shapes[i], 0x9a77e000u + 100 * i, stream);
    check_invalid(stream);
    cuda_must(cudaStreamDestroy(stream), "cudaStreamDestroy");
    return check_finish();
}

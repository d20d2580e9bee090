/* GPU CSR products against the CPU backend: every gather path (N, and T with
 * a prepared transpose; B read densely or compressed) must give the bits of
 * the documented CPU order, the scatter paths (T without prepare, and every
 * matrix-vector product, which sum in another order) must stay within the
 * rounding bound of the float64 reference. Outputs are poisoned first and the
 * padding of C must survive. Products wider than one launch's grid (over
 * 2,097,120 columns) run in slices. Also: the device validator against the CPU
 * one, with a lent workspace too small for anything, and leaving the last
 * product's statistics alone. Exits 77 without a GPU. */
#include <stdio.h>
#include <string.h>

#include "csr_support.h"
#include "test_support_cuda.h"

/* Equal bits, or both NaN (the payload of a NaN made by Inf * 0 differs
 * between the CPU and the GPU) and the result written. */
static int same_result(float got, float want)
{
    return (written_nan(got) && isnan(want)) || float_bits(got) == float_bits(want);
}

typedef struct {
    esmm_handle_t h;
    const host_csr_t *w;
    esmm_csr_t descriptor;
    int32_t *d_row_ptr, *d_col_idx;
    float *d_values;
    int prepared_t; /* esmm_csr_prepare(ESMM_OP_T) has run */
} device_csr_t;

static device_csr_t upload_csr(esmm_handle_t h, const host_csr_t *w)
{
    device_csr_t d = {h, w, NULL, NULL, NULL, NULL, 0};
    d.d_row_ptr = device_alloc((size_t)(w->rows + 1) * sizeof(int32_t));
    d.d_col_idx = device_alloc((size_t)max_i64(w->nnz, 1) * sizeof(int32_t));
    device_upload(d.d_row_ptr, w->row_ptr, (size_t)(w->rows + 1) * sizeof(int32_t));
    device_upload(d.d_col_idx, w->col_idx, (size_t)w->nnz * sizeof(int32_t));
    if (w->values != NULL) {
        d.d_values = device_alloc((size_t)max_i64(w->nnz, 1) * sizeof(float));
        device_upload(d.d_values, w->values, (size_t)w->nnz * sizeof(float));
    }
    const esmm_status_t st = esmm_csr_create(h, w->rows, w->cols, w->nnz, d.d_row_ptr,
                                             d.d_col_idx, d.d_values, w->value, &d.descriptor);
    CHECK(st == ESMM_STATUS_SUCCESS, "esmm_csr_create: %s", esmm_status_string(st));
    return d;
}

static void free_csr(device_csr_t *d)
{
    CHECK(esmm_csr_destroy(d->descriptor) == ESMM_STATUS_SUCCESS, "esmm_csr_destroy");
    device_free(d->d_row_ptr);
    device_free(d->d_col_idx);
    if (d->d_values != NULL)
        device_free(d->d_values);
}

/* One product: the inputs, where they live, and what it must give. */
typedef struct {
    esmm_operation_t op;
    int64_t m, n, k, ldb, ldc;
    float alpha, beta;
    float *b, *c0; /* host */
    float *d_b, *d_c;
    float *expected; /* the CPU order's bits, m x ldc */
    const char *label;
} product_t;

/* Runs the path `kernel` ("esmm" for esmm_scsrmm, "mv" for esmm_scsrmv) on a
 * fresh copy of C0 (poisoned when beta == 0) and checks the result: bit for
 * bit when exact, else within the reference bound; the padding untouched. */
static void run_and_check(device_csr_t *d, const product_t *p, const char *kernel, int exact)
{
    const int64_t c_count = p->m * p->ldc;
    float *start = host_alloc(c_count, sizeof *start);
    for (int64_t i = 0; i < c_count; i++)
        start[i] = p->beta == 0.0f ? poison_value() : p->c0[i];
    device_upload(p->d_c, start, (size_t)c_count * sizeof(float));
    esmm_status_t st;
    if (strcmp(kernel, "esmm") == 0)
        st = esmm_scsrmm(d->h, p->op, d->descriptor, p->n, &p->alpha, p->d_b, p->ldb, &p->beta,
                         p->d_c, p->ldc);
    else if (strcmp(kernel, "mv") == 0)
        st = esmm_scsrmv(d->h, p->op, d->descriptor, &p->alpha, p->d_b, &p->beta, p->d_c);
    else
        st = esmm_scsrmm_kernel(d->h, kernel, p->op, d->descriptor, p->n, &p->alpha, p->d_b,
                                p->ldb, &p->beta, p->d_c, p->ldc);
    cuda_must(cudaDeviceSynchronize(), "CSR product");
    CHECK(st == ESMM_STATUS_SUCCESS, "%s %s: %s", p->label, kernel, esmm_status_string(st));
    if (strcmp(kernel, "csr-sparse-b") == 0) {
        /* The report names B's compressed nonzeros only where they were read:
         * more than one column, gathered (op N, or T prepared). */
        const int multiplied = p->m > 0 && p->n > 0 && p->k > 0 && d->w->nnz > 0 &&
                               p->alpha != 0.0f;
        const int compressed = p->n > 1 && (p->op == ESMM_OP_N || d->prepared_t);
        const esmm_path_t want = !multiplied ? ESMM_PATH_NONE
                                 : compressed ? ESMM_PATH_SPARSE
                                              : ESMM_PATH_DENSE;
        esmm_info_t info;
        CHECK(esmm_get_last_info(d->h, &info) == ESMM_STATUS_SUCCESS && info.path == want,
              "%s %s: reported path %d, expected %d", p->label, kernel, (int)info.path,
              (int)want);
    }
    float *got = host_alloc(c_count, sizeof *got);
    device_download(got, p->d_c, (size_t)c_count * sizeof(float));

    int64_t padding_bad = 0, bits_bad = 0, first = -1;
    for (int64_t i = 0; i < p->m; i++)
        for (int64_t j = 0; j < p->ldc; j++) {
            const int64_t at = i * p->ldc + j;
            if (j >= p->n) {
                padding_bad += float_bits(got[at]) != float_bits(start[at]);
            } else if (exact && !same_result(got[at], p->expected[at])) {
                if (bits_bad++ == 0)
                    first = at;
            }
        }
    CHECK(padding_bad == 0, "%s %s: %lld padding elements of C changed", p->label, kernel,
          (long long)padding_bad);
    if (exact)
        CHECK(bits_bad == 0, "%s %s: %lld elements differ from the CPU order, first [%lld] got %a want %a",
              p->label, kernel, (long long)bits_bad, (long long)first,
              first >= 0 ? (double)got[first] : 0.0, first >= 0 ? (double)p->expected[first] : 0.0);
    const csr_mismatch_t mm = csr_reference_compare(d->w, p->op, p->n, p->alpha, p->b, p->ldb,
                                                    p->beta, p->c0, p->ldc, got);
    CHECK(mm.bad == 0, "%s %s: %lld elements off the float64 reference, first [%lld] got %g want %g (tol %g)",
          p->label, kernel, (long long)mm.bad, (long long)mm.first, (double)mm.got, mm.want,
          mm.tolerance);
    free(start);
    free(got);
}

/* Every path of one (W, op, n) case. */
static void check_case(esmm_handle_t h, const host_csr_t *w, esmm_operation_t op, int64_t n,
                       double b_density, int pad, float alpha, float beta, uint64_t seed)
{
    product_t p = {op, csr_op_rows(w, op), n, csr_op_cols(w, op), n + (pad ? 3 : 0),
                   n + (pad ? 5 : 0), alpha, beta, NULL, NULL, NULL, NULL, NULL, NULL};
    char label[160];
    snprintf(label, sizeof label, "W %lldx%lld nnz %lld op %s n %lld B density %.2f pad %d alpha %g beta %g",
             (long long)w->rows, (long long)w->cols, (long long)w->nnz, op_label(op),
             (long long)n, b_density, pad, (double)alpha, (double)beta);
    p.label = label;
    p.b = dense_generate(p.k, n, p.ldb, b_density, seed);
    p.c0 = dense_generate(p.m, n, p.ldc, 1.0, seed + 1);
    p.expected = host_alloc(p.m * p.ldc, sizeof *p.expected);
    memcpy(p.expected, p.c0, (size_t)(p.m * p.ldc) * sizeof(float));
    csr_float_product(w, op, n, alpha, p.b, p.ldb, beta, p.expected, p.ldc);
    p.d_b = device_alloc((size_t)max_i64(p.k * p.ldb, 1) * sizeof(float));
    p.d_c = device_alloc((size_t)max_i64(p.m * p.ldc, 1) * sizeof(float));
    device_upload(p.d_b, p.b, (size_t)(p.k * p.ldb) * sizeof(float));

    device_csr_t d = upload_csr(h, w);
    /* A matrix-vector product gathers in another order; so does any T
     * product before prepare (atomics). */
    const int gathers_in_order = n > 1 && op == ESMM_OP_N;
    run_and_check(&d, &p, "esmm", gathers_in_order);
    if (n > 1) {
        run_and_check(&d, &p, "csr-dense-b", gathers_in_order);
        run_and_check(&d, &p, "csr-sparse-b", gathers_in_order);
    }
    if (n == 1 && p.ldb == 1 && p.ldc == 1) {
        run_and_check(&d, &p, "mv", 0);
        run_and_check(&d, &p, "csr-sparse-b", 0); /* runs as esmm_scsrmv */
    }
    if (op == ESMM_OP_T) {
        const esmm_status_t st = esmm_csr_prepare(h, d.descriptor, ESMM_OP_T);
        CHECK(st == ESMM_STATUS_SUCCESS, "%s: esmm_csr_prepare: %s", label, esmm_status_string(st));
        d.prepared_t = st == ESMM_STATUS_SUCCESS;
        run_and_check(&d, &p, "esmm", n > 1);
        if (n > 1) {
            run_and_check(&d, &p, "csr-dense-b", 1);
            run_and_check(&d, &p, "csr-sparse-b", 1);
        }
    }
    free_csr(&d);
    device_free(p.d_b);
    device_free(p.d_c);
    free(p.b);
    free(p.c0);
    free(p.expected);
}

static void check_products(esmm_handle_t h)
{
    static const struct {
        int64_t rows, cols, per_row, empty_stride;
        unsigned flags;
    } shapes[] = {
        {1, 1, 1, 0, 0},
        {7, 13, 3, 0, CSR_GEN_UNSORTED},
        {97, 61, 9, 5, CSR_GEN_UNSORTED | CSR_GEN_DUPLICATES},
        {128, 200, 40, 0, CSR_GEN_FULL_ROW},
        {301, 257, 17, 7, CSR_GEN_HOMOGENEOUS},
        {50, 50, 0, 0, 0},
        {1000, 997, 33, 0, CSR_GEN_UNSORTED},
        {33, 1, 1, 3, 0},
    };
    /* 4, 32, 44 and 64 take the several-rows-per-warp gather when rows align. */
    static const int64_t widths[] = {1, 2, 4, 31, 32, 44, 64, 100, 128, 130, 257};
    /* 0.2 leaves compressed B rows longer than a pass of the sparse-B gather. */
    static const double densities[] = {0.1, 1.0, 0.0, 0.5, 0.2};
    static const float alphas[] = {1.0f, 0.5f, -1.5f, 0.0f};
    static const float betas[] = {0.0f, 2.0f, 0.0f, 3.0f};
    int index = 0;
    for (size_t s = 0; s < COUNT_OF(shapes); s++) {
        const csr_spec_t spec = {shapes[s].rows, shapes[s].cols, shapes[s].per_row, NULL,
                                 shapes[s].empty_stride, shapes[s].flags, 0.75f, 100 + s};
        host_csr_t w = csr_generate(&spec);
        for (size_t n = 0; n < COUNT_OF(widths); n++)
            for (int op = 0; op < 2; op++, index++)
                check_case(h, &w, (esmm_operation_t)op, widths[n], densities[index % 5],
                           index % 3 == 1, alphas[index % 4], betas[(index / 4) % 4],
                           (uint64_t)index * 7919u);
        csr_free(&w);
    }
}

/* Non-finite weights over zeros of B must give NaN, as a dense product does,
 * on the paths that skip B's zeros too. */
static void check_nonfinite_weights(esmm_handle_t h)
{
    const csr_spec_t spec = {64, 64, 8, NULL, 0, CSR_GEN_UNSORTED, 0.0f, 77};
    host_csr_t w = csr_generate(&spec);
    w.values[3] = INFINITY;
    w.values[40] = -INFINITY;
    w.values[100] = NAN;
    for (int op = 0; op < 2; op++)
        for (int64_t n = 1; n <= 128; n *= 8)
            check_case(h, &w, (esmm_operation_t)op, n, 0.1, 0, 1.0f, 0.0f, 5 + (uint64_t)n);
    csr_free(&w);
}

/* The device validator agrees with the CPU one on broken and valid arrays. */
static void check_validate(esmm_handle_t gpu, esmm_handle_t cpu)
{
    static const struct {
        int64_t rows, cols, nnz;
        int32_t row_ptr[5];
        int32_t col_idx[4];
        int valid;
    } table[] = {
        {4, 3, 4, {0, 1, 2, 3, 4}, {0, 1, 2, 0}, 1},
        {4, 3, 4, {0, 0, 0, 0, 4}, {2, 1, 0, 2}, 1},
        {4, 3, 0, {0, 0, 0, 0, 0}, {0}, 1},
        {4, 3, 4, {1, 1, 2, 3, 4}, {0, 1, 2, 0}, 0},
        {4, 3, 4, {0, 2, 1, 3, 4}, {0, 1, 2, 0}, 0},
        {4, 3, 4, {0, 1, 2, 3, 3}, {0, 1, 2, 0}, 0},
        {4, 3, 4, {0, 1, 9, 3, 4}, {0, 1, 2, 0}, 0},
        {4, 3, 4, {0, 1, 2, 3, 4}, {0, 3, 2, 0}, 0},
        {4, 3, 4, {0, 1, 2, 3, 4}, {0, 1, -1, 0}, 0},
        {4, 3, 4, {0, -1, 2, 3, 4}, {0, 1, 2, 0}, 0},
    };
    int32_t *d_row_ptr = device_alloc(5 * sizeof(int32_t));
    int32_t *d_col_idx = device_alloc(4 * sizeof(int32_t));
    for (size_t t = 0; t < COUNT_OF(table); t++) {
        device_upload(d_row_ptr, table[t].row_ptr, sizeof table[t].row_ptr);
        device_upload(d_col_idx, table[t].col_idx, sizeof table[t].col_idx);
        const esmm_status_t want = table[t].valid ? ESMM_STATUS_SUCCESS : ESMM_STATUS_INVALID_VALUE;
        const esmm_status_t on_cpu = esmm_csr_validate(cpu, table[t].rows, table[t].cols,
                                                       table[t].nnz, table[t].row_ptr,
                                                       table[t].col_idx);
        const esmm_status_t on_gpu = esmm_csr_validate(gpu, table[t].rows, table[t].cols,
                                                       table[t].nnz, d_row_ptr, d_col_idx);
        CHECK(on_cpu == want && on_gpu == want, "validate case %zu: CPU %s, GPU %s, want %s", t,
              esmm_status_string(on_cpu), esmm_status_string(on_gpu), esmm_status_string(want));
        /* esmm_csr_prepare(T) refuses the broken arrays before placing the
         * transpose by them (memcheck catches a write past it). */
        esmm_csr_t d = NULL;
        esmm_status_t st = esmm_csr_create(gpu, table[t].rows, table[t].cols, table[t].nnz,
                                           d_row_ptr, d_col_idx, NULL, 1.0f, &d);
        if (st == ESMM_STATUS_SUCCESS)
            st = esmm_csr_prepare(gpu, d, ESMM_OP_T);
        CHECK(st == want, "validate case %zu: esmm_csr_prepare(T) %s, want %s", t,
              esmm_status_string(st), esmm_status_string(want));
        CHECK(esmm_csr_destroy(d) == ESMM_STATUS_SUCCESS, "validate case %zu: esmm_csr_destroy", t);
    }
    device_free(d_row_ptr);
    device_free(d_col_idx);
}

/* Past 65535 panels of 32 columns, a product runs in slices: every path, the
 * slices' edges included, still gives the CPU order's bits. */
static void check_wide_products(esmm_handle_t h)
{
    const csr_spec_t spec = {5, 4, 2, NULL, 3, CSR_GEN_UNSORTED, 0.0f, 404};
    host_csr_t w = csr_generate(&spec);
    for (int op = 0; op < 2; op++)
        check_case(h, &w, (esmm_operation_t)op, 65535 * 32 + 45, 0.5, op, 1.5f, op ? 0.5f : 0.0f,
                   31 + (uint64_t)op);
    csr_free(&w);
}

/* The validator's verdict goes through memory of its own: a lent workspace
 * of 16 bytes does not make valid arrays look invalid, and the statistics a
 * planned product left in the workspace for esmm_get_last_info survive it. */
static void check_validate_apart(esmm_handle_t gpu)
{
    const int64_t size = 256;
    float *host_a = host_alloc(size * size, sizeof(float));
    float *host_b = host_alloc(size * size, sizeof(float));
    uint64_t rng = 99;
    /* A zero over its first half of k: a planned product skipping half. */
    for (int64_t i = 0; i < size * size; i++) {
        host_a[i] = i % size < size / 2 ? 0.0f : nonzero_value(&rng);
        host_b[i] = nonzero_value(&rng);
    }
    float *a = device_alloc((size_t)(size * size) * sizeof(float));
    float *b = device_alloc((size_t)(size * size) * sizeof(float));
    float *c = device_alloc((size_t)(size * size) * sizeof(float));
    device_upload(a, host_a, (size_t)(size * size) * sizeof(float));
    device_upload(b, host_b, (size_t)(size * size) * sizeof(float));
    const float one = 1.0f, zero = 0.0f;
    CHECK(esmm_set_min_planned_work(gpu, 0) == ESMM_STATUS_SUCCESS, "plan small products");
    esmm_status_t st = esmm_sgemm(gpu, ESMM_OP_N, ESMM_OP_N, size, size, size, &one, a, size, b,
                                  size, &zero, c, size);
    CHECK(st == ESMM_STATUS_SUCCESS, "planned sgemm: %s", esmm_status_string(st));
    esmm_info_t before, after;
    CHECK(esmm_get_last_info(gpu, &before) == ESMM_STATUS_SUCCESS, "last info");
    CHECK(before.density_a > 0.4 && before.density_a < 0.6 && before.work_fraction < 0.6,
          "the product was planned: density of A %g, work %g", before.density_a,
          before.work_fraction);

    const int32_t row_ptr[3] = {0, 1, 2}, col_idx[2] = {1, 0};
    int32_t *d_row_ptr = device_alloc(sizeof row_ptr), *d_col_idx = device_alloc(sizeof col_idx);
    device_upload(d_row_ptr, row_ptr, sizeof row_ptr);
    device_upload(d_col_idx, col_idx, sizeof col_idx);
    st = esmm_csr_validate(gpu, 2, 2, 2, d_row_ptr, d_col_idx);
    CHECK(st == ESMM_STATUS_SUCCESS, "validate: %s", esmm_status_string(st));
    CHECK(esmm_get_last_info(gpu, &after) == ESMM_STATUS_SUCCESS, "last info after validate");
    CHECK(after.work_fraction == before.work_fraction && after.density_a == before.density_a &&
              after.density_b == before.density_b,
          "validate changed the last product's statistics: work %g -> %g, density of A %g -> %g",
          before.work_fraction, after.work_fraction, before.density_a, after.density_a);

    void *small = device_alloc(16);
    CHECK(esmm_set_workspace(gpu, small, 16) == ESMM_STATUS_SUCCESS, "lend 16 bytes");
    st = esmm_csr_validate(gpu, 2, 2, 2, d_row_ptr, d_col_idx);
    CHECK(st == ESMM_STATUS_SUCCESS, "validate with a 16-byte workspace lent: %s",
          esmm_status_string(st));
    st = esmm_csr_validate(gpu, 2, 1, 2, d_row_ptr, d_col_idx);
    CHECK(st == ESMM_STATUS_INVALID_VALUE, "invalid CSR with a 16-byte workspace lent: %s",
          esmm_status_string(st));
    /* The compressed-B path needs more than 16 bytes: refused, and the report
     * of the planned product stays. */
    esmm_csr_t w = NULL;
    CHECK(esmm_csr_create(gpu, 2, 2, 2, d_row_ptr, d_col_idx, NULL, 1.0f, &w) ==
              ESMM_STATUS_SUCCESS,
          "esmm_csr_create 2x2");
    st = esmm_scsrmm_kernel(gpu, "csr-sparse-b", ESMM_OP_N, w, 2, &one, b, size, &zero, c, size);
    CHECK(st == ESMM_STATUS_INVALID_VALUE,
          "compressed-B product with a 16-byte workspace lent: %s, expected INVALID_VALUE",
          esmm_status_string(st));
    CHECK(esmm_get_last_info(gpu, &after) == ESMM_STATUS_SUCCESS &&
              after.work_fraction == before.work_fraction && after.density_a == before.density_a &&
              after.path == before.path,
          "a refused compressed-B product changed the report: path %d -> %d, work %g -> %g",
          (int)before.path, (int)after.path, before.work_fraction, after.work_fraction);
    esmm_csr_destroy(w);
    CHECK(esmm_set_workspace(gpu, NULL, 0) == ESMM_STATUS_SUCCESS &&
              esmm_set_min_planned_work(gpu, ESMM_DEFAULT_MIN_PLANNED_WORK) == ESMM_STATUS_SUCCESS,
          "return to the handle's own workspace and the default planning");
    device_free(small);
    device_free(d_row_ptr);
    device_free(d_col_idx);
    device_free(a);
    device_free(b);
    device_free(c);
    free(host_a);
    free(host_b);
}

int main(void)
{
    if (!cuda_device_present("GPU CSR tests"))
        return check_finish();
    esmm_handle_t gpu = NULL, cpu = NULL;
    CHECK(esmm_create(&gpu, ESMM_BACKEND_CUDA) == ESMM_STATUS_SUCCESS, "esmm_create CUDA");
    CHECK(esmm_create(&cpu, ESMM_BACKEND_CPU) == ESMM_STATUS_SUCCESS, "esmm_create CPU");
    if (gpu == NULL || cpu == NULL)
        return check_finish();
    check_products(gpu);
    check_nonfinite_weights(gpu);
    check_validate(gpu, cpu);
    check_validate_apart(gpu);
    check_wide_products(gpu);
    CHECK(esmm_destroy(gpu) == ESMM_STATUS_SUCCESS, "esmm_destroy CUDA");
    CHECK(esmm_destroy(cpu) == ESMM_STATUS_SUCCESS, "esmm_destroy CPU");
    return check_finish();
}

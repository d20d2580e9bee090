/* The public API: argument checks, handle lifetime, backend choice. Every
 * check happens here, so backends only ever see valid problems. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "api/handle.h"
#include "cpu/cpu_backend.h"
#include "cuda/cuda_backend.h"
#include "esmm.h"
#include "plan/plan.h"

#ifndef ESMM_VERSION_STRING
#define ESMM_VERSION_STRING "0.0.0"
#endif

/* Kernels by name beyond the CUDA dense ladder: each backend's dense kernel
 * (CPU) and its zero-skipping kernel in the three skip modes. Index i of each
 * list skips by mode i (0: dense). */
static const char *const cpu_kernel_names[] = {"cpu", "cpu-skip-a", "cpu-skip-b", "cpu-skip-joint"};
static const char *const cuda_skip_names[] = {NULL, "sparse-a", "sparse-b", "sparse-joint"};
/* The union path forced (the dense kernel over the k the masks leave). */
static const char *const cuda_union_name = "sparse-union";
#define CPU_KERNEL_COUNT 4
#define CUDA_SKIP_COUNT 3

const char *esmm_version(void)
{
    return ESMM_VERSION_STRING;
}

const char *esmm_status_string(esmm_status_t status)
{
    switch (status) {
    case ESMM_STATUS_SUCCESS: return "success";
    case ESMM_STATUS_NOT_INITIALIZED: return "handle not initialized (NULL handle)";
    case ESMM_STATUS_INVALID_VALUE: return "invalid value (size, pointer, operation, leading dimension or name)";
    case ESMM_STATUS_ALLOC_FAILED: return "memory allocation failed";
    case ESMM_STATUS_NO_DEVICE: return "no usable CUDA device";
    case ESMM_STATUS_NOT_SUPPORTED: return "not supported by this backend or build";
    case ESMM_STATUS_EXECUTION_FAILED: return "CUDA execution failed";
    case ESMM_STATUS_INTERNAL_ERROR: return "internal error";
    }
    return "unknown status";
}

esmm_status_t esmm_create(esmm_handle_t *handle, esmm_backend_t backend)
{
    if (handle == NULL)
        return ESMM_STATUS_INVALID_VALUE;
    *handle = NULL;
    if (backend != ESMM_BACKEND_AUTO && backend != ESMM_BACKEND_CPU && backend != ESMM_BACKEND_CUDA)
        return ESMM_STATUS_INVALID_VALUE;

    int have_gpu = backend != ESMM_BACKEND_CPU && esmm_cuda_device_count() > 0;
    if (backend == ESMM_BACKEND_CUDA && !have_gpu)
        return ESMM_STATUS_NO_DEVICE;

    struct esmm_context *ctx = calloc(1, sizeof *ctx);
    if (ctx == NULL)
        return ESMM_STATUS_ALLOC_FAILED;
    ctx->backend = have_gpu ? ESMM_BACKEND_CUDA : ESMM_BACKEND_CPU;
    ctx->min_planned_work = ESMM_DEFAULT_MIN_PLANNED_WORK;
    if (ctx->backend == ESMM_BACKEND_CUDA) {
        esmm_status_t st = esmm_cuda_current_device(&ctx->device);
        if (st != ESMM_STATUS_SUCCESS) {
            free(ctx);
            return st;
        }
        esmm_cuda_forget_launch_cache();
    }
    *handle = ctx;
    return ESMM_STATUS_SUCCESS;
}

esmm_status_t esmm_handle_on_device(esmm_handle_t handle)
{
    if (handle->backend != ESMM_BACKEND_CUDA)
        return ESMM_STATUS_SUCCESS;
    int current = -1;
    const esmm_status_t st = esmm_cuda_current_device(&current);
    if (st != ESMM_STATUS_SUCCESS)
        return st;
    return current == handle->device ? ESMM_STATUS_SUCCESS : ESMM_STATUS_INVALID_VALUE;
}

int esmm_enter_object_device(esmm_backend_t backend, int device, int *previous)
{
    return backend == ESMM_BACKEND_CUDA &&
           esmm_cuda_enter_device(device, previous) == ESMM_STATUS_SUCCESS;
}

void esmm_leave_object_device(int switched, int previous)
{
    if (switched)
        esmm_cuda_leave_device(previous);
}

esmm_status_t esmm_destroy(esmm_handle_t handle)
{
    if (handle == NULL)
        return ESMM_STATUS_SUCCESS;
    int previous = 0;
    const int switched = esmm_enter_object_device(handle->backend, handle->device, &previous);
    esmm_status_t st = ESMM_STATUS_SUCCESS;
    if (handle->backend == ESMM_BACKEND_CUDA)
        st = esmm_cuda_stream_synchronize(handle->stream);
    handle->last.planned = 0; /* no report outlives the handle */
    esmm_workspace_release(handle);
    if (handle->csr_valid_flag != NULL)
        esmm_cuda_free(handle->csr_valid_flag);
    esmm_cuda_event_destroy(handle->timer_start);
    esmm_cuda_event_destroy(handle->timer_stop);
    esmm_cuda_event_destroy(handle->stream_switch);
    free(handle);
    esmm_leave_object_device(switched, previous);
    return st;
}

esmm_status_t esmm_set_min_planned_work(esmm_handle_t handle, int64_t multiply_adds)
{
    if (handle == NULL)
        return ESMM_STATUS_NOT_INITIALIZED;
    if (multiply_adds < 0)
        return ESMM_STATUS_INVALID_VALUE;
    handle->min_planned_work = multiply_adds;
    return ESMM_STATUS_SUCCESS;
}

esmm_status_t esmm_get_min_planned_work(esmm_handle_t handle, int64_t *multiply_adds)
{
    if (handle == NULL)
        return ESMM_STATUS_NOT_INITIALIZED;
    if (multiply_adds == NULL)
        return ESMM_STATUS_INVALID_VALUE;
    *multiply_adds = handle->min_planned_work;
    return ESMM_STATUS_SUCCESS;
}

esmm_status_t esmm_get_backend(esmm_handle_t handle, esmm_backend_t *backend)
{
    if (handle == NULL)
        return ESMM_STATUS_NOT_INITIALIZED;
    if (backend == NULL)
        return ESMM_STATUS_INVALID_VALUE;
    *backend = handle->backend;
    return ESMM_STATUS_SUCCESS;
}

esmm_status_t esmm_set_stream(esmm_handle_t handle, void *stream)
{
    if (handle == NULL)
        return ESMM_STATUS_NOT_INITIALIZED;
    if (handle->backend == ESMM_BACKEND_CPU && stream != NULL)
        return ESMM_STATUS_NOT_SUPPORTED;
    const esmm_status_t on_device = esmm_handle_on_device(handle);
    if (on_device != ESMM_STATUS_SUCCESS)
        return on_device;
    /* Work queued on the old stream may still use the workspace that calls
     * on the new one will reuse, or write what they will read: a pattern
     * extracted there, before the handle has any workspace. */
    if (handle->backend == ESMM_BACKEND_CUDA && stream != handle->stream) {
        esmm_status_t st = handle->stream_switch != NULL
                               ? ESMM_STATUS_SUCCESS
                               : esmm_cuda_event_create(&handle->stream_switch);
        if (st == ESMM_STATUS_SUCCESS)
            st = esmm_cuda_stream_follow(handle->stream_switch, handle->stream, stream);
        if (st != ESMM_STATUS_SUCCESS)
            return st;
    }
    handle->stream = stream;
    return ESMM_STATUS_SUCCESS;
}

esmm_status_t esmm_get_stream(esmm_handle_t handle, void **stream)
{
    if (handle == NULL)
        return ESMM_STATUS_NOT_INITIALIZED;
    if (stream == NULL)
        return ESMM_STATUS_INVALID_VALUE;
    *stream = handle->stream;
    return ESMM_STATUS_SUCCESS;
}

int esmm_kernel_count(esmm_handle_t handle)
{
    if (handle == NULL)
        return 0;
    return handle->backend == ESMM_BACKEND_CUDA ? esmm_cuda_kernel_count() + CUDA_SKIP_COUNT + 1
                                                : CPU_KERNEL_COUNT;
}

const char *esmm_kernel_name(esmm_handle_t handle, int index)
{
    if (handle == NULL || index < 0 || index >= esmm_kernel_count(handle))
        return NULL;
    if (handle->backend == ESMM_BACKEND_CPU)
        return cpu_kernel_names[index];
    const int ladder = esmm_cuda_kernel_count();
    if (index < ladder)
        return esmm_cuda_kernel_name(index);
    return index < ladder + CUDA_SKIP_COUNT ? cuda_skip_names[index - ladder + 1]
                                            : cuda_union_name;
}

esmm_status_t esmm_get_device_info(esmm_handle_t handle, esmm_device_info_t *info)
{
    if (handle == NULL)
        return ESMM_STATUS_NOT_INITIALIZED;
    if (info == NULL)
        return ESMM_STATUS_INVALID_VALUE;
    memset(info, 0, sizeof *info);
    snprintf(info->build_architectures, sizeof info->build_architectures, "%s",
             esmm_cuda_build_architectures());
    if (handle->backend != ESMM_BACKEND_CUDA)
        return ESMM_STATUS_SUCCESS;
    return esmm_cuda_device_info(handle->device, info);
}

/* Checks everything a GEMM call can get wrong and fills the problem. */
static esmm_status_t check_gemm(esmm_handle_t handle, esmm_operation_t op_a, esmm_operation_t op_b,
                                int64_t m, int64_t n, int64_t k, const float *alpha,
                                const float *A, int64_t lda, const float *B, int64_t ldb,
                                const float *beta, float *C, int64_t ldc,
                                esmm_gemm_problem_t *p)
{
    if (handle == NULL)
        return ESMM_STATUS_NOT_INITIALIZED;
    const esmm_status_t on_device = esmm_handle_on_device(handle);
    if (on_device != ESMM_STATUS_SUCCESS)
        return on_device;
    if ((op_a != ESMM_OP_N && op_a != ESMM_OP_T) || (op_b != ESMM_OP_N && op_b != ESMM_OP_T))
        return ESMM_STATUS_INVALID_VALUE;
    if (m < 0 || n < 0 || k < 0 || alpha == NULL || beta == NULL)
        return ESMM_STATUS_INVALID_VALUE;
    /* Leading dimensions are checked even for empty problems, as BLAS does. */
    int64_t a_cols = op_a == ESMM_OP_N ? k : m;
    int64_t b_cols = op_b == ESMM_OP_N ? n : k;
    if (lda < (a_cols > 1 ? a_cols : 1) || ldb < (b_cols > 1 ? b_cols : 1) ||
        ldc < (n > 1 ? n : 1))
        return ESMM_STATUS_INVALID_VALUE;
    /* Byte offsets must fit in int64: the last element of each matrix. */
    int64_t a_rows = op_a == ESMM_OP_N ? m : k;
    int64_t b_rows = op_b == ESMM_OP_N ? k : n;
    if (!esmm_matrix_fits(a_rows, lda) || !esmm_matrix_fits(b_rows, ldb) ||
        !esmm_matrix_fits(m, ldc))
        return ESMM_STATUS_INVALID_VALUE;
    if (m > 0 && n > 0) {
        if (C == NULL)
            return ESMM_STATUS_INVALID_VALUE;
        if (k > 0 && *alpha != 0.0f && (A == NULL || B == NULL))
            return ESMM_STATUS_INVALID_VALUE;
    }
    p->op_a = op_a;
    p->op_b = op_b;
    p->m = m;
    p->n = n;
    p->k = k;
    p->alpha = *alpha;
    p->beta = *beta;
    p->a = A;
    p->lda = lda;
    p->b = B;
    p->ldb = ldb;
    p->c = C;
    p->ldc = ldc;
    return ESMM_STATUS_SUCCESS;
}

esmm_status_t esmm_scale_c(esmm_handle_t handle, int64_t m, int64_t n, float beta, float *c,
                           int64_t ldc)
{
    if (handle->backend == ESMM_BACKEND_CUDA)
        return esmm_cuda_scale_c(m, n, beta, c, ldc, handle->stream);
    for (int64_t i = 0; i < m; i++) {
        float *row = c + i * ldc;
        for (int64_t j = 0; j < n; j++)
            row[j] = beta == 0.0f ? 0.0f : beta * row[j];
    }
    return ESMM_STATUS_SUCCESS;
}

/* The CPU backend's extraction timing: a monotonic clock, so a stepped wall
 * clock never gives a negative ("not measured") time. */
static double wall_ms(void)
{
    return omp_get_wtime() * 1e3;
}

/* What a call asks for: the planner's choice, one dense kernel, the
 * zero-skipping kernel in a given mode, or the union path. */
typedef enum { RUN_PLANNED, RUN_DENSE, RUN_SKIP, RUN_UNION } run_kind_t;

typedef struct {
    run_kind_t kind;
    int dense_index;     /* RUN_DENSE on CUDA: the ladder kernel */
    esmm_skip_by_t skip; /* RUN_SKIP */
    const char *name;
} run_request_t;

/* A pattern passed by the caller must describe this operand. */
static int pattern_fits(esmm_handle_t handle, esmm_pattern_t pattern, int is_b,
                        esmm_operation_t op, int64_t rows, int64_t k)
{
    return pattern == NULL ||
           (pattern->backend == handle->backend && pattern->device == handle->device &&
            pattern->is_b == is_b && pattern->op == op && pattern->rows == rows &&
            pattern->k == k);
}

/* Masks for both operands: the caller's patterns, or extractions into the
 * workspace (timed, with the probe, when the handle asks). With probe set,
 * the dense probe runs first and, where it sends the product to the dense
 * path (esmm_probe_dense of *stats), nothing is extracted: on the CPU the
 * host sees its counts in *stats, on the GPU the extraction reads them and
 * may also write extraction_copy into wide_copy. On the GPU the extraction
 * also marks the operands where it finds NaN/Inf (stats->nonfinite_seen). */
static esmm_status_t gather_masks(esmm_handle_t handle, const esmm_gemm_problem_t *p,
                                  esmm_pattern_t pattern_a, esmm_pattern_t pattern_b,
                                  const esmm_workspace_layout_t *layout, int probe,
                                  esmm_copied_t extraction_copy, float *wide_copy,
                                  esmm_plan_stats_t *stats, esmm_strip_masks_t *a,
                                  esmm_strip_masks_t *b)
{
    uint8_t *ws = handle->workspace;
    const int64_t kblocks = esmm_pattern_kblocks(p->k);
    *a = pattern_a ? pattern_a->masks
                   : (esmm_strip_masks_t){esmm_pattern_strips(p->m), kblocks,
                                          ws + layout->a_bits, ws + layout->a_nonfinite};
    *b = pattern_b ? pattern_b->masks
                   : (esmm_strip_masks_t){esmm_pattern_strips(p->n), kblocks,
                                          ws + layout->b_bits, ws + layout->b_nonfinite};
    const uint8_t *given_a = pattern_a ? pattern_a->masks.bits : NULL;
    const uint8_t *given_b = pattern_b ? pattern_b->masks.bits : NULL;
    const int cuda = handle->backend == ESMM_BACKEND_CUDA;
    double host_start = 0.0;
    esmm_status_t st = ESMM_STATUS_SUCCESS;
    if (handle->timing) {
        if (cuda)
            st = esmm_cuda_event_record(handle->timer_start, handle->stream);
        else
            host_start = wall_ms();
    }
    if (st == ESMM_STATUS_SUCCESS && cuda) {
        const esmm_masks_t given = {given_a, NULL, given_b, NULL};
        st = esmm_cuda_probe(p, &given, probe, stats, handle->stream);
        if (st == ESMM_STATUS_SUCCESS)
            st = esmm_cuda_extract_both(p, pattern_a ? NULL : a->bits, a->nonfinite,
                                        pattern_b ? NULL : b->bits, b->nonfinite,
                                        stats, extraction_copy, wide_copy,
                                        handle->stream);
    } else if (st == ESMM_STATUS_SUCCESS) {
        *stats = (esmm_plan_stats_t){0};
        if (probe) {
            unsigned zero_a = 0, slices_a = 0, zero_b = 0, slices_b = 0;
            esmm_cpu_probe(0, p->op_a, p->a, p->lda, p->m, p->k, given_a, &zero_a, &slices_a);
            esmm_cpu_probe(1, p->op_b, p->b, p->ldb, p->n, p->k, given_b, &zero_b, &slices_b);
            stats->probe[0] = (esmm_probe_slot_t){esmm_probe_pack(zero_a, zero_b),
                                                  esmm_probe_pack(slices_a, slices_b)};
        }
        if (!esmm_probe_dense(stats)) {
            if (pattern_a == NULL)
                st = esmm_extract_masks(handle, 0, p->op_a, p->a, p->lda, p->m, p->k, a);
            if (st == ESMM_STATUS_SUCCESS && pattern_b == NULL)
                st = esmm_extract_masks(handle, 1, p->op_b, p->b, p->ldb, p->n, p->k, b);
        }
    }
    if (st == ESMM_STATUS_SUCCESS && handle->timing) {
        handle->last.timed = 1;
        if (cuda)
            st = esmm_cuda_event_record(handle->timer_stop, handle->stream);
        else
            handle->last.host_extraction_ms = wall_ms() - host_start;
    }
    return st;
}

/* The masked paths: probe, extraction, plan, and the kernel(s), in the
 * workspace laid out as `layout`. */
static esmm_status_t run_masked(esmm_handle_t handle, const esmm_gemm_problem_t *p,
                                const run_request_t *request, esmm_pattern_t pattern_a,
                                esmm_pattern_t pattern_b, esmm_workspace_layout_t layout)
{
    const int cuda = handle->backend == ESMM_BACKEND_CUDA;
    esmm_status_t st = esmm_workspace_reserve(handle, layout.total);
    if (st != ESMM_STATUS_SUCCESS)
        return st;
    esmm_last_call_t *last = &handle->last;
    esmm_plan_stats_t *stats =
        cuda ? (esmm_plan_stats_t *)((uint8_t *)handle->workspace + layout.stats)
             : &last->host_stats;
    /* Only the planner's choice is probed: a named kernel runs as asked. */
    const int planned = request->kind == RUN_PLANNED;
    const int forced_union = request->kind == RUN_UNION;
    float *wide_copy = cuda && layout.wide_copy_bytes > 0
                           ? (float *)((uint8_t *)handle->workspace + layout.wide_copy)
                           : NULL;
    /* The extraction may copy the operands it reads (not a given pattern's). */
    const int given = (pattern_a != NULL ? ESMM_COPY_A : 0) | (pattern_b != NULL ? ESMM_COPY_B : 0);
    const esmm_copied_t extraction_copy =
        planned && wide_copy != NULL
            ? (esmm_copied_t)(esmm_copies_held(p->m, p->n, p->k, p->op_a, p->op_b) & ~given)
            : ESMM_COPY_NONE;
    esmm_strip_masks_t a, b;
    st = gather_masks(handle, p, pattern_a, pattern_b, &layout, planned, extraction_copy,
                      wide_copy, stats, &a, &b);
    if (st != ESMM_STATUS_SUCCESS)
        return st;
    const esmm_skip_by_t skip = request->kind == RUN_SKIP ? request->skip : ESMM_SKIP_BY_BOTH;
    last->planned = 1;
    last->path = ESMM_PATH_SPARSE;
    last->kernel = request->name;
    last->masks = ESMM_MASKS_USED;
    if (cuda) {
        const esmm_masks_t masks = {a.bits, a.nonfinite, b.bits, b.nonfinite};
        last->device_stats = stats;
        float *partials = (float *)((uint8_t *)handle->workspace + layout.partials);
        const esmm_union_list_t list =
            esmm_union_list_at((uint8_t *)handle->workspace + layout.union_list, p->k);
        const esmm_union_mode_t union_mode = forced_union ? ESMM_UNION_FORCED
                                             : planned    ? ESMM_UNION_OFFERED
                                                          : ESMM_UNION_NOT_OFFERED;
        st = esmm_cuda_plan(&masks, p->m, p->n, p->k, p->op_a, p->op_b, skip, extraction_copy,
                            union_mode, list, stats, handle->stream);
        if (st != ESMM_STATUS_SUCCESS)
            return st;
        /* Planned, the skipping kernels and the dense kernel (which also runs
         * the union path) are queued; the plan on the device lets one run. */
        const int gated = planned || forced_union;
        int settled = 0;
        st = esmm_cuda_copy_operand(p, skip, stats, gated, extraction_copy, wide_copy,
                                    &settled, handle->stream);
        if (st == ESMM_STATUS_SUCCESS && !forced_union)
            st = esmm_cuda_run_skip(p, &masks, skip, stats, planned, partials, wide_copy,
                                    &settled, handle->stream);
        if (st == ESMM_STATUS_SUCCESS && gated)
            st = esmm_cuda_run_dense_gated(p, stats, settled, list, partials, wide_copy,
                                           handle->stream);
        const int lists_queued =
            !forced_union &&
            esmm_plan_warp_lists((int)skip, p->m, p->n, p->k, p->op_a, p->op_b) >= 0.0;
        if (st == ESMM_STATUS_SUCCESS)
            st = esmm_cuda_finish_splits(p, partials, lists_queued ? stats : NULL, planned,
                                         handle->stream);
        return st;
    }
    if (!esmm_probe_dense(stats)) {
        esmm_plan_count(&a, &b, p->k, skip, stats);
        if (!planned || esmm_plan_cpu_selects_skip(stats, p->m, p->n, p->k)) {
            last->kernel = cpu_kernel_names[skip];
            return esmm_cpu_skip_sgemm(p, (esmm_skip_mode_t)skip, &a, &b);
        }
    }
    last->path = ESMM_PATH_DENSE;
    last->kernel = cpu_kernel_names[0];
    return esmm_cpu_sgemm(p);
}

static esmm_status_t run_request(esmm_handle_t handle, const esmm_gemm_problem_t *p,
                                 const run_request_t *request, esmm_pattern_t pattern_a,
                                 esmm_pattern_t pattern_b)
{
    esmm_last_call_t *last = &handle->last;
    const esmm_last_call_t fresh = {.path = ESMM_PATH_NONE, .m = p->m, .n = p->n, .k = p->k};
    if (p->m == 0 || p->n == 0) {
        *last = fresh;
        return ESMM_STATUS_SUCCESS;
    }
    if (p->k == 0 || p->alpha == 0.0f) {
        *last = fresh;
        return esmm_scale_c(handle, p->m, p->n, p->beta, p->c, p->ldc);
    }
    const int cuda = handle->backend == ESMM_BACKEND_CUDA;
    /* The skipping kernel lists k as int. */
    const int maskable = !cuda || p->k <= INT32_MAX - 8;
    /* Small products: planning's launches cost more than skipping saves. Narrow
     * ones: the dense kernel reads the operands about once, as the extraction would
     * (to ESMM_NARROW_C_SIDE), or, up to ESMM_NARROW_PLANNED_C_SIDE, the launches
     * outweigh the skipping below ESMM_NARROW_WORK_FACTOR times the minimum. */
    const int gated = cuda && request->kind == RUN_PLANNED && pattern_a == NULL &&
                      pattern_b == NULL && handle->min_planned_work > 0;
    const double work = (double)p->m * (double)p->n * (double)p->k;
    const int64_t side = p->m < p->n ? p->m : p->n;
    const int small = gated && work < (double)handle->min_planned_work;
    const int narrow =
        gated && (side <= ESMM_NARROW_C_SIDE ||
                  (side <= ESMM_NARROW_PLANNED_C_SIDE &&
                   work < ESMM_NARROW_WORK_FACTOR * (double)handle->min_planned_work));
    const int dense = request->kind == RUN_DENSE || !maskable || small || narrow;
    const int dense_index =
        cuda ? (request->kind == RUN_DENSE ? request->dense_index : esmm_cuda_kernel_count() - 1)
             : 0;
    const esmm_workspace_layout_t layout =
        esmm_workspace_layout(p->m, p->n, p->k, p->op_a, p->op_b, cuda);
    /* The top kernel may split k: its partial sums live in the workspace. */
    const size_t need =
        !dense ? layout.total
        : cuda && dense_index == esmm_cuda_kernel_count() - 1 ? esmm_split_bytes(p->m, p->n, p->k)
                                                              : 0;
    /* Refusals come before the report is touched, so it stays as it was. */
    if ((request->kind == RUN_SKIP || request->kind == RUN_UNION) && !maskable)
        return ESMM_STATUS_NOT_SUPPORTED;
    if (handle->workspace_lent && need > handle->workspace_bytes)
        return ESMM_STATUS_INVALID_VALUE; /* the caller's workspace is too small */
    *last = fresh;
    if (!dense)
        return run_masked(handle, p, request, pattern_a, pattern_b, layout);
    last->path = ESMM_PATH_DENSE;
    last->masks = request->kind == RUN_DENSE ? ESMM_MASKS_NONE
                  : !maskable                ? ESMM_MASKS_K_TOO_LONG
                  : small                    ? ESMM_MASKS_SMALL
                                             : ESMM_MASKS_NARROW;
    if (!cuda) {
        last->kernel = cpu_kernel_names[0];
        return esmm_cpu_sgemm(p);
    }
    last->kernel = esmm_cuda_kernel_name(dense_index);
    const esmm_status_t st = esmm_workspace_reserve(handle, need);
    if (st != ESMM_STATUS_SUCCESS)
        return st;
    return esmm_cuda_run_kernel(dense_index, p, handle->workspace, handle->stream);
}

esmm_status_t esmm_sgemm(esmm_handle_t handle, esmm_operation_t op_a, esmm_operation_t op_b,
                         int64_t m, int64_t n, int64_t k, const float *alpha, const float *A,
                         int64_t lda, const float *B, int64_t ldb, const float *beta, float *C,
                         int64_t ldc)
{
    return esmm_sgemm_patterns(handle, op_a, op_b, m, n, k, alpha, A, lda, NULL, B, ldb, NULL,
                               beta, C, ldc);
}

esmm_status_t esmm_sgemm_patterns(esmm_handle_t handle, esmm_operation_t op_a,
                                  esmm_operation_t op_b, int64_t m, int64_t n, int64_t k,
                                  const float *alpha, const float *A, int64_t lda,
                                  esmm_pattern_t pattern_a, const float *B, int64_t ldb,
                                  esmm_pattern_t pattern_b, const float *beta, float *C,
                                  int64_t ldc)
{
    esmm_gemm_problem_t p;
    esmm_status_t st = check_gemm(handle, op_a, op_b, m, n, k, alpha, A, lda, B, ldb, beta, C,
                                  ldc, &p);
    if (st != ESMM_STATUS_SUCCESS)
        return st;
    if (!pattern_fits(handle, pattern_a, 0, op_a, m, k) ||
        !pattern_fits(handle, pattern_b, 1, op_b, n, k))
        return ESMM_STATUS_INVALID_VALUE;
    esmm_pattern_read_copies(&p, pattern_a, pattern_b);
    const run_request_t request = {RUN_PLANNED, 0, ESMM_SKIP_BY_BOTH, NULL};
    return run_request(handle, &p, &request, pattern_a, pattern_b);
}

/* The request a kernel name stands for on the handle's backend. */
static int find_kernel(esmm_handle_t handle, const char *kernel, run_request_t *request)
{
    if (handle->backend == ESMM_BACKEND_CUDA) {
        const int index = esmm_cuda_kernel_find(kernel);
        if (index >= 0) {
            *request = (run_request_t){RUN_DENSE, index, ESMM_SKIP_BY_BOTH, NULL};
            return 1;
        }
    }
    if (handle->backend == ESMM_BACKEND_CUDA && strcmp(kernel, cuda_union_name) == 0) {
        *request = (run_request_t){RUN_UNION, 0, ESMM_SKIP_BY_BOTH, cuda_union_name};
        return 1;
    }
    const char *const *names =
        handle->backend == ESMM_BACKEND_CUDA ? cuda_skip_names : cpu_kernel_names;
    for (int i = 0; i < 4; i++)
        if (names[i] != NULL && strcmp(kernel, names[i]) == 0) {
            *request = (run_request_t){i == 0 ? RUN_DENSE : RUN_SKIP, 0, (esmm_skip_by_t)i,
                                       names[i]};
            return 1;
        }
    return 0;
}

esmm_status_t esmm_sgemm_kernel(esmm_handle_t handle, const char *kernel, esmm_operation_t op_a,
                                esmm_operation_t op_b, int64_t m, int64_t n, int64_t k,
                                const float *alpha, const float *A, int64_t lda, const float *B,
                                int64_t ldb, const float *beta, float *C, int64_t ldc)
{
    esmm_gemm_problem_t p;
    esmm_status_t st = check_gemm(handle, op_a, op_b, m, n, k, alpha, A, lda, B, ldb, beta, C,
                                  ldc, &p);
    if (st != ESMM_STATUS_SUCCESS)
        return st;
    run_request_t request;
    if (kernel == NULL || !find_kernel(handle, kernel, &request))
        return ESMM_STATUS_INVALID_VALUE;
    return run_request(handle, &p, &request, NULL, NULL);
}

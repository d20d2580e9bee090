/* What a handle and a pattern hold, and the API's internal helpers. */
#ifndef ESMM_HANDLE_H
#define ESMM_HANDLE_H

#include <stddef.h>
#include <stdint.h>

#include "csr_problem.h"
#include "cuda/cuda_backend.h"
#include "esmm.h"
#include "patterns/pattern_layout.h"

/* The most elements a matrix may span (rows x leading dimension): every
 * byte offset into it, and the size helpers' rounding of its sides to tiles
 * and strips, then fit in int64 with room to spare. */
#define ESMM_MAX_ELEMENTS (INT64_MAX / 64)

/* Whether a matrix of rows rows ld elements apart stays within ESMM_MAX_ELEMENTS. */
static inline int esmm_matrix_fits(int64_t rows, int64_t ld)
{
    return rows <= 0 || ld <= ESMM_MAX_ELEMENTS / rows;
}

/* What the last product on a handle did, for esmm_get_last_info. */
typedef struct {
    esmm_path_t path;
    const char *kernel;     /* the kernel, or NULL when the plan decides on the device */
    esmm_masks_source_t masks; /* as known on the host; a probe's verdict is read after */
    int64_t m, n, k;
    int planned;            /* stats describe this call */
    int timed;              /* timer events bracket its extractions */
    const esmm_plan_stats_t *device_stats; /* CUDA: in the workspace; NULL once copied */
    esmm_plan_stats_t host_stats;          /* CPU: filled directly; CUDA: copied on release */
    double host_extraction_ms;                  /* CPU: extraction time when timed */
} esmm_last_call_t;

struct esmm_context {
    esmm_backend_t backend; /* ESMM_BACKEND_CPU or ESMM_BACKEND_CUDA */
    int device;             /* CUDA device ordinal the handle was created on */
    void *stream;           /* cudaStream_t; NULL is the legacy default stream */
    void *workspace;        /* device memory on CUDA, host memory on CPU */
    size_t workspace_bytes;
    int workspace_lent;     /* set by esmm_set_workspace: not ours to free */
    int timing;             /* esmm_set_timing */
    int64_t min_planned_work; /* esmm_set_min_planned_work */
    void *timer_start, *timer_stop; /* cudaEvent_t, created on first use */
    void *stream_switch;            /* cudaEvent_t ordering a new stream after the old */
    int *csr_valid_flag;    /* CUDA: esmm_csr_validate's verdict, allocated on first use
                             * (apart from the workspace, so a lent one of any size works
                             * and the last product's statistics stay as they were) */
    esmm_last_call_t last;
};

/* The pattern of one operand (public esmm_pattern_t). */
struct esmm_operand_pattern {
    esmm_backend_t backend;
    int device; /* the extracting handle's: its masks live there on CUDA */
    int is_b;
    esmm_operation_t op;
    int64_t rows, k; /* rows = m for A, n for B */
    esmm_strip_masks_t masks; /* device memory on CUDA, host memory on CPU */
    /* esmm_pattern_keep_copy's copy of an operand stored along k (A with op N,
     * B with op T), k-major with row stride copy_ld, on the masks' side; or
     * NULL. Read in place of the operand (esmm_pattern_read_copies). */
    float *copy;
    int64_t copy_ld;
};

/* *p reading the copies its patterns keep (either may be NULL): A's as op(A)
 * = copy^T, B's as op(B) = copy. The same elements of op(A) and op(B), so
 * every path makes the same products in the same order of k. */
void esmm_pattern_read_copies(esmm_gemm_problem_t *p, esmm_pattern_t pattern_a,
                              esmm_pattern_t pattern_b);

/* Where each piece of a product's workspace lives (byte offsets): the plan's
 * statistics, both operands' masks and, with cuda set, the union path's list
 * (esmm_union_list_bytes), the partial sums when the product splits k
 * (esmm_split_bytes) and the k-major copies of operands that run along k,
 * read by the paths whose rules name them (esmm_wide_copy_floats, B's at
 * esmm_wide_copy_b_at; wide_copy_bytes 0 when no path copies). */
typedef struct {
    size_t stats, a_bits, a_nonfinite, b_bits, b_nonfinite, union_list, partials, wide_copy;
    size_t wide_copy_bytes, total;
} esmm_workspace_layout_t;

esmm_workspace_layout_t esmm_workspace_layout(int64_t m, int64_t n, int64_t k,
                                              esmm_operation_t op_a, esmm_operation_t op_b,
                                              int cuda);

/* Makes the handle's workspace at least `bytes` long (allocating, and on CUDA
 * synchronising the device, only when it grows). */
esmm_status_t esmm_workspace_reserve(esmm_handle_t handle, size_t bytes);
void esmm_workspace_release(esmm_handle_t handle);

/* Extracts op(A) (is_b = 0: rows = m) or op(B) (is_b = 1: rows = n) masks into
 * `masks` (buffers already sized) on the handle's backend. */
esmm_status_t esmm_extract_masks(esmm_handle_t handle, int is_b, esmm_operation_t op,
                                 const float *x, int64_t ld, int64_t rows, int64_t k,
                                 esmm_strip_masks_t *masks);

/* A CSR descriptor (public esmm_csr_t): the caller's arrays, and W's
 * transpose once esmm_csr_prepare(T) built it (memory of the backend). */
struct esmm_csr_matrix {
    esmm_backend_t backend;
    int device; /* the creating handle's: its transpose lives there on CUDA */
    esmm_csr_view_t w;
    int has_transpose;
    esmm_csr_view_t transpose;
    void *transpose_memory; /* one block holding the transpose's arrays */
};

/* ESMM_STATUS_SUCCESS where calls may run on the handle now: always on the
 * CPU backend; on CUDA while the device it was created on is current, as
 * esmm_create asks (on another, its memory and streams belong to the wrong
 * device, and a kernel there would fault); else ESMM_STATUS_INVALID_VALUE. */
esmm_status_t esmm_handle_on_device(esmm_handle_t handle);

/* For the calls a caller may make with any device current (the destroy
 * functions and esmm_pattern_density): makes the device of an object of
 * `backend` current and returns whether it did; the call then ends with
 * esmm_leave_object_device(switched, previous), which makes the caller's
 * device current again. */
int esmm_enter_object_device(esmm_backend_t backend, int device, int *previous);
void esmm_leave_object_device(int switched, int previous);

/* C = beta * C (beta == 0 writes zeros without reading C), m x n: the answer
 * when there is no product to add. */
esmm_status_t esmm_scale_c(esmm_handle_t handle, int64_t m, int64_t n, float beta, float *c,
                           int64_t ldc);

#endif

/*
 * esmm — FP32 matrix products that skip the work zeros make unnecessary.
 *
 * Conventions (cuBLAS-like, but row-major):
 *   - Every matrix is row-major: element (i, j) of a matrix X with leading
 *     dimension ldx lives at X[i * ldx + j]. ldx must be >= the number of
 *     columns of X as stored (at least 1).
 *   - op(X) is X (ESMM_OP_N) or its transpose (ESMM_OP_T). For
 *     C = alpha * op(A) * op(B) + beta * C with op(A) m x k and op(B) k x n:
 *       A is stored m x k (lda >= k) for N, k x m (lda >= m) for T;
 *       B is stored k x n (ldb >= n) for N, n x k (ldb >= k) for T;
 *       C is stored m x n (ldc >= n).
 *   - alpha and beta are host pointers. BLAS semantics: beta == 0 ignores what
 *     C held (NaN included); k == 0 gives C = beta * C; m == 0 or n == 0 is a
 *     valid no-op and no pointer is read.
 *   - On the CUDA backend matrix pointers are device pointers and calls are
 *     asynchronous on the handle's stream; on the CPU backend they are host
 *     pointers and calls return when the result is in C.
 *   - Every misuse returns a status and leaves the handle usable. The library
 *     never aborts on user input.
 *   - A handle may be used by one host thread at a time. Distinct handles are
 *     independent and may be used concurrently.
 */
#ifndef ESMM_H
#define ESMM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ESMM_VERSION_MAJOR 0
#define ESMM_VERSION_MINOR 1
#define ESMM_VERSION_PATCH 0

typedef enum {
    ESMM_STATUS_SUCCESS = 0,
    ESMM_STATUS_NOT_INITIALIZED = 1,  /* NULL handle */
    ESMM_STATUS_INVALID_VALUE = 2,    /* bad size, pointer, op, leading dimension or name */
    ESMM_STATUS_ALLOC_FAILED = 3,     /* host or device memory could not be allocated */
    ESMM_STATUS_NO_DEVICE = 4,        /* CUDA backend asked for, but no usable GPU */
    ESMM_STATUS_NOT_SUPPORTED = 5,    /* valid request this backend or build cannot do */
    ESMM_STATUS_EXECUTION_FAILED = 6, /* a CUDA launch or call failed */
    ESMM_STATUS_INTERNAL_ERROR = 7
} esmm_status_t;

typedef enum {
    ESMM_BACKEND_AUTO = 0, /* CUDA when a usable GPU is present, else CPU */
    ESMM_BACKEND_CPU = 1,
    ESMM_BACKEND_CUDA = 2
} esmm_backend_t;

typedef enum {
    ESMM_OP_N = 0,
    ESMM_OP_T = 1
} esmm_operation_t;

typedef struct esmm_context *esmm_handle_t;

/* "MAJOR.MINOR.PATCH". */
const char *esmm_version(void);

/* A short, constant, human-readable description; never NULL. */
const char *esmm_status_string(esmm_status_t status);

/* Creates a handle on the requested backend. On failure *handle is NULL. */
esmm_status_t esmm_create(esmm_handle_t *handle, esmm_backend_t backend);

/* Releases the handle and its workspace. NULL is accepted and ignored. On the
 * CUDA backend it waits for work queued on the handle's stream. */
esmm_status_t esmm_destroy(esmm_handle_t handle);

/* The backend the handle runs on (never ESMM_BACKEND_AUTO). */
esmm_status_t esmm_get_backend(esmm_handle_t handle, esmm_backend_t *backend);

/* CUDA backend: the cudaStream_t work is queued on (NULL: the legacy default
 * stream). On the CPU backend only NULL is accepted. */
esmm_status_t esmm_set_stream(esmm_handle_t handle, void *stream);
esmm_status_t esmm_get_stream(esmm_handle_t handle, void **stream);

/* C = alpha * op(A) * op(B) + beta * C. */
esmm_status_t esmm_sgemm(esmm_handle_t handle,
                         esmm_operation_t op_a, esmm_operation_t op_b,
                         int64_t m, int64_t n, int64_t k,
                         const float *alpha,
                         const float *A, int64_t lda,
                         const float *B, int64_t ldb,
                         const float *beta,
                         float *C, int64_t ldc);

/*
 * Kernels by name, for benchmarks and tests: the same product as esmm_sgemm
 * through one named kernel of the handle's backend. esmm_kernel_count and
 * esmm_kernel_name list them (index 0 .. count-1); an unknown name gives
 * ESMM_STATUS_INVALID_VALUE.
 */
int esmm_kernel_count(esmm_handle_t handle);
const char *esmm_kernel_name(esmm_handle_t handle, int index);
esmm_status_t esmm_sgemm_kernel(esmm_handle_t handle, const char *kernel,
                                esmm_operation_t op_a, esmm_operation_t op_b,
                                int64_t m, int64_t n, int64_t k,
                                const float *alpha,
                                const float *A, int64_t lda,
                                const float *B, int64_t ldb,
                                const float *beta,
                                float *C, int64_t ldc);

/* Describes the device a CUDA handle runs on; on the CPU backend the device
 * fields are empty/zero. */
typedef struct {
    char device_name[256];
    int multiprocessors;
    int compute_capability; /* 90 for sm_90 */
    size_t global_memory_bytes;
    size_t l2_bytes;
    int runtime_version; /* 13000 for CUDA 13.0 */
    int driver_version;
    char build_architectures[128]; /* the CUDA architectures compiled in */
} esmm_device_info_t;

esmm_status_t esmm_get_device_info(esmm_handle_t handle, esmm_device_info_t *info);

#ifdef __cplusplus
}
#endif

#endif /* ESMM_H */

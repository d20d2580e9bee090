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
 *   - alpha and beta are host pointers and must not be NULL. BLAS semantics:
 *     beta == 0 ignores what C held (NaN included); k == 0 or alpha == 0 gives
 *     C = beta * C without reading A or B; m == 0 or n == 0 is a valid no-op
 *     and no matrix pointer is read.
 *   - On the CUDA backend matrix pointers are device pointers and calls are
 *     asynchronous on the handle's stream; on the CPU backend they are host
 *     pointers and calls return when the result is in C.
 *   - Every misuse returns a status and leaves the handle usable. The library
 *     never aborts on user input it checks (CSR arrays it is told to trust
 *     are the exception: see esmm_csr_t).
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

/* Creates a handle on the requested backend. On failure *handle is NULL. A
 * CUDA handle works on the device current when it is created: as with cuBLAS,
 * that device must be current in every call on the handle and on the patterns
 * and CSR descriptors made with it. A call made with another device current
 * returns ESMM_STATUS_INVALID_VALUE and does nothing. The destroy functions
 * and esmm_pattern_density are the exception: they make the object's device
 * current themselves, and the caller's again before they return, so they may
 * be called with any device current (a garbage collector's, say). */
esmm_status_t esmm_create(esmm_handle_t *handle, esmm_backend_t backend);

/* Releases the handle and its workspace. NULL is accepted and ignored. On the
 * CUDA backend it waits for work queued on the handle's stream. */
esmm_status_t esmm_destroy(esmm_handle_t handle);

/* The backend the handle runs on (never ESMM_BACKEND_AUTO). */
esmm_status_t esmm_get_backend(esmm_handle_t handle, esmm_backend_t *backend);

/* CUDA backend: the cudaStream_t work is queued on (NULL: the legacy default
 * stream). On the CPU backend only NULL is accepted. Calls on the new stream
 * reuse the handle's workspace and may read what calls on the old one wrote
 * (a pattern), so a change orders the work queued on the new stream from then
 * on after the work already queued on the old one (on the device, without
 * waiting); while either stream is being captured into a
 * CUDA graph no such order can be added, and the caller must keep the two
 * apart. */
esmm_status_t esmm_set_stream(esmm_handle_t handle, void *stream);
esmm_status_t esmm_get_stream(esmm_handle_t handle, void **stream);

/* C = alpha * op(A) * op(B) + beta * C. C must not overlap A or B (as in
 * BLAS, the result is then undefined), here and in the CSR products (B, x
 * and W's arrays against C and y). A matrix whose rows times leading
 * dimension exceeds INT64_MAX / 64 (2^57 - 1) elements gives
 * ESMM_STATUS_INVALID_VALUE, as does any other size, here and in the other
 * calls, whose byte offsets could overflow. On the GPU, a C that needs more
 * than 2^31 - 1 thread blocks (over 2^31 tiles of 128 x 128) gives
 * ESMM_STATUS_NOT_SUPPORTED. */
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
 * ESMM_STATUS_INVALID_VALUE. On CUDA: the dense ladder ("pipelined" last),
 * the zero-skipping kernel skipping by A's, B's or both operands' masks
 * ("sparse-a", "sparse-b", "sparse-joint"), and "sparse-union", the dense
 * kernel over only the k that some strip of op(A) and some strip of op(B)
 * need (the union path, below).
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

/*
 * Zero-skipping (see README, "How esmm skips zeros").
 *
 * esmm_sgemm extracts, on the handle's backend, one byte per (32-row strip of
 * op(A), 8-column block of k) and per (8-row block of k, 32-column strip of
 * op(B)) saying which k columns/rows are nonzero, and skips the products those
 * masks prove to be zero. Results are exact: they equal the dense path's bit
 * for bit, with one exception on the GPU, whose kernels sum fused
 * multiply-adds: a sum that products too small for FP32 (under 7e-46)
 * round to -0 turns +0 when the dense path adds a zero product, so a C value
 * that is zero may carry the other sign than the dense path's (the two
 * compare equal; seen on the H100 wherever an A strip skips the zero
 * products that follow such a sum). The CPU backend rounds each product first
 * and has no such case.
 * First it samples 256 such blocks of each operand (of a pattern given
 * instead, its bytes); where the shares of zero slices in the two samples add
 * up to less than 1/5, skipping cannot pay, and the call runs the dense kernel
 * without extracting anything. The sample is fixed by the shape, so a product always
 * takes the same path on the same data.
 * On the GPU the plan may also take the union path: where whole columns of
 * op(A) or rows of op(B) are zero in every strip (dead channels), the dense
 * kernel's tiles run over only the other k, listed once per call; a k is
 * kept wherever a NaN or an infinity meets the other operand's zeros.
 *
 * Operand patterns can be extracted once and reused while the operand does not
 * change (for example weights): the caller promises the data is unchanged.
 * A pattern may be used by any handle of the backend (and, on CUDA, the device)
 * that extracted it, with the operand, op and shape it was extracted from.
 * What can be checked is: a different backend or device, operand slot (A or
 * B), op or shape gives ESMM_STATUS_INVALID_VALUE. The data cannot be: a
 * pattern used with other data (another matrix of the shape, another leading
 * dimension, or values changed since, a value turned NaN or Inf included)
 * gives an undefined result, though never an access out of bounds.
 * esmm_pattern_extract_* allocate (and on CUDA synchronise the device): keep
 * them out of hot loops.
 */
typedef struct esmm_operand_pattern *esmm_pattern_t;

/* Patterns of op(A) (m x k) and op(B) (k x n). Asynchronous on the CUDA
 * backend (ordered on the handle's stream). */
esmm_status_t esmm_pattern_extract_a(esmm_handle_t handle, esmm_operation_t op_a,
                                     int64_t m, int64_t k, const float *A, int64_t lda,
                                     esmm_pattern_t *pattern);
esmm_status_t esmm_pattern_extract_b(esmm_handle_t handle, esmm_operation_t op_b,
                                     int64_t k, int64_t n, const float *B, int64_t ldb,
                                     esmm_pattern_t *pattern);
/* Fraction of (strip, k) slices that hold a nonzero, in [0, 1]. Waits for the
 * extraction to finish. */
esmm_status_t esmm_pattern_density(esmm_pattern_t pattern, double *density);
/* NULL is accepted. Waits for work that may still use the pattern. */
esmm_status_t esmm_pattern_destroy(esmm_pattern_t pattern);
/*
 * Makes the pattern keep a copy of its operand laid out along m (A) or n
 * (B), where the operand is stored along k: op(A) = A, or op(B) = B^T (the
 * weights of a linear layer, x @ W^T). esmm_sgemm_patterns given the
 * pattern then reads that copy in place of the operand it is passed, so no
 * call copies or transposes it again (the kernels read an operand stored
 * along k more slowly; README, item 17). Results are those of the call
 * without the copy, under esmm_sgemm's exactness rule above (the product
 * is planned as one with that operand along m or n, so another kernel may
 * run). X and ld are the operand the pattern was extracted from (same op and
 * shape); the caller's promise that the data do not change covers the copy
 * too, which is then read in place of whatever operand is passed (the call
 * still checks that one as esmm_sgemm does: it may not be NULL). The copy takes
 * about as much memory as the operand (its rows padded to 4 floats) on the
 * pattern's backend and device, until esmm_pattern_destroy; a second call
 * replaces it (freeing the first: a CUDA graph that captured a product
 * reading it must not be replayed after that, and no other handle may be
 * using the pattern meanwhile). An operand already stored
 * along m or n, or an empty one, gets no copy, and the call succeeds. On the
 * CPU backend the copy changes no speed (its kernel packs both operands
 * whatever their layout). Allocates (not while a stream captures) and, on
 * CUDA, writes the copy asynchronously on the handle's stream: another
 * stream that uses the pattern must be ordered after it. A NULL handle
 * gives ESMM_STATUS_NOT_INITIALIZED; a NULL pattern, a handle of another
 * backend or device, or X and ld unfit for the pattern's operand,
 * ESMM_STATUS_INVALID_VALUE; memory the copy cannot have,
 * ESMM_STATUS_ALLOC_FAILED.
 */
esmm_status_t esmm_pattern_keep_copy(esmm_handle_t handle, esmm_pattern_t pattern,
                                     const float *X, int64_t ld);

/* esmm_sgemm with patterns extracted earlier; either may be NULL (extracted
 * by the call). */
esmm_status_t esmm_sgemm_patterns(esmm_handle_t handle,
                                  esmm_operation_t op_a, esmm_operation_t op_b,
                                  int64_t m, int64_t n, int64_t k,
                                  const float *alpha,
                                  const float *A, int64_t lda, esmm_pattern_t pattern_a,
                                  const float *B, int64_t ldb, esmm_pattern_t pattern_b,
                                  const float *beta,
                                  float *C, int64_t ldc);

typedef enum {
    ESMM_PATH_NONE = 0,  /* nothing to multiply: empty problem, k == 0 or alpha == 0 */
    ESMM_PATH_DENSE = 1, /* the dense kernel: not enough zeros to pay for skipping */
    ESMM_PATH_SPARSE = 2 /* the zero-skipping kernel */
} esmm_path_t;

/* Whether the last call used masks of zero blocks, and if not, why not
 * (esmm_info_t.masks). */
typedef enum {
    ESMM_MASKS_NONE = 0,        /* nothing to multiply, or a named dense kernel ran */
    ESMM_MASKS_USED = 1,        /* extracted by the call, or given as patterns */
    ESMM_MASKS_PROBE_DENSE = 2, /* not extracted: the dense probe found too few zero
                                   slices to skip, and the dense kernel ran */
    ESMM_MASKS_SMALL = 3,       /* not extracted: on the GPU, a product under the
                                   handle's min planned work (esmm_set_min_planned_work)
                                   runs the dense kernel without planning */
    ESMM_MASKS_K_TOO_LONG = 4,  /* not extracted: on the GPU, k past INT32_MAX - 8, which
                                   the zero-skipping kernel cannot list; dense */
    ESMM_MASKS_NARROW = 5       /* not extracted: on the GPU, C at most ESMM_NARROW_C_SIDE
                                   wide or tall, or at most ESMM_NARROW_PLANNED_C_SIDE
                                   below ESMM_NARROW_WORK_FACTOR times the min planned
                                   work, runs the dense kernel without planning
                                   (esmm_set_min_planned_work) */
} esmm_masks_source_t;

typedef struct {
    esmm_path_t path;
    const char *kernel;      /* name of the kernel that ran */
    double density_a;        /* fraction of op(A)'s (strip, k) slices with a nonzero;
                                < 0 when the call used no masks (see masks) */
    double density_b;        /* same for op(B)'s (k, strip) slices */
    double work_fraction;    /* fraction of the dense (strip pair, k) work that ran */
    double extraction_ms;    /* time of the probe and both extractions (with the k-major
                                copy an extraction may write); < 0 when not measured */
    const char *form;        /* the zero-skipping kernel's form on the GPU, "pair warps",
                                "strip warps", "warp lists", or "union" (the dense
                                kernel over the listed k; work_fraction is then the
                                share of k listed) (README, How esmm skips zeros);
                                NULL for other paths and on the CPU backend */
    esmm_masks_source_t masks; /* whether masks were used, or why none were */
} esmm_info_t;

/*
 * What the last esmm_sgemm / esmm_sgemm_patterns / esmm_sgemm_kernel call on
 * this handle did, or the last CSR product (esmm_scsrmm, esmm_scsrmv,
 * esmm_scsrmm_kernel) where one came after it: that reports its kernel and
 * ESMM_PATH_SPARSE where it went through B's compressed nonzeros
 * ("csr-sparse-b" with more than one column, gathered: op(W) = W, or W^T
 * prepared), ESMM_PATH_DENSE for the other paths (ESMM_PATH_NONE
 * with nothing to multiply), no densities (< 0) and ESMM_MASKS_NONE. A call
 * refused (for its arguments, or a lent workspace too small) leaves the
 * report as it was; one that fails later (memory it could not have, a
 * launch, or a C past the GPU's grid: ESMM_STATUS_NOT_SUPPORTED) leaves it
 * describing that call, which did not complete. The figures live
 * on the device: this call waits for the
 * handle's stream, so keep it out of hot loops. extraction_ms is measured only
 * when esmm_set_timing(handle, 1) was called (it adds events to the stream).
 * The report outlives the call's workspace: the handle keeps a copy of the
 * figures when it frees its own, and reads a lent one where it is (keep it
 * valid until then).
 */
esmm_status_t esmm_get_last_info(esmm_handle_t handle, esmm_info_t *info);
esmm_status_t esmm_set_timing(esmm_handle_t handle, int enable);

/*
 * On the CUDA backend, esmm_sgemm runs a product of fewer than this many
 * multiply-adds (m * n * k) on the dense kernel straight away, without the
 * probe, the extractions and the plan: their launches cost more there than
 * skipping zeros can save (on the H100 the dense kernel alone was faster at
 * 640^3 and below at every density, planning faster from 768^3 at a quarter
 * of the blocks nonzero or fewer). esmm_get_last_info then reports the dense
 * path with no densities, as for a product the probe sent dense. Products
 * given a pattern (esmm_sgemm_patterns) are planned at any size, as is every
 * product on the CPU backend, where planning launches nothing. The default
 * is ESMM_DEFAULT_MIN_PLANNED_WORK; 0 plans every product. A negative value
 * gives ESMM_STATUS_INVALID_VALUE.
 */
#define ESMM_DEFAULT_MIN_PLANNED_WORK ((int64_t)1 << 28)
/*
 * Unless the minimum is 0, a product whose C has at most ESMM_NARROW_C_SIDE
 * rows or columns also runs the dense kernel without planning (masks
 * ESMM_MASKS_NARROW): the dense kernel then reads op(A) and op(B) about once,
 * as their extraction alone would, so skipping cannot repay it (on the H100,
 * 4096 x 32 x 4096 took 0.051 ms dense and 0.061-0.083 ms planned with
 * either or both operands at an eighth or a quarter of the blocks nonzero).
 * So does one whose C has at most ESMM_NARROW_PLANNED_C_SIDE rows or columns
 * and fewer than ESMM_NARROW_WORK_FACTOR times the minimum multiply-adds: on
 * dense data planning cost such products 34-57% (4096 x 64 x 4096: 0.096 ms
 * against 0.070) and saved 6% with both operands at an eighth of the blocks
 * nonzero, while past that work it cost 8-21% on dense data and saved a
 * third on sparse (8192 x 48 x 8192: 0.164 against 0.246 ms).
 */
#define ESMM_NARROW_C_SIDE 32
#define ESMM_NARROW_PLANNED_C_SIDE 64
#define ESMM_NARROW_WORK_FACTOR 8
esmm_status_t esmm_set_min_planned_work(esmm_handle_t handle, int64_t multiply_adds);
esmm_status_t esmm_get_min_planned_work(esmm_handle_t handle, int64_t *multiply_adds);

/*
 * Workspace (the operands' masks and, on CUDA, the union path's list of k,
 * about 4.3 bytes per k; for a product with few tiles of C and a long k,
 * which the kernels split along k, its partial sums; and for op(A) = A or
 * op(B) = B^T a k-major copy of that operand, which the zero-skipping and
 * dense kernels read instead of transposing it on the way in, where C's
 * other side is at least 1760, or for the zero-skipping kernels at least 440
 * where both hold, as in a linear layer's x @ W^T, and m n k is at least
 * 2^32): the
 * handle owns one that grows on demand (a growth allocates and so synchronises
 * the device: do a first call of each size and ops before capturing a CUDA graph).
 * Alternatively the caller lends one: esmm_workspace_size says how many bytes
 * a problem needs at most (the CUDA backend's need for the ops that need the
 * most; the CPU backend needs less; 0 for negative sizes and where m or n is
 * 0, SIZE_MAX for sizes too large for any call), and esmm_set_workspace(handle, ptr,
 * bytes) makes calls use it (ptr = NULL, bytes = 0 returns to the handle's
 * own). A lent workspace is
 * device memory on the CUDA backend, 256-byte aligned (cudaMalloc's is; else
 * esmm_set_workspace returns ESMM_STATUS_INVALID_VALUE), and host memory on
 * the CPU backend, and must stay valid while work queued on it runs; a
 * product that needs more than was lent returns ESMM_STATUS_INVALID_VALUE.
 * A lent workspace serves one call at a time: handles used concurrently each
 * need their own.
 */
size_t esmm_workspace_size(int64_t m, int64_t n, int64_t k);
esmm_status_t esmm_set_workspace(esmm_handle_t handle, void *workspace, size_t bytes);

/*
 * CSR sparse x dense products.
 *
 * W (rows x cols) is held in CSR: row_ptr[rows + 1] and col_idx[nnz] (int32),
 * and either values[nnz] or, when values is NULL, one weight `value` shared by
 * every stored entry. The arrays are the caller's (device memory on the CUDA
 * backend, host memory on the CPU backend); a descriptor only borrows them and
 * they must stay valid while it is used. A descriptor serves the handles of
 * the backend, and on CUDA the device, of the handle that created it; another
 * handle gives ESMM_STATUS_INVALID_VALUE.
 *
 * What the products assume, and esmm_csr_validate checks: row_ptr[0] == 0,
 * row_ptr non-decreasing, row_ptr[rows] == nnz, 0 <= col_idx[e] < cols.
 * Column indices may be in any order within a row, and entries repeating a
 * (row, column) pair are summed. The products themselves do not check W:
 * validate input that is not trusted first. Invalid CSR is undefined
 * behaviour, as in cuSPARSE: a product may read or write out of bounds (the
 * CPU backend's W^T product without esmm_csr_prepare writes through a bad
 * column index). rows, cols and nnz are at most INT32_MAX.
 *
 * Stored entries behave as in a dense product: a stored weight that is NaN or
 * Inf times a zero of B gives NaN, even on the paths that skip B's zeros.
 */
typedef struct esmm_csr_matrix *esmm_csr_t;

esmm_status_t esmm_csr_create(esmm_handle_t handle, int64_t rows, int64_t cols, int64_t nnz,
                              const int32_t *row_ptr, const int32_t *col_idx,
                              const float *values, float value, esmm_csr_t *W);
/* NULL is accepted. Waits for work that may still use the descriptor. */
esmm_status_t esmm_csr_destroy(esmm_csr_t W);

/*
 * Prepares products with op(W) = op, once, for as long as W's arrays do not
 * change (call it again after changing them). For ESMM_OP_T it builds W's
 * transpose, so op(W) = W^T products gather rows instead of scattering with
 * atomics: faster, and the same bits on every run. It first checks W as
 * esmm_csr_validate does: invalid arrays give ESMM_STATUS_INVALID_VALUE and
 * leave no transpose. ESMM_OP_N needs nothing and returns at once.
 * A second call for ESMM_OP_T replaces the transpose, so no other handle may
 * be using W meanwhile.
 * Allocates, and on CUDA waits for the handle's stream; like cuSPARSE's
 * SpMM_preprocess, it belongs outside the hot loop.
 */
esmm_status_t esmm_csr_prepare(esmm_handle_t handle, esmm_csr_t W, esmm_operation_t op);

/*
 * ESMM_STATUS_SUCCESS when the arrays are valid CSR (see above), else
 * ESMM_STATUS_INVALID_VALUE. Reads row_ptr and col_idx only, never past
 * row_ptr[rows] or past nnz entries. On CUDA it waits for the result.
 */
esmm_status_t esmm_csr_validate(esmm_handle_t handle, int64_t rows, int64_t cols, int64_t nnz,
                                const int32_t *row_ptr, const int32_t *col_idx);

/*
 * C = alpha * op(W) * B + beta * C, op(W) m x k (W itself for ESMM_OP_N,
 * W^T for ESMM_OP_T); B is k x n (ldb >= n) and C m x n (ldc >= n), dense
 * and row-major. alpha/beta follow esmm_sgemm (host pointers; beta == 0
 * ignores C; alpha == 0 or an empty op(W) gives beta * C).
 *
 * On the CUDA backend nothing waits for the host. A warp gathers each row of
 * op(W) reading the rows of B it needs densely (the path that B's zeros make
 * cheaper, "csr-sparse-b", is available through esmm_scsrmm_kernel; it is
 * faster only when B is very sparse, about 5% nonzero, so the default does not
 * take it). op(W) = W^T without esmm_csr_prepare scatters with atomics,
 * skipping B's zeros: its sums may be added in a different order from run to
 * run. n == 1 runs as esmm_scsrmv does. Every other path gives the same bits
 * on every run, and the same bits as the CPU backend.
 */
esmm_status_t esmm_scsrmm(esmm_handle_t handle, esmm_operation_t op_w, esmm_csr_t W, int64_t n,
                          const float *alpha, const float *B, int64_t ldb,
                          const float *beta, float *C, int64_t ldc);

/*
 * y = alpha * op(W) * x + beta * y, x and y contiguous. For op(W) = W^T
 * without esmm_csr_prepare, a zero of x skips its row of W (the column
 * indices are not read; the weights are, since a non-finite weight times 0
 * is NaN) and the sums are scattered with atomics, in an order that may vary
 * from run to run. The other paths gather and give the same bits every run;
 * on CUDA a row's products are summed across lanes, so not in the CPU
 * backend's order.
 */
esmm_status_t esmm_scsrmv(esmm_handle_t handle, esmm_operation_t op_w, esmm_csr_t W,
                          const float *alpha, const float *x, const float *beta, float *y);

/* esmm_scsrmm with its path named rather than chosen, for benchmarks and
 * tests: on CUDA "csr-dense-b" reads every row of B densely and
 * "csr-sparse-b" goes through B's compressed nonzeros, for the gathering
 * products (op N, or T after esmm_csr_prepare, with n > 1); the others have
 * one path each (the scatter, or the matrix-vector kernels), whatever the
 * name. On the CPU backend the one kernel is "cpu". Unknown names:
 * ESMM_STATUS_INVALID_VALUE. */
esmm_status_t esmm_scsrmm_kernel(esmm_handle_t handle, const char *kernel,
                                 esmm_operation_t op_w, esmm_csr_t W, int64_t n,
                                 const float *alpha, const float *B, int64_t ldb,
                                 const float *beta, float *C, int64_t ldc);

/* Workspace bytes the "csr-sparse-b" path with B k x n needs (for
 * esmm_set_workspace; the handle's own grows by itself); SIZE_MAX for sizes
 * no product accepts (k over INT32_MAX, or B past esmm_sgemm's bound on
 * rows x leading dimension) and for those the path does not take: B of more
 * than INT32_MAX elements, k rounded up to a multiple of 32 and n to whole
 * panels of 32, 64 or 128 columns (a product over 2,097,120 columns counts
 * the slice of n it runs at a time), where "csr-sparse-b" returns
 * ESMM_STATUS_NOT_SUPPORTED.
 * The other CSR paths use no workspace. */
size_t esmm_csrmm_workspace_size(int64_t k, int64_t n);

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

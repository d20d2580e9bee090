// The one extern "C" boundary between host C and the CUDA kernels
// (declared in cuda/cuda_backend.h).
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

#include "cuda/dense/ladder.cuh"
#include "cuda/launch_cache.cuh"
#include "cuda/patterns/extract_pattern.cuh"
#include "cuda/patterns/probe_dense.cuh"
#include "cuda/scale_c.cuh"
#include "cuda/sparse/plan.cuh"
#include "cuda/sparse/skip_gemm.cuh"
#include "cuda/transpose_operand.cuh"
#include "cuda/spmm/csr_layout.cuh"

extern "C" {
#include "cuda/cuda_backend.h"
}

#ifndef ESMM_CUDA_ARCHITECTURES
#define ESMM_CUDA_ARCHITECTURES "unknown"
#endif

namespace {

// A ladder kernel run on its own: C complete when it returns. Only the top
// kernel splits k, so only it uses the partial sums.
typedef cudaError_t (*dense_run_t)(const esmm_gemm_problem_t &p, float *partials,
                                   cudaStream_t stream);

template <esmm_dense_launcher_t LAUNCH>
cudaError_t run_unsplit(const esmm_gemm_problem_t &p, float *, cudaStream_t stream)
{
    return LAUNCH(p, stream);
}

cudaError_t run_pipelined(const esmm_gemm_problem_t &p, float *partials, cudaStream_t stream)
{
    cudaError_t err = launch_pipelined_gated(p, dense_gate{}, partials, nullptr, stream);
    return err == cudaSuccess ? launch_finish_splits(p, partials, nullptr, false, stream) : err;
}

struct dense_kernel {
    const char *name;
    dense_run_t run;
};

// Ladder order; the last entry is the dense path of esmm_sgemm.
const dense_kernel dense_kernels[] = {
    {"naive", run_unsplit<launch_naive>},
    {"coalesced", run_unsplit<launch_coalesced>},
    {"smem", run_unsplit<launch_smem_blocking>},
    {"blocktile1d", run_unsplit<launch_blocktile_1d>},
    {"blocktile2d", run_unsplit<launch_blocktile_2d>},
    {"vectorized", run_unsplit<launch_vectorized>},
    {"warptile", run_unsplit<launch_warptile>},
    {"pipelined", run_pipelined},
};
constexpr int dense_kernel_count = sizeof dense_kernels / sizeof dense_kernels[0];

esmm_status_t status_from(cudaError_t err)
{
    switch (err) {
    case cudaSuccess: return ESMM_STATUS_SUCCESS;
    case cudaErrorMemoryAllocation: return ESMM_STATUS_ALLOC_FAILED;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver: return ESMM_STATUS_NO_DEVICE;
    case cudaErrorInvalidValue: return ESMM_STATUS_INVALID_VALUE;
    // A grid past what a launch takes (over 2^31 - 1 CTAs): a valid size
    // the kernels cannot run.
    case cudaErrorInvalidConfiguration: return ESMM_STATUS_NOT_SUPPORTED;
    default: return ESMM_STATUS_EXECUTION_FAILED;
    }
}

} // namespace

extern "C" int esmm_cuda_device_count(void)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        cudaGetLastError(); // clear the sticky "no device/driver" error
        return 0;
    }
    return count;
}

extern "C" esmm_status_t esmm_cuda_current_device(int *device)
{
    return status_from(cudaGetDevice(device));
}

extern "C" esmm_status_t esmm_cuda_enter_device(int device, int *previous)
{
    cudaError_t err = cudaGetDevice(previous);
    if (err == cudaSuccess && *previous != device)
        err = cudaSetDevice(device);
    return status_from(err);
}

extern "C" void esmm_cuda_leave_device(int previous)
{
    int current = previous;
    if (cudaGetDevice(&current) == cudaSuccess && current != previous)
        cudaSetDevice(previous);
}

extern "C" void esmm_cuda_forget_launch_cache(void)
{
    forget_launch_cache();
}

extern "C" esmm_status_t esmm_cuda_device_info(int device, esmm_device_info_t *info)
{
    cudaDeviceProp prop;
    cudaError_t err = cudaGetDeviceProperties(&prop, device);
    if (err != cudaSuccess)
        return status_from(err);
    snprintf(info->device_name, sizeof info->device_name, "%s", prop.name);
    info->multiprocessors = prop.multiProcessorCount;
    info->compute_capability = prop.major * 10 + prop.minor;
    info->global_memory_bytes = prop.totalGlobalMem;
    info->l2_bytes = (size_t)prop.l2CacheSize;
    cudaRuntimeGetVersion(&info->runtime_version);
    cudaDriverGetVersion(&info->driver_version);
    return ESMM_STATUS_SUCCESS;
}

extern "C" int esmm_cuda_kernel_count(void)
{
    return dense_kernel_count;
}

extern "C" const char *esmm_cuda_kernel_name(int index)
{
    return index >= 0 && index < dense_kernel_count ? dense_kernels[index].name : nullptr;
}

extern "C" int esmm_cuda_kernel_find(const char *name)
{
    for (int i = 0; i < dense_kernel_count; i++)
        if (strcmp(name, dense_kernels[i].name) == 0)
            return i;
    return -1;
}

extern "C" esmm_status_t esmm_cuda_run_kernel(int index, const esmm_gemm_problem_t *p,
                                              float *partials, void *stream)
{
    if (index < 0 || index >= dense_kernel_count)
        return ESMM_STATUS_INVALID_VALUE;
    return status_from(
        dense_kernels[index].run(*p, partials, static_cast<cudaStream_t>(stream)));
}

extern "C" esmm_status_t esmm_cuda_finish_splits(const esmm_gemm_problem_t *p,
                                                 const float *partials,
                                                 const esmm_plan_stats_t *lists_plan,
                                                 int planned, void *stream)
{
    return status_from(launch_finish_splits(*p, partials, lists_plan, planned != 0,
                                            static_cast<cudaStream_t>(stream)));
}

extern "C" esmm_status_t esmm_cuda_scale_c(int64_t m, int64_t n, float beta, float *c,
                                           int64_t ldc, void *stream)
{
    return status_from(launch_scale_c(m, n, beta, c, ldc, static_cast<cudaStream_t>(stream)));
}

namespace {

// op(A) is m x k: stored m x k (strips of stored rows) for N, k x m for T.
pattern_extraction extraction_of_a(esmm_operation_t op, const float *a, int64_t lda, int64_t m,
                                   int64_t k, uint8_t *bits, uint8_t *nonfinite)
{
    const bool n = op == ESMM_OP_N;
    return pattern_extraction{n ? pattern_strips::of_stored_rows : pattern_strips::of_stored_cols,
                              a, lda, n ? m : k, n ? k : m, bits, nonfinite, nullptr,
                              ESMM_COPY_NONE};
}

// op(B) is k x n: stored k x n (strips of stored columns) for N, n x k for T.
pattern_extraction extraction_of_b(esmm_operation_t op, const float *b, int64_t ldb, int64_t k,
                                   int64_t n, uint8_t *bits, uint8_t *nonfinite)
{
    const bool t = op == ESMM_OP_T;
    return pattern_extraction{t ? pattern_strips::of_stored_rows : pattern_strips::of_stored_cols,
                              b, ldb, t ? n : k, t ? k : n, bits, nonfinite, nullptr,
                              ESMM_COPY_NONE};
}

} // namespace

extern "C" esmm_status_t esmm_cuda_extract_a(esmm_operation_t op, const float *a, int64_t lda,
                                             int64_t m, int64_t k, uint8_t *bits,
                                             uint8_t *nonfinite, void *stream)
{
    const pattern_extraction e = extraction_of_a(op, a, lda, m, k, bits, nonfinite);
    return status_from(
        launch_extract_patterns(&e, nullptr, nullptr, static_cast<cudaStream_t>(stream)));
}

extern "C" esmm_status_t esmm_cuda_extract_b(esmm_operation_t op, const float *b, int64_t ldb,
                                             int64_t k, int64_t n, uint8_t *bits,
                                             uint8_t *nonfinite, void *stream)
{
    const pattern_extraction e = extraction_of_b(op, b, ldb, k, n, bits, nonfinite);
    return status_from(
        launch_extract_patterns(&e, nullptr, nullptr, static_cast<cudaStream_t>(stream)));
}

extern "C" esmm_status_t esmm_cuda_extract_both(const esmm_gemm_problem_t *p, uint8_t *a_bits,
                                                uint8_t *a_nonfinite, uint8_t *b_bits,
                                                uint8_t *b_nonfinite,
                                                esmm_plan_stats_t *stats,
                                                esmm_copied_t extraction_copy,
                                                float *wide_copy, void *stream)
{
    pattern_extraction a =
        extraction_of_a(p->op_a, p->a, p->lda, p->m, p->k, a_bits, a_nonfinite);
    pattern_extraction b =
        extraction_of_b(p->op_b, p->b, p->ldb, p->k, p->n, b_bits, b_nonfinite);
    if (stats != nullptr && wide_copy != nullptr) {
        if (extraction_copy & ESMM_COPY_A) {
            a.copy = wide_copy + copy_offset(*p, ESMM_COPY_A);
            a.copied = ESMM_COPY_A;
        }
        if (extraction_copy & ESMM_COPY_B) {
            b.copy = wide_copy + copy_offset(*p, ESMM_COPY_B);
            b.copied = ESMM_COPY_B;
        }
    }
    return status_from(launch_extract_patterns(a_bits != nullptr ? &a : nullptr,
                                               b_bits != nullptr ? &b : nullptr, stats,
                                               static_cast<cudaStream_t>(stream)));
}

extern "C" esmm_status_t esmm_cuda_probe(const esmm_gemm_problem_t *p, const esmm_masks_t *given,
                                         int probe, esmm_plan_stats_t *stats, void *stream)
{
    const probe_operand a{extraction_of_a(p->op_a, p->a, p->lda, p->m, p->k, nullptr, nullptr),
                          given->a_bits, p->m, p->k};
    const probe_operand b{extraction_of_b(p->op_b, p->b, p->ldb, p->k, p->n, nullptr, nullptr),
                          given->b_bits, p->n, p->k};
    return status_from(
        launch_probe_dense(a, b, probe != 0, stats, static_cast<cudaStream_t>(stream)));
}

extern "C" esmm_status_t esmm_cuda_stream_synchronize(void *stream)
{
    return status_from(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
}

extern "C" const char *esmm_cuda_build_architectures(void)
{
    return ESMM_CUDA_ARCHITECTURES;
}

extern "C" esmm_status_t esmm_cuda_plan(const esmm_masks_t *masks, int64_t m, int64_t n,
                                        int64_t k, esmm_operation_t op_a, esmm_operation_t op_b,
                                        esmm_skip_by_t skip, esmm_copied_t extraction_copy,
                                        esmm_union_mode_t union_mode, esmm_union_list_t list,
                                        esmm_plan_stats_t *stats, void *stream)
{
    return status_from(launch_plan(*masks, m, n, k, op_a, op_b, skip, extraction_copy,
                                   union_mode, list, stats, static_cast<cudaStream_t>(stream)));
}

extern "C" esmm_status_t esmm_cuda_run_skip(const esmm_gemm_problem_t *p,
                                            const esmm_masks_t *masks, esmm_skip_by_t skip,
                                            esmm_plan_stats_t *plan, int planned,
                                            float *partials, float *wide_copy, int *settled,
                                            void *stream)
{
    bool now = *settled != 0;
    const cudaError_t err = launch_skip_gemm(*p, *masks, skip, plan, planned != 0, partials,
                                             wide_copy, now, static_cast<cudaStream_t>(stream));
    *settled = now;
    return status_from(err);
}

extern "C" esmm_status_t esmm_cuda_run_dense_gated(const esmm_gemm_problem_t *p,
                                                   const esmm_plan_stats_t *gate, int settled,
                                                   esmm_union_list_t list, float *partials,
                                                   float *wide_copy, void *stream)
{
    return status_from(launch_pipelined_gated(*p, dense_gate{gate, settled != 0, list}, partials,
                                              wide_copy, static_cast<cudaStream_t>(stream)));
}

extern "C" esmm_status_t esmm_cuda_copy_operand(const esmm_gemm_problem_t *p,
                                                esmm_skip_by_t skip,
                                                const esmm_plan_stats_t *plan, int planned,
                                                esmm_copied_t extraction_copy,
                                                float *wide_copy, int *settled, void *stream)
{
    bool now = *settled != 0;
    const cudaError_t err = launch_copy_operand(*p, skip, plan, planned != 0, extraction_copy,
                                                wide_copy, now, static_cast<cudaStream_t>(stream));
    *settled = now;
    return status_from(err);
}

extern "C" esmm_status_t esmm_cuda_transpose(const float *x, int64_t ld, int64_t rows,
                                             int64_t cols, float *out, void *stream)
{
    return status_from(launch_transpose(x, ld, rows, cols, out, static_cast<cudaStream_t>(stream)));
}

extern "C" esmm_status_t esmm_cuda_malloc(void **ptr, size_t bytes)
{
    const cudaError_t err = cudaMalloc(ptr, bytes);
    if (err != cudaSuccess) {
        *ptr = nullptr;
        cudaGetLastError(); // a failed allocation is not sticky; clear it
    }
    return status_from(err);
}

extern "C" void esmm_cuda_free(void *ptr)
{
    cudaFree(ptr);
}

extern "C" esmm_status_t esmm_cuda_copy_to_host(void *dst, const void *src, size_t bytes,
                                                void *stream)
{
    const cudaStream_t s = static_cast<cudaStream_t>(stream);
    cudaError_t err = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s);
    if (err == cudaSuccess)
        err = cudaStreamSynchronize(s);
    return status_from(err);
}

extern "C" esmm_status_t esmm_cuda_event_create(void **event)
{
    cudaEvent_t e = nullptr;
    const cudaError_t err = cudaEventCreate(&e);
    *event = e;
    return status_from(err);
}

extern "C" void esmm_cuda_event_destroy(void *event)
{
    if (event != nullptr)
        cudaEventDestroy(static_cast<cudaEvent_t>(event));
}

extern "C" esmm_status_t esmm_cuda_event_record(void *event, void *stream)
{
    return status_from(
        cudaEventRecord(static_cast<cudaEvent_t>(event), static_cast<cudaStream_t>(stream)));
}

extern "C" esmm_status_t esmm_cuda_stream_follow(void *event, void *from, void *to)
{
    const cudaStream_t streams[2] = {static_cast<cudaStream_t>(from),
                                     static_cast<cudaStream_t>(to)};
    for (cudaStream_t s : streams) {
        cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
        const cudaError_t err = cudaStreamIsCapturing(s, &capture);
        // The legacy stream answers so while another stream captures globally.
        if (err == cudaErrorStreamCaptureImplicit) {
            cudaGetLastError();
            return ESMM_STATUS_SUCCESS;
        }
        if (err != cudaSuccess)
            return status_from(err);
        if (capture != cudaStreamCaptureStatusNone)
            return ESMM_STATUS_SUCCESS;
    }
    const cudaEvent_t e = static_cast<cudaEvent_t>(event);
    cudaError_t err = cudaEventRecord(e, streams[0]);
    if (err == cudaSuccess)
        err = cudaStreamWaitEvent(streams[1], e, 0);
    return status_from(err);
}

extern "C" esmm_status_t esmm_cuda_event_elapsed(void *start, void *stop, double *ms)
{
    cudaError_t err = cudaEventSynchronize(static_cast<cudaEvent_t>(stop));
    float elapsed = 0.0f;
    if (err == cudaSuccess)
        err = cudaEventElapsedTime(&elapsed, static_cast<cudaEvent_t>(start),
                                   static_cast<cudaEvent_t>(stop));
    *ms = elapsed;
    return status_from(err);
}

extern "C" esmm_status_t esmm_cuda_device_synchronize(void)
{
    return status_from(cudaDeviceSynchronize());
}

extern "C" size_t esmm_cuda_csrmm_workspace(int64_t k, int64_t n)
{
    if (!csr_compressed_positions_fit(k, n))
        return SIZE_MAX;
    size_t values_at, columns_at;
    return csr_compressed_bytes(k, n, csr_cols_per_lane(n), &values_at, &columns_at);
}

namespace {

// Compresses B into the workspace and describes the result.
cudaError_t compress_b(const esmm_csrmm_problem_t *p, void *workspace, cudaStream_t stream,
                       csr_compressed_b *out)
{
    const int cpl = csr_cols_per_lane(p->n);
    size_t values_at, columns_at;
    csr_compressed_bytes(p->k, p->n, cpl, &values_at, &columns_at);
    char *base = static_cast<char *>(workspace);
    const int64_t width = 32 * cpl;
    *out = csr_compressed_b{reinterpret_cast<int2 *>(base),
                            reinterpret_cast<float *>(base + values_at),
                            reinterpret_cast<uint8_t *>(base + columns_at), p->k,
                            (p->n + width - 1) / width, width};
    return launch_csr_compress_b(p->b, p->ldb, p->k, p->n, cpl, csr_sparse_row_limit((int)width),
                                 *out, stream);
}

} // namespace

extern "C" esmm_status_t esmm_cuda_csrmm(const esmm_csrmm_problem_t *p,
                                         const esmm_csr_view_t *transposed,
                                         esmm_csr_b_mode_t mode, void *workspace, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    // Wide products run in slices (csr_slice_width; never a matrix-vector
    // product). The workspace of a compressed B sized for all of n holds a
    // slice's.
    if (p->n > CSR_MOST_COLUMNS) {
        const int64_t width = csr_slice_width(p->n);
        for (int64_t col0 = 0; col0 < p->n; col0 += width) {
            esmm_csrmm_problem_t slice = *p;
            slice.n = p->n - col0 < width ? p->n - col0 : width;
            slice.b = p->b + col0;
            slice.c = p->c + col0;
            const esmm_status_t st = esmm_cuda_csrmm(&slice, transposed, mode, workspace, stream);
            if (st != ESMM_STATUS_SUCCESS)
                return st;
        }
        return ESMM_STATUS_SUCCESS;
    }
    const bool gather = p->op == ESMM_OP_N || transposed != nullptr;
    const esmm_csr_view_t &w = p->op == ESMM_OP_N ? p->w : transposed != nullptr ? *transposed
                                                                                   : p->w;
    cudaError_t err;
    if (p->n == 1) {
        if (gather) {
            err = launch_csrmv_gather(w, p->alpha, p->b, p->ldb, p->beta, p->c, p->ldc, s);
        } else {
            err = launch_scale_c(p->m, 1, p->beta, p->c, p->ldc, s);
            if (err == cudaSuccess)
                err = launch_csrmv_scatter(w, p->alpha, p->b, p->ldb, p->c, p->ldc, s);
        }
        return status_from(err);
    }
    if (!gather) {
        err = launch_scale_c(p->m, p->n, p->beta, p->c, p->ldc, s);
        if (err == cudaSuccess)
            err = launch_csrmm_scatter(w, p->n, p->alpha, p->b, p->ldb, p->c, p->ldc, s);
        return status_from(err);
    }
    if (mode != ESMM_CSR_B_SPARSE)
        return status_from(launch_csrmm_gather(w, p->n, p->alpha, p->b, p->ldb, p->beta, p->c,
                                               p->ldc, s));
    csr_compressed_b compressed;
    err = compress_b(p, workspace, s, &compressed);
    if (err == cudaSuccess)
        err = launch_csrmm_sparse_b(w, p->n, p->alpha, p->b, p->ldb, p->beta, p->c, p->ldc,
                                    compressed, s);
    return status_from(err);
}

extern "C" esmm_status_t esmm_cuda_csr_transpose(const esmm_csr_view_t *w, int32_t *t_row_ptr,
                                                 int32_t *t_col_idx, float *t_values,
                                                 void *stream)
{
    return status_from(build_csr_transpose(*w, t_row_ptr, t_col_idx, t_values,
                                           static_cast<cudaStream_t>(stream)));
}

extern "C" esmm_status_t esmm_cuda_csr_validate(const esmm_csr_view_t *w, int *flag, int *valid,
                                                void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    cudaError_t err = launch_csr_validate(*w, flag, s);
    if (err == cudaSuccess)
        err = cudaMemcpyAsync(valid, flag, sizeof *valid, cudaMemcpyDeviceToHost, s);
    if (err == cudaSuccess)
        err = cudaStreamSynchronize(s);
    return status_from(err);
}

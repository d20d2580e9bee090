/*
 * The one boundary between host C and CUDA: every function here is defined
 * with C linkage in src/cuda/launch.cu. Pointers are device pointers; stream
 * is a cudaStream_t. Nothing here synchronises with the host unless it says so.
 */
#ifndef ESMM_CUDA_BACKEND_H
#define ESMM_CUDA_BACKEND_H

#include <stdint.h>

#include "esmm.h"
#include "gemm_problem.h"

/* Number of usable CUDA devices; 0 when there is none or no driver. */
int esmm_cuda_device_count(void);

/* Device the calling thread uses, and its description. */
esmm_status_t esmm_cuda_current_device(int *device);
esmm_status_t esmm_cuda_device_info(int device, esmm_device_info_t *info);

/* The dense kernels, ladder order. The last is the best and is what
 * esmm_sgemm runs on the dense path. */
int esmm_cuda_kernel_count(void);
const char *esmm_cuda_kernel_name(int index);
int esmm_cuda_kernel_find(const char *name); /* index, or -1 */
esmm_status_t esmm_cuda_run_kernel(int index, const esmm_gemm_problem_t *p, void *stream);

/* C = beta * C (beta == 0 writes zeros): the alpha == 0 or k == 0 case. */
esmm_status_t esmm_cuda_scale_c(int64_t m, int64_t n, float beta, float *c, int64_t ldc,
                                void *stream);

/* Waits for the stream (handle teardown only). */
esmm_status_t esmm_cuda_stream_synchronize(void *stream);

/* The architectures this library was compiled for, e.g. "80-real;90-real;90-virtual". */
const char *esmm_cuda_build_architectures(void);

#endif

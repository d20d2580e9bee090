/* Device-side helpers the CUDA test programs share. A failed CUDA call is a
 * failed check that ends the test: after one, the context may be unusable. */
#ifndef ESMM_TEST_SUPPORT_CUDA_H
#define ESMM_TEST_SUPPORT_CUDA_H

#include <stddef.h>
#include <stdio.h>

#include <cuda_runtime_api.h>

#include "test_support.h"

/* 1 where a CUDA device exists; else records as a skip why the named tests
 * (e.g. "GPU GEMM tests") did not run. */
static inline int cuda_device_present(const char *tests)
{
    int devices = 0;
    const cudaError_t err = cudaGetDeviceCount(&devices);
    if (err == cudaSuccess && devices != 0)
        return 1;
    char why[256];
    snprintf(why, sizeof why, "no CUDA device (%s): the %s did not run",
             err != cudaSuccess ? cudaGetErrorString(err) : "cudaGetDeviceCount found none", tests);
    check_skip(why);
    return 0;
}

static inline void cuda_must(cudaError_t err, const char *what)
{
    if (err == cudaSuccess)
        return;
    CHECK(0, "%s: %s (stopping: the CUDA context may be unusable)", what, cudaGetErrorString(err));
    exit(check_finish());
}

static inline void *device_alloc(size_t bytes)
{
    void *p = NULL;
    cuda_must(cudaMalloc(&p, bytes), "cudaMalloc");
    return p;
}

static inline void device_free(void *p)
{
    cuda_must(cudaFree(p), "cudaFree");
}

static inline void device_upload(void *dst, const void *src, size_t bytes)
{
    cuda_must(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "cudaMemcpy to device");
}

/* Synchronous copy; the caller synchronizes first where an asynchronous
 * fault must show before the copy. */
static inline void device_download(void *dst, const void *src, size_t bytes)
{
    cuda_must(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy to host");
}

#endif

// The one extern "C" boundary between host C and the CUDA kernels
// (declared in cuda/cuda_backend.h).
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

#include "cuda/dense/ladder.cuh"
#include "cuda/scale_c.cuh"

extern "C" {
#include "cuda/cuda_backend.h"
}

#ifndef ESMM_CUDA_ARCHITECTURES
#define ESMM_CUDA_ARCHITECTURES "unknown"
#endif

namespace {

struct dense_kernel {
    const char *name;
    esmm_dense_launcher_t launch;
};

// Ladder order; the last entry is the dense path of esmm_sgemm.
const dense_kernel dense_kernels[] = {
    {"naive", launch_naive},
    {"coalesced", launch_coalesced},
    {"smem", launch_smem_blocking},
    {"blocktile1d", launch_blocktile_1d},
    {"blocktile2d", launch_blocktile_2d},
    {"vectorized", launch_vectorized},
    {"warptile", launch_warptile},
    {"pipelined", launch_pipelined},
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
                                              void *stream)
{
    if (index < 0 || index >= dense_kernel_count)
        return ESMM_STATUS_INVALID_VALUE;
    return status_from(dense_kernels[index].launch(*p, static_cast<cudaStream_t>(stream)));
}

extern "C" esmm_status_t esmm_cuda_scale_c(int64_t m, int64_t n, float beta, float *c,
                                           int64_t ldc, void *stream)
{
    return status_from(launch_scale_c(m, n, beta, c, ldc, static_cast<cudaStream_t>(stream)));
}

extern "C" esmm_status_t esmm_cuda_stream_synchronize(void *stream)
{
    return status_from(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
}

extern "C" const char *esmm_cuda_build_architectures(void)
{
    return ESMM_CUDA_ARCHITECTURES;
}

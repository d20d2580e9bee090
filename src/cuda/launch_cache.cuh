// What launches need from the driver that only changes with the device,
// asked once per device instead of on every call: cudaFuncSetAttribute and
// cudaDeviceGetAttribute are host-side driver calls, and a planned product
// made up to six of them (measured on the H100 at 1797 x 2048 x 2048: 35 us
// of host time per esmm_sgemm call against cuBLAS's 9 us). And how the
// kernels of one call are launched one behind the other.
#pragma once

#include <cuda_runtime.h>

// Grants kernel `bytes` of dynamic shared memory on the current device.
cudaError_t grant_dynamic_smem(const void *kernel, int bytes);

// The current device's multiprocessor count.
cudaError_t current_sm_count(int *sms);

// How many blocks of kernel (threads each, smem bytes of dynamic shared
// memory, which must be granted first) the current device holds at once.
cudaError_t resident_blocks(const void *kernel, int threads, int smem, int *blocks);

// Forgets what was granted and counted: a device reset (cudaDeviceReset)
// drops the attributes with its context, so handles created after one must
// grant them again. Called by esmm_create.
void forget_launch_cache();

// Chained launches. The kernels of one call run back to back in the stream;
// launched chained (programmatic dependent launch, compute capability 9.0 and
// up), a kernel is dispatched as soon as every block of the one ahead has
// called chain_release(), instead of after that kernel has drained: the gap
// between two small launches was most of what each gated or closed one cost.
// Every kernel so launched calls chain_wait() before it touches memory (it
// returns once the kernel ahead has finished and its writes are visible),
// then chain_release(); a gated kernel the plan closes may instead end at
// once (enter_gated in sparse/plan_gate.cuh). Launch them with
// launch_chained.
struct chained_launch {
    cudaLaunchConfig_t config;
    cudaLaunchAttribute attribute;
};

// Fills launch for kernel: chained where the device and the kernel's code
// allow, else a plain launch. launch->config points at launch->attribute.
cudaError_t chained_config(chained_launch *launch, const void *kernel, dim3 grid, dim3 block,
                           size_t smem, cudaStream_t stream);

// Launches kernel(args...) on stream as chained_config allows.
template <typename... Params, typename... Args>
cudaError_t launch_chained(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem,
                           cudaStream_t stream, Args... args)
{
    chained_launch launch;
    const cudaError_t err = chained_config(&launch, reinterpret_cast<const void *>(kernel), grid,
                                           block, smem, stream);
    return err != cudaSuccess ? err : cudaLaunchKernelEx(&launch.config, kernel, args...);
}

__device__ __forceinline__ void chain_wait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__device__ __forceinline__ void chain_release()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Per-device launch facts (see launch_cache.cuh): a small table under a
// mutex, as handles may launch from several host threads at once.
#include "cuda/launch_cache.cuh"

#include <mutex>
#include <vector>

namespace {

struct granted_smem {
    const void *kernel;
    int device, bytes;
};

struct sm_count {
    int device, sms;
};

struct chained_kernel {
    const void *kernel;
    int device;
    bool chained;
};

std::mutex cache_mutex;
std::vector<granted_smem> granted;
std::vector<sm_count> counted;
std::vector<chained_kernel> chainable;

// Whether kernel may be launched chained on device: the device runs
// programmatic dependent launch (9.0 and up) and the kernel's code was
// compiled for it, so chain_wait() is in it (code built for an older
// architecture and run on a newer one has none: launched chained, it would
// race the kernel ahead).
cudaError_t kernel_chains(const void *kernel, int device, bool *chained)
{
    {
        std::lock_guard<std::mutex> lock(cache_mutex);
        for (const chained_kernel &c : chainable)
            if (c.kernel == kernel && c.device == device) {
                *chained = c.chained;
                return cudaSuccess;
            }
    }
    int major = 0;
    cudaFuncAttributes attributes;
    cudaError_t err = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
    if (err == cudaSuccess)
        err = cudaFuncGetAttributes(&attributes, kernel);
    if (err != cudaSuccess)
        return err;
    *chained = major >= 9 && attributes.ptxVersion >= 90;
    std::lock_guard<std::mutex> lock(cache_mutex);
    chainable.push_back(chained_kernel{kernel, device, *chained});
    return cudaSuccess;
}

} // namespace

cudaError_t grant_dynamic_smem(const void *kernel, int bytes)
{
    int device = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err != cudaSuccess)
        return err;
    std::lock_guard<std::mutex> lock(cache_mutex);
    for (const granted_smem &g : granted)
        if (g.kernel == kernel && g.device == device && g.bytes >= bytes)
            return cudaSuccess;
    err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
    if (err == cudaSuccess)
        granted.push_back(granted_smem{kernel, device, bytes});
    return err;
}

cudaError_t current_sm_count(int *sms)
{
    int device = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err != cudaSuccess)
        return err;
    std::lock_guard<std::mutex> lock(cache_mutex);
    for (const sm_count &c : counted)
        if (c.device == device) {
            *sms = c.sms;
            return cudaSuccess;
        }
    err = cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, device);
    if (err == cudaSuccess)
        counted.push_back(sm_count{device, *sms});
    return err;
}

cudaError_t chained_config(chained_launch *launch, const void *kernel, dim3 grid, dim3 block,
                           size_t smem, cudaStream_t stream)
{
    int device = 0;
    bool chained = false;
    cudaError_t err = cudaGetDevice(&device);
    if (err == cudaSuccess)
        err = kernel_chains(kernel, device, &chained);
    launch->attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    launch->attribute.val.programmaticStreamSerializationAllowed = 1;
    launch->config = cudaLaunchConfig_t{};
    launch->config.gridDim = grid;
    launch->config.blockDim = block;
    launch->config.dynamicSmemBytes = smem;
    launch->config.stream = stream;
    launch->config.attrs = &launch->attribute;
    launch->config.numAttrs = chained ? 1 : 0;
    return err;
}

void forget_launch_cache()
{
    std::lock_guard<std::mutex> lock(cache_mutex);
    granted.clear();
    counted.clear();
    chainable.clear();
}

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

struct device_facts {
    int device, sms, major;
};

struct chained_kernel {
    const void *kernel;
    int device;
    bool chained;
};

std::mutex cache_mutex;
std::vector<granted_smem> granted;
std::vector<device_facts> counted;
std::vector<chained_kernel> chainable;

// The current device's facts, asked of the driver on its first use.
cudaError_t current_facts(device_facts *facts)
{
    int device = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err != cudaSuccess)
        return err;
    std::lock_guard<std::mutex> lock(cache_mutex);
    for (const device_facts &f : counted)
        if (f.device == device) {
            *facts = f;
            return cudaSuccess;
        }
    facts->device = device;
    err = cudaDeviceGetAttribute(&facts->sms, cudaDevAttrMultiProcessorCount, device);
    if (err == cudaSuccess)
        err = cudaDeviceGetAttribute(&facts->major, cudaDevAttrComputeCapabilityMajor, device);
    if (err == cudaSuccess)
        counted.push_back(*facts);
    return err;
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
    device_facts facts;
    const cudaError_t err = current_facts(&facts);
    *sms = err == cudaSuccess ? facts.sms : 0;
    return err;
}

// Whether kernel may be launched chained on the current device: the device
// runs programmatic dependent launch (9.0 and up) and the kernel's code was
// compiled for it, so chain_wait() is in it (code built for an older
// architecture and run on a newer one has none: launched chained, it would
// race the kernel ahead).
cudaError_t kernel_chains(const void *kernel, bool *chained)
{
    device_facts facts;
    cudaError_t err = current_facts(&facts);
    if (err != cudaSuccess)
        return err;
    {
        std::lock_guard<std::mutex> lock(cache_mutex);
        for (const chained_kernel &c : chainable)
            if (c.kernel == kernel && c.device == facts.device) {
                *chained = c.chained;
                return cudaSuccess;
            }
    }
    cudaFuncAttributes attributes;
    err = cudaFuncGetAttributes(&attributes, kernel);
    if (err != cudaSuccess)
        return err;
    *chained = facts.major >= 9 && attributes.ptxVersion >= 90;
    std::lock_guard<std::mutex> lock(cache_mutex);
    chainable.push_back(chained_kernel{kernel, facts.device, *chained});
    return cudaSuccess;
}

cudaError_t chained_config(chained_launch *launch, const void *kernel, dim3 grid, dim3 block,
                           size_t smem, cudaStream_t stream)
{
    bool chained = false;
    const cudaError_t err = kernel_chains(kernel, &chained);
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

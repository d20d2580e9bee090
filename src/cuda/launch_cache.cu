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

std::mutex cache_mutex;
std::vector<granted_smem> granted;
std::vector<sm_count> counted;

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

void forget_launch_cache()
{
    std::lock_guard<std::mutex> lock(cache_mutex);
    granted.clear();
    counted.clear();
}

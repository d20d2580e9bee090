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

struct resident_count {
    const void *kernel;
    int device, threads, smem, blocks;
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
std::vector<resident_count> resident;

// The entry of table that `matches`, asked of the driver (`ask` fills it) on
// first use and kept. The lock is held throughout: asks are rare.
template <class Entry, class Matches, class Ask>
cudaError_t find_or_ask(std::vector<Entry> &table, Matches matches, Ask ask, Entry *found)
{
    std::lock_guard<std::mutex> lock(cache_mutex);
    for (const Entry &e : table)
        if (matches(e)) {
            *found = e;
            return cudaSuccess;
        }
    const cudaError_t err = ask(found);
    if (err == cudaSuccess)
        table.push_back(*found);
    return err;
}

// Whether kernel may be launched chained on device: the device runs
// programmatic dependent launch (9.0 and up) and the kernel's code was
// compiled for it, so chain_wait() is in it (code built for an older
// architecture and run on a newer one has none: launched chained, it would
// race the kernel ahead).
cudaError_t kernel_chains(const void *kernel, int device, bool *chained)
{
    chained_kernel entry{};
    const cudaError_t err = find_or_ask(
        chainable,
        [&](const chained_kernel &c) { return c.kernel == kernel && c.device == device; },
        [&](chained_kernel *c) {
            int major = 0;
            cudaFuncAttributes attributes{};
            cudaError_t e =
                cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
            if (e == cudaSuccess)
                e = cudaFuncGetAttributes(&attributes, kernel);
            *c = chained_kernel{kernel, device, major >= 9 && attributes.ptxVersion >= 90};
            return e;
        },
        &entry);
    *chained = err == cudaSuccess && entry.chained;
    return err;
}

} // namespace

cudaError_t grant_dynamic_smem(const void *kernel, int bytes)
{
    int device = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err != cudaSuccess)
        return err;
    granted_smem entry{};
    return find_or_ask(
        granted,
        [&](const granted_smem &g) {
            return g.kernel == kernel && g.device == device && g.bytes >= bytes;
        },
        [&](granted_smem *g) {
            *g = granted_smem{kernel, device, bytes};
            return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
        },
        &entry);
}

cudaError_t current_sm_count(int *sms)
{
    *sms = 0;
    int device = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err != cudaSuccess)
        return err;
    sm_count entry{};
    err = find_or_ask(
        counted, [&](const sm_count &c) { return c.device == device; },
        [&](sm_count *c) {
            c->device = device;
            return cudaDeviceGetAttribute(&c->sms, cudaDevAttrMultiProcessorCount, device);
        },
        &entry);
    if (err == cudaSuccess)
        *sms = entry.sms;
    return err;
}

cudaError_t resident_blocks(const void *kernel, int threads, int smem, int *blocks)
{
    *blocks = 0;
    int device = 0, sms = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err == cudaSuccess)
        err = current_sm_count(&sms);
    if (err != cudaSuccess)
        return err;
    resident_count entry{};
    err = find_or_ask(
        resident,
        [&](const resident_count &r) {
            return r.kernel == kernel && r.device == device && r.threads == threads &&
                   r.smem == smem;
        },
        [&](resident_count *r) {
            *r = resident_count{kernel, device, threads, smem, 0};
            const cudaError_t e =
                cudaOccupancyMaxActiveBlocksPerMultiprocessor(&r->blocks, kernel, threads, smem);
            r->blocks *= sms;
            return e;
        },
        &entry);
    if (err == cudaSuccess)
        *blocks = entry.blocks;
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
    resident.clear();
}

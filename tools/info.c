#include "info.h"

#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

#include "cli_error.h"
#include "esmm.h"

static void print_usage(FILE *f)
{
    fputs("usage: esmm info\n"
          "\n"
          "Prints the library version, the CUDA architectures it was built for, the CUDA\n"
          "runtime and driver versions, and the GPU esmm would run on (name, multiprocessors,\n"
          "compute capability, memory, L2 cache), or that there is none and the CPU backend\n"
          "is used.\n",
          f);
}

/* 13000 -> "13.0"; 0 -> "none". */
static void format_cuda_version(int version, char *out, size_t cap)
{
    if (version <= 0)
        snprintf(out, cap, "none");
    else
        snprintf(out, cap, "%d.%d", version / 1000, version % 1000 / 10);
}

static void print_kernels(esmm_handle_t handle)
{
    printf("kernels:");
    for (int i = 0; i < esmm_kernel_count(handle); i++)
        printf("%s %s", i ? "," : "", esmm_kernel_name(handle, i));
    printf("\n");
}

int info_command(int argc, char **argv)
{
    if (argc > 0) {
        if (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0) {
            print_usage(stdout);
            return ESMM_EXIT_OK;
        }
        fprintf(stderr, "esmm info: unexpected argument '%.64s' (run 'esmm info --help')\n", argv[0]);
        return ESMM_EXIT_USAGE;
    }
    esmm_handle_t handle = NULL;
    esmm_status_t st = esmm_create(&handle, ESMM_BACKEND_AUTO);
    if (st != ESMM_STATUS_SUCCESS) {
        fprintf(stderr, "esmm info: cannot create an esmm handle: %s\n", esmm_status_string(st));
        return ESMM_EXIT_RUNTIME;
    }
    esmm_device_info_t info;
    st = esmm_get_device_info(handle, &info);
    if (st != ESMM_STATUS_SUCCESS) {
        fprintf(stderr, "esmm info: cannot read the device information: %s\n",
                esmm_status_string(st));
        esmm_destroy(handle);
        return ESMM_EXIT_RUNTIME;
    }
    esmm_backend_t backend = ESMM_BACKEND_CPU;
    esmm_get_backend(handle, &backend);

    printf("esmm %s\n", esmm_version());
    printf("built for CUDA architectures: %s\n", info.build_architectures);
    int runtime = info.runtime_version, driver = info.driver_version;
    if (backend != ESMM_BACKEND_CUDA) {
        /* No device to describe, but the versions are still worth knowing. */
        if (cudaRuntimeGetVersion(&runtime) != cudaSuccess)
            runtime = 0;
        if (cudaDriverGetVersion(&driver) != cudaSuccess)
            driver = 0;
    }
    char runtime_text[16], driver_text[16];
    format_cuda_version(runtime, runtime_text, sizeof runtime_text);
    format_cuda_version(driver, driver_text, sizeof driver_text);
    printf("CUDA runtime: %s, driver: %s\n", runtime_text, driver_text);
    if (backend == ESMM_BACKEND_CUDA) {
        printf("device: %s\n", info.device_name);
        printf("  compute capability: %d.%d (sm_%d)\n", info.compute_capability / 10,
               info.compute_capability % 10, info.compute_capability);
        printf("  multiprocessors: %d\n", info.multiprocessors);
        printf("  memory: %.1f GiB\n", (double)info.global_memory_bytes / (1u << 30));
        printf("  L2 cache: %.1f MiB\n", (double)info.l2_bytes / (1u << 20));
        printf("backend: cuda\n");
    } else {
        printf("device: none (no usable CUDA device)\n");
        printf("backend: cpu\n");
    }
    print_kernels(handle);
    esmm_destroy(handle);
    return ESMM_EXIT_OK;
}

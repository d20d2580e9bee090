// What launches need from the driver that only changes with the device,
// asked once per device instead of on every call: cudaFuncSetAttribute and
// cudaDeviceGetAttribute are host-side driver calls, and a planned product
// made up to six of them (measured on the H100 at 1797 x 2048 x 2048: 35 us
// of host time per esmm_sgemm call against cuBLAS's 9 us).
#pragma once

#include <cuda_runtime.h>

// Grants kernel `bytes` of dynamic shared memory on the current device.
cudaError_t grant_dynamic_smem(const void *kernel, int bytes);

// The current device's multiprocessor count.
cudaError_t current_sm_count(int *sms);

// Forgets what was granted and counted: a device reset (cudaDeviceReset)
// drops the attributes with its context, so handles created after one must
// grant them again. Called by esmm_create.
void forget_launch_cache();

#pragma once

#include <cstdint>
#include <cuda_runtime.h>

cudaError_t launch_scale_c(int64_t m, int64_t n, float beta, float *c, int64_t ldc,
                           cudaStream_t stream);

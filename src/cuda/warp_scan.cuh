// A warp's inclusive prefix sum, for the kernels that place listed items.
#pragma once

#include <cuda_runtime.h>

// The sum of v over lanes 0 .. lane of a full warp (five shuffles); lane is
// this thread's.
__device__ __forceinline__ int warp_inclusive_sum(int v, int lane)
{
    for (int offset = 1; offset < 32; offset *= 2) {
        const int up = __shfl_up_sync(0xffffffffu, v, offset);
        if (lane >= offset)
            v += up;
    }
    return v;
}

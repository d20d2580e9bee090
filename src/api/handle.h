/* What a handle holds. */
#ifndef ESMM_HANDLE_H
#define ESMM_HANDLE_H

#include "esmm.h"

struct esmm_context {
    esmm_backend_t backend; /* ESMM_BACKEND_CPU or ESMM_BACKEND_CUDA */
    int device;             /* CUDA device ordinal the handle was created on */
    void *stream;           /* cudaStream_t; NULL is the legacy default stream */
};

#endif

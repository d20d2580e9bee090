/* Benchmark inputs: the generators of `esmm bench` and the statistics the
 * report needs (nonzeros per K index, norms for the error scale).
 *
 * Both operands are handled through one view indexed (x, kk): x runs over the
 * dimension that is cut into 32-wide strips (rows i of op(A), columns j of
 * op(B)), kk over K. So op(A)(i, kk) is view (i, kk) and op(B)(kk, j) is view
 * (j, kk), and every generator treats A and B alike.
 *
 * Values come from a counter-based hash of (seed, stream, element), so the
 * result does not depend on the storage order or on the number of threads. */
#ifndef ESMM_TOOLS_GENERATE_H
#define ESMM_TOOLS_GENERATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "esmm.h"

/* Streams keep the operands independent for one seed. */
enum { GENERATE_STREAM_A = 1, GENERATE_STREAM_B = 2, GENERATE_STREAM_C = 3 };

#define GENERATE_STRIP 32 /* strip width of the density generator (DESIGN.md) */

typedef enum {
    GENERATOR_DENSE = 0,   /* uniform in [-1, 1], never exactly zero */
    GENERATOR_PATTERN = 1, /* K index kk is zero everywhere when pattern[kk % 8] == '0' */
    GENERATOR_DENSITY = 2, /* each (strip, kk) slice is kept with probability keep, else zero */
    GENERATOR_RANDOM = 3   /* each element is zero with probability zero_probability */
} generator_kind_t;

typedef struct {
    generator_kind_t kind;
    char pattern[9];         /* GENERATOR_PATTERN: 8 characters '0'/'1' */
    double keep;             /* GENERATOR_DENSITY, in [0, 1] */
    double zero_probability; /* GENERATOR_RANDOM, in [0, 1] */
} generator_t;

typedef struct {
    float *data;
    int64_t ld;        /* leading dimension of the storage */
    int64_t outer;     /* m for A, n for B (and m for C) */
    int64_t k;         /* K for A and B (n for C) */
    bool k_contiguous; /* (x, kk) is at x * ld + kk when true, kk * ld + x when false */
} operand_view_t;

static inline int64_t operand_index(const operand_view_t *v, int64_t x, int64_t kk)
{
    return v->k_contiguous ? x * v->ld + kk : kk * v->ld + x;
}

/* Views of densely stored (tight leading dimension) operands. A is m x k for
 * N and k x m for T; B is k x n for N and n x k for T. */
operand_view_t operand_view_a(float *a, esmm_operation_t op, int64_t m, int64_t k);
operand_view_t operand_view_b(float *b, esmm_operation_t op, int64_t k, int64_t n);

/* Fills the whole view. C for beta != 0 is a dense m x n "operand" with
 * outer = m, k = n, k_contiguous (stream GENERATE_STREAM_C). */
void generate_operand(const operand_view_t *v, const generator_t *g, uint64_t seed,
                      uint64_t stream);

/* The value generate_operand's dense part puts at (x, kk): uniform in
 * (-1, 1), an odd multiple of 2^-24, never zero. */
float generate_dense_value(uint64_t seed, uint64_t stream, int64_t x, int64_t kk, int64_t k);

/* counts[kk] = number of x with view (x, kk) != 0.0f (NaN counts as nonzero). */
void count_nonzeros_per_k(const operand_view_t *v, int64_t *counts);

/* Products that are not known to be zero: 2 * sum_kk nnz_a[kk] * nnz_b[kk]. */
double effective_flops(const int64_t *nnz_a, const int64_t *nnz_b, int64_t k);

/* norms[x] = Euclidean norm of view row x over K, in double. */
void operand_norms(const operand_view_t *v, double *norms);

/* What the generator keeps, as a fraction (1.0 for dense): the pattern's share
 * of ones, keep, or 1 - zero_probability. */
double generator_density(const generator_t *g);

/* A human description of the generator, e.g. "pattern 11110000 along K". */
void generator_describe(const generator_t *g, char *out, size_t cap);

/* "dense", "pattern", "density" or "random". */
const char *generator_name(generator_kind_t kind);

#endif

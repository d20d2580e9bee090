#include "generate.h"

#include <math.h>
#include <stdio.h>

/* Domains of the hash, so the keep/zero draws are independent of the values. */
enum { DOMAIN_VALUE = 0, DOMAIN_STRIP_KEEP = 1, DOMAIN_ELEMENT_ZERO = 2 };

/* The splitmix64 finaliser: a bijection with good avalanche. */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t hash_draw(uint64_t seed, uint64_t stream, uint64_t domain, uint64_t index)
{
    uint64_t base = mix64(seed ^ mix64(stream * 4 + domain + 0x9e3779b97f4a7c15ULL));
    return mix64(base + (index + 1) * 0x9e3779b97f4a7c15ULL);
}

/* Uniform in [0, 1) with 53 random bits. */
static double hash_unit(uint64_t bits)
{
    return (double)(bits >> 11) * 0x1.0p-53;
}

float generate_dense_value(uint64_t seed, uint64_t stream, int64_t x, int64_t kk, int64_t k)
{
    uint64_t bits = hash_draw(seed, stream, DOMAIN_VALUE, (uint64_t)(x * k + kk));
    /* An odd integer in [-(2^24 - 1), 2^24 - 1] scaled by 2^-24: exact in
     * float, symmetric, and never zero. */
    int64_t odd = 2 * (int64_t)(bits >> 40) - ((int64_t)1 << 24) + 1;
    return (float)odd * 0x1.0p-24f;
}

operand_view_t operand_view_a(float *a, esmm_operation_t op, int64_t m, int64_t k)
{
    operand_view_t v = {a, op == ESMM_OP_N ? k : m, m, k, op == ESMM_OP_N};
    return v;
}

operand_view_t operand_view_b(float *b, esmm_operation_t op, int64_t k, int64_t n)
{
    operand_view_t v = {b, op == ESMM_OP_N ? n : k, n, k, op == ESMM_OP_T};
    return v;
}

static bool element_is_zeroed(const generator_t *g, uint64_t seed, uint64_t stream, int64_t x,
                              int64_t kk, int64_t k)
{
    switch (g->kind) {
    case GENERATOR_PATTERN:
        return g->pattern[kk % 8] == '0';
    case GENERATOR_DENSITY: {
        int64_t strip = x / GENERATE_STRIP;
        uint64_t bits = hash_draw(seed, stream, DOMAIN_STRIP_KEEP, (uint64_t)(strip * k + kk));
        return !(hash_unit(bits) < g->keep);
    }
    case GENERATOR_RANDOM: {
        uint64_t bits = hash_draw(seed, stream, DOMAIN_ELEMENT_ZERO, (uint64_t)(x * k + kk));
        return hash_unit(bits) < g->zero_probability;
    }
    case GENERATOR_DENSE:
        break;
    }
    return false;
}

void generate_operand(const operand_view_t *v, const generator_t *g, uint64_t seed,
                      uint64_t stream)
{
    /* Walk the storage in order; each element's value depends only on its
     * (x, kk), never on the walk. */
    int64_t lines = v->k_contiguous ? v->outer : v->k;
    int64_t line_length = v->k_contiguous ? v->k : v->outer;
#pragma omp parallel for schedule(static)
    for (int64_t line = 0; line < lines; line++) {
        float *row = v->data + line * v->ld;
        for (int64_t t = 0; t < line_length; t++) {
            int64_t x = v->k_contiguous ? line : t;
            int64_t kk = v->k_contiguous ? t : line;
            row[t] = element_is_zeroed(g, seed, stream, x, kk, v->k)
                         ? 0.0f
                         : generate_dense_value(seed, stream, x, kk, v->k);
        }
    }
}

void count_nonzeros_per_k(const operand_view_t *v, int64_t *counts)
{
    if (v->k_contiguous) {
        for (int64_t kk = 0; kk < v->k; kk++)
            counts[kk] = 0;
        for (int64_t x = 0; x < v->outer; x++) {
            const float *row = v->data + x * v->ld;
            for (int64_t kk = 0; kk < v->k; kk++)
                counts[kk] += row[kk] != 0.0f;
        }
        return;
    }
#pragma omp parallel for schedule(static)
    for (int64_t kk = 0; kk < v->k; kk++) {
        const float *line = v->data + kk * v->ld;
        int64_t count = 0;
        for (int64_t x = 0; x < v->outer; x++)
            count += line[x] != 0.0f;
        counts[kk] = count;
    }
}

double effective_flops(const int64_t *nnz_a, const int64_t *nnz_b, int64_t k)
{
    double products = 0.0;
    for (int64_t kk = 0; kk < k; kk++)
        products += (double)nnz_a[kk] * (double)nnz_b[kk];
    return 2.0 * products;
}

void operand_norms(const operand_view_t *v, double *norms)
{
    if (v->k_contiguous) {
#pragma omp parallel for schedule(static)
        for (int64_t x = 0; x < v->outer; x++) {
            const float *row = v->data + x * v->ld;
            double sum = 0.0;
            for (int64_t kk = 0; kk < v->k; kk++)
                sum += (double)row[kk] * (double)row[kk];
            norms[x] = sqrt(sum);
        }
        return;
    }
    for (int64_t x = 0; x < v->outer; x++)
        norms[x] = 0.0;
    for (int64_t kk = 0; kk < v->k; kk++) {
        const float *line = v->data + kk * v->ld;
        for (int64_t x = 0; x < v->outer; x++)
            norms[x] += (double)line[x] * (double)line[x];
    }
    for (int64_t x = 0; x < v->outer; x++)
        norms[x] = sqrt(norms[x]);
}

double generator_density(const generator_t *g)
{
    switch (g->kind) {
    case GENERATOR_PATTERN: {
        int ones = 0;
        for (int i = 0; i < 8; i++)
            ones += g->pattern[i] == '1';
        return ones / 8.0;
    }
    case GENERATOR_DENSITY:
        return g->keep;
    case GENERATOR_RANDOM:
        return 1.0 - g->zero_probability;
    case GENERATOR_DENSE:
        break;
    }
    return 1.0;
}

void generator_describe(const generator_t *g, char *out, size_t cap)
{
    switch (g->kind) {
    case GENERATOR_PATTERN:
        snprintf(out, cap, "pattern %s along K", g->pattern);
        return;
    case GENERATOR_DENSITY:
        snprintf(out, cap, "each %d-wide strip kept with probability %g per K index",
                 GENERATE_STRIP, g->keep);
        return;
    case GENERATOR_RANDOM:
        snprintf(out, cap, "each element zero with probability %g", g->zero_probability);
        return;
    case GENERATOR_DENSE:
        break;
    }
    snprintf(out, cap, "dense, uniform in [-1, 1]");
}

const char *generator_name(generator_kind_t kind)
{
    switch (kind) {
    case GENERATOR_PATTERN: return "pattern";
    case GENERATOR_DENSITY: return "density";
    case GENERATOR_RANDOM: return "random";
    case GENERATOR_DENSE: break;
    }
    return "dense";
}

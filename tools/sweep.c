#include "sweep.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static generator_t dense_generator(void)
{
    generator_t g = {GENERATOR_DENSE, "", 1.0, 0.0};
    return g;
}

static generator_t density_generator(double keep)
{
    generator_t g = {GENERATOR_DENSITY, "", keep, 0.0};
    return g;
}

static sweep_case_t make_case(const char *label, int64_t size, generator_t gen_a,
                              generator_t gen_b, double target)
{
    sweep_case_t c;
    memset(&c, 0, sizeof c);
    snprintf(c.label, sizeof c.label, "%s", label);
    c.size = size > 0 ? size : 1;
    c.gen_a = gen_a;
    c.gen_b = gen_b;
    c.target = target;
    return c;
}

static int target_cases(int64_t size, sweep_case_t *out)
{
    /* Densities and the speedups the table asks for. */
    static const double both_density[] = {1.0, 0.5, 0.25, 0.125};
    static const double both_target[] = {0.97, 2.5, 6.0, 12.0};
    static const double one_density[] = {0.5, 0.25, 0.125};
    static const double one_target[] = {1.7, 3.2, 6.0};
    int count = 0;
    char label[48];
    for (int i = 0; i < 4; i++) {
        snprintf(label, sizeof label, "d = %g (both)", both_density[i]);
        out[count++] = make_case(label, size, density_generator(both_density[i]),
                                 density_generator(both_density[i]), both_target[i]);
    }
    for (int i = 0; i < 3; i++) {
        snprintf(label, sizeof label, "A only, d = %g", one_density[i]);
        out[count++] = make_case(label, size, density_generator(one_density[i]), dense_generator(),
                                 one_target[i]);
    }
    for (int i = 0; i < 3; i++) {
        snprintf(label, sizeof label, "B only, d = %g", one_density[i]);
        out[count++] = make_case(label, size, dense_generator(), density_generator(one_density[i]),
                                 one_target[i]);
    }
    /* "At least 0.97x at the smallest size and better with size": 0.97 is
     * the floor of all three. A size past INT64_MAX / 2 doubles to
     * INT64_MAX, which the run refuses as too large, rather than wrapping. */
    const int64_t sizes[] = {size / 4, size / 2, size <= INT64_MAX / 2 ? size * 2 : INT64_MAX};
    for (int i = 0; i < 3; i++) {
        int64_t s = sizes[i] > 0 ? sizes[i] : 1;
        snprintf(label, sizeof label, "d = 0.25 (both) at %lld^3", (long long)s);
        out[count++] = make_case(label, s, density_generator(0.25), density_generator(0.25), 0.97);
    }
    generator_t random = {GENERATOR_RANDOM, "", 1.0, 0.5};
    out[count++] = make_case("random 0.5", size, random, random, 0.97);
    return count;
}

static int density_cases(int64_t size, sweep_case_t *out)
{
    static const double densities[] = {1.0, 0.875, 0.75, 0.625, 0.5, 0.375, 0.25, 0.125, 0.0625};
    int count = 0;
    for (size_t i = 0; i < sizeof densities / sizeof densities[0]; i++) {
        char label[48];
        snprintf(label, sizeof label, "d = %g (both)", densities[i]);
        out[count++] = make_case(label, size, density_generator(densities[i]),
                                 density_generator(densities[i]), 0.0);
    }
    return count;
}

int sweep_cases(sweep_kind_t kind, int64_t size, sweep_case_t *out)
{
    switch (kind) {
    case SWEEP_TARGETS: return target_cases(size, out);
    case SWEEP_DENSITY: return density_cases(size, out);
    case SWEEP_NONE: break;
    }
    return 0;
}

const char *sweep_name(sweep_kind_t kind)
{
    switch (kind) {
    case SWEEP_TARGETS: return "targets";
    case SWEEP_DENSITY: return "density";
    case SWEEP_NONE: break;
    }
    return "none";
}

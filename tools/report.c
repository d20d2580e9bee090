#include "report.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>
#include <time.h>

#include "esmm.h"
#include "json.h"

static double percent(double fraction)
{
    return 100.0 * fraction;
}

static const char *reference_description(const char *reference)
{
    if (strcmp(reference, "cpu-float64") == 0)
        return "the float64 CPU reference";
    if (strcmp(reference, "cublas") == 0)
        return "cuBLAS (FP32)";
    return reference;
}

void report_print_header(FILE *f, const bench_summary_t *s)
{
    fprintf(f, "esmm %s bench: sgemm m=%" PRId64 " n=%" PRId64 " k=%" PRId64
               " op(A)=%c op(B)=%c alpha=%g beta=%g\n",
            esmm_version(), s->m, s->n, s->k, s->transa, s->transb, s->alpha, s->beta);
    fprintf(f, "device: %s (%s backend)\n", s->device, s->backend);
    fprintf(f, "inputs: generator %s, seed %" PRIu64 "\n", s->generator, s->seed);
    fprintf(f, "  A: %s; %.2f%% nonzero\n", s->source_a, percent(s->nonzero_a));
    fprintf(f, "  B: %s; %.2f%% nonzero\n", s->source_b, percent(s->nonzero_b));
    fprintf(f, "  useful products (both factors nonzero): %.2f%% of m*n*k\n",
            s->flops > 0.0 ? percent(s->effective_flops / s->flops) : 0.0);
    fprintf(f, "timing: median and min of %" PRId64 " runs after %" PRId64 " warm-up, %s",
            s->runs, s->warmup, s->clock);
    if (s->copies > 1)
        fprintf(f, ", cycling %" PRId64 " copies of A/B/C to defeat the L2 cache", s->copies);
    fputc('\n', f);
    if (s->tolerance > 0.0) {
        fprintf(f, "check: vs %s", reference_description(s->reference));
        if (s->reference_seconds >= 0.1)
            fprintf(f, " (computed in %.1f s)", s->reference_seconds);
        fprintf(f, ", error |x-ref|/(|ref| + |alpha| |op(A) row| |op(B) col| + |beta| |C|), "
                   "tolerance %.2e\n", s->tolerance);
    }
    else
        fprintf(f, "check: skipped\n");
}

void report_print_table_header(FILE *f, const bench_summary_t *s)
{
    char ratio[24];
    snprintf(ratio, sizeof ratio, "x %s", s->baseline);
    fprintf(f, "\n%-16s %10s %10s %9s %11s %9s %11s  %s\n", "kernel", "median ms", "min ms",
            "TFLOP/s", "eff TFLOP/s", ratio, "max rel err", "check");
}

void report_print_row(FILE *f, const bench_summary_t *s, const bench_row_t *row)
{
    char error[24] = "-";
    if (row->is_reference)
        snprintf(error, sizeof error, "(reference)");
    else if (!isnan(row->max_error))
        snprintf(error, sizeof error, "%.2e", row->max_error);
    if (!row->ran) {
        fprintf(f, "%-16s %10s %10s %9s %11s %9s %11s  %s\n", row->kernel, "-", "-", "-", "-", "-",
                error, row->check);
        fflush(f);
        return;
    }
    char ratio[24] = "-";
    if (isfinite(s->baseline_ms))
        snprintf(ratio, sizeof ratio, "%.2f", s->baseline_ms / row->median_ms);
    fprintf(f, "%-16s %10.4f %10.4f %9.4g %11.4g %9s %11s  %s\n", row->kernel, row->median_ms,
            row->min_ms, s->flops / row->median_ms * 1e-9,
            s->effective_flops / row->median_ms * 1e-9, ratio, error, row->check);
    fflush(f);
}

static void field_string(FILE *f, const char *key, const char *value)
{
    fprintf(f, ", \"%s\": ", key);
    json_write_string(f, value);
}

static void field_number(FILE *f, const char *key, double value)
{
    fprintf(f, ", \"%s\": ", key);
    json_write_number(f, value);
}

static void field_integer(FILE *f, const char *key, int64_t value)
{
    fprintf(f, ", \"%s\": %" PRId64, key, value);
}

static void write_result(FILE *f, const bench_summary_t *s, const bench_row_t *row)
{
    double ms = row->ran ? row->median_ms : NAN;
    char op[2] = {0, 0};
    fputs("    {\"op\": \"sgemm\"", f);
    field_string(f, "kernel", row->kernel);
    field_integer(f, "m", s->m);
    field_integer(f, "n", s->n);
    field_integer(f, "k", s->k);
    op[0] = s->transa;
    field_string(f, "transa", op);
    op[0] = s->transb;
    field_string(f, "transb", op);
    field_number(f, "alpha", s->alpha);
    field_number(f, "beta", s->beta);
    field_string(f, "generator", s->generator);
    field_number(f, "density_a", s->density_a);
    field_number(f, "density_b", s->density_b);
    field_number(f, "nonzero_a", s->nonzero_a);
    field_number(f, "nonzero_b", s->nonzero_b);
    if (s->pattern_a != NULL)
        field_string(f, "pattern_a", s->pattern_a);
    if (s->pattern_b != NULL)
        field_string(f, "pattern_b", s->pattern_b);
    if (s->file_a != NULL)
        field_string(f, "file_a", s->file_a);
    if (s->file_b != NULL)
        field_string(f, "file_b", s->file_b);
    fprintf(f, ", \"seed\": %" PRIu64 ", \"cached_b\": false", s->seed);
    field_number(f, "ms", ms);
    field_number(f, "min_ms", row->ran ? row->min_ms : NAN);
    field_number(f, "tflops", s->flops / ms * 1e-9);
    field_number(f, "effective_tflops", s->effective_flops / ms * 1e-9);
    field_string(f, "baseline", s->baseline);
    field_number(f, "baseline_ms", s->baseline_ms);
    field_number(f, "speedup", s->baseline_ms / ms);
    field_number(f, "max_rel_error", row->max_error);
    field_number(f, "tolerance", s->tolerance > 0.0 ? s->tolerance : NAN);
    field_string(f, "reference", row->is_reference ? "self" : s->reference);
    field_string(f, "check", row->check);
    field_integer(f, "runs", s->runs);
    field_integer(f, "warmup", s->warmup);
    field_string(f, "backend", s->backend);
    if (!row->ran)
        field_string(f, "error", row->error);
    fputc('}', f);
}

void report_write_json(FILE *f, const bench_summary_t *s, const bench_row_t *rows, int count,
                       const char *commit, const char *date)
{
    fputs("{\n  \"device\": ", f);
    json_write_string(f, s->device);
    fputs(",\n  \"commit\": ", f);
    json_write_string(f, commit);
    fputs(",\n  \"date\": ", f);
    json_write_string(f, date);
    fputs(",\n  \"esmm_version\": ", f);
    json_write_string(f, esmm_version());
    fputs(",\n  \"results\": [\n", f);
    for (int i = 0; i < count; i++) {
        write_result(f, s, &rows[i]);
        fputs(i + 1 < count ? ",\n" : "\n", f);
    }
    fputs("  ]\n}\n", f);
}

void report_utc_now(char *out, size_t cap)
{
    time_t now = time(NULL);
    struct tm *utc = gmtime(&now);
    if (utc == NULL || strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", utc) == 0)
        snprintf(out, cap, "unknown");
}

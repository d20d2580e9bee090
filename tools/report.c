#include "report.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>
#include <time.h>

#include "esmm.h"
#include "json.h"

/* A macro's value as a string literal, so messages quote the header's limits. */
#define VALUE_TEXT(x) #x
#define MACRO_TEXT(x) VALUE_TEXT(x)

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
    if (s->case_label != NULL)
        fprintf(f, "\n== %s ==\n", s->case_label);
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
    fprintf(f, "\n%-21s %10s %10s %8s %9s %11s %9s ", "kernel", "median ms", "min ms", "host us",
            "TFLOP/s", "eff TFLOP/s", ratio);
    if (s->show_gbps)
        fprintf(f, "%8s ", "GB/s");
    fprintf(f, "%11s  %s\n", "max rel err", "check");
}

void report_row_label(const bench_row_t *row, char *out, size_t cap)
{
    snprintf(out, cap, "%s%s", row->kernel,
             row->copy_kept ? " (cached B, copy)" : row->cached_b ? " (cached B)" : "");
}

const char *report_path_name(esmm_path_t path)
{
    switch (path) {
    case ESMM_PATH_NONE: return "none";
    case ESMM_PATH_DENSE: return "dense";
    case ESMM_PATH_SPARSE: return "sparse";
    }
    return "unknown";
}

const char *report_masks_name(esmm_masks_source_t masks)
{
    switch (masks) {
    case ESMM_MASKS_NONE: return "none";
    case ESMM_MASKS_USED: return "used";
    case ESMM_MASKS_PROBE_DENSE: return "probe-dense";
    case ESMM_MASKS_SMALL: return "small";
    case ESMM_MASKS_K_TOO_LONG: return "k-too-long";
    case ESMM_MASKS_NARROW: return "narrow";
    }
    return "unknown";
}

const char *report_masks_reason(esmm_masks_source_t masks)
{
    switch (masks) {
    case ESMM_MASKS_NONE: return "none asked for (nothing to multiply, or a dense kernel named)";
    case ESMM_MASKS_USED: return "masks used";
    case ESMM_MASKS_PROBE_DENSE:
        return "the dense probe found too few zero slices to skip; ran all of the dense work";
    case ESMM_MASKS_SMALL:
        return "under the size from which esmm_sgemm plans on the GPU "
               "(esmm_set_min_planned_work), it ran the dense kernel directly";
    case ESMM_MASKS_K_TOO_LONG:
        return "k is longer than the zero-skipping kernel can list; ran the dense kernel";
    case ESMM_MASKS_NARROW:
        return "C is at most ESMM_NARROW_C_SIDE (" MACRO_TEXT(ESMM_NARROW_C_SIDE)
               ") wide or tall, or at most ESMM_NARROW_PLANNED_C_SIDE ("
               MACRO_TEXT(ESMM_NARROW_PLANNED_C_SIDE) ") and the product under "
               MACRO_TEXT(ESMM_NARROW_WORK_FACTOR) " times the planning size: planning "
               "would not repay its launches; ran the dense kernel directly";
    }
    return "unknown";
}

/* "12.50%", or "-" for a density the call did not extract (negative). */
static void format_density(double density, char *out, size_t cap)
{
    if (density >= 0.0)
        snprintf(out, cap, "%.2f%%", percent(density));
    else
        snprintf(out, cap, "-");
}

static void print_info(FILE *f, const bench_row_t *row)
{
    if (!row->has_info) {
        if (row->info_error[0])
            fprintf(f, "    skip stats: unavailable (%s)\n", row->info_error);
        return;
    }
    const esmm_info_t *info = &row->info;
    char density_a[24], density_b[24];
    format_density(info->density_a, density_a, sizeof density_a);
    format_density(info->density_b, density_b, sizeof density_b);
    fprintf(f, "    skip stats: path %s, kernel %s%s%s%s; slice density A %s, B %s; "
               "%.2f%% of dense work run, %.2f%% skipped; probe and extraction ",
            report_path_name(info->path), row->info_kernel, info->form ? " (" : "",
            info->form ? info->form : "", info->form ? ")" : "", density_a, density_b,
            percent(info->work_fraction), percent(1.0 - info->work_fraction));
    if (info->extraction_ms >= 0.0)
        fprintf(f, "%.4f ms\n", info->extraction_ms);
    else
        fprintf(f, "not measured\n");
    if (info->masks != ESMM_MASKS_USED)
        fprintf(f, "    no masks: %s\n", report_masks_reason(info->masks));
}

void report_print_row(FILE *f, const bench_summary_t *s, const bench_row_t *row)
{
    char label[80], error[24] = "-", ratio[24] = "-", gbps[24] = "-";
    char median[24] = "-", min[24] = "-", host[24] = "-", tflops[24] = "-", effective[24] = "-";
    report_row_label(row, label, sizeof label);
    if (row->is_reference)
        snprintf(error, sizeof error, "(reference)");
    else if (!isnan(row->max_error))
        snprintf(error, sizeof error, "%.2e", row->max_error);
    if (row->ran) {
        snprintf(median, sizeof median, "%.4f", row->median_ms);
        snprintf(min, sizeof min, "%.4f", row->min_ms);
        if (!isnan(row->host_us))
            snprintf(host, sizeof host, "%.1f", row->host_us);
        if (row->operand) {
            snprintf(gbps, sizeof gbps, "%.1f", row->bytes / row->median_ms * 1e-6);
        } else {
            snprintf(tflops, sizeof tflops, "%.4g", s->flops / row->median_ms * 1e-9);
            snprintf(effective, sizeof effective, "%.4g", s->effective_flops / row->median_ms * 1e-9);
            if (isfinite(s->baseline_ms))
                snprintf(ratio, sizeof ratio, "%.2f", s->baseline_ms / row->median_ms);
        }
    }
    fprintf(f, "%-21s %10s %10s %8s %9s %11s %9s ", label, median, min, host, tflops, effective,
            ratio);
    if (s->show_gbps)
        fprintf(f, "%8s ", gbps);
    fprintf(f, "%11s  %s\n", error, row->check);
    print_info(f, row);
    fflush(f);
}

static void write_info(FILE *f, const bench_row_t *row)
{
    const esmm_info_t *info = &row->info;
    json_field_string(f, "path", report_path_name(info->path));
    json_field_string(f, "path_kernel", row->info_kernel);
    json_field_number(f, "density_a_measured", info->density_a >= 0.0 ? info->density_a : NAN);
    json_field_number(f, "density_b_measured", info->density_b >= 0.0 ? info->density_b : NAN);
    json_field_number(f, "work_fraction", info->work_fraction);
    json_field_number(f, "extraction_ms", info->extraction_ms >= 0.0 ? info->extraction_ms : NAN);
    json_field_string(f, "masks", report_masks_name(info->masks));
}

static void write_result(FILE *f, const bench_summary_t *s, const bench_row_t *row)
{
    double ms = row->ran ? row->median_ms : NAN;
    bool gemm = row->operand == 0;
    char op[2] = {0, 0};
    fprintf(f, "    {\"op\": \"%s\"", gemm ? "sgemm" : "extract");
    json_field_string(f, "kernel", row->kernel);
    if (s->case_label != NULL)
        json_field_string(f, "case", s->case_label);
    json_field_integer(f, "m", s->m);
    json_field_integer(f, "n", s->n);
    json_field_integer(f, "k", s->k);
    op[0] = s->transa;
    json_field_string(f, "transa", op);
    op[0] = s->transb;
    json_field_string(f, "transb", op);
    json_field_number(f, "alpha", s->alpha);
    json_field_number(f, "beta", s->beta);
    json_field_string(f, "generator", s->generator);
    json_field_number(f, "density_a", s->density_a);
    json_field_number(f, "density_b", s->density_b);
    json_field_number(f, "nonzero_a", s->nonzero_a);
    json_field_number(f, "nonzero_b", s->nonzero_b);
    if (s->pattern_a != NULL)
        json_field_string(f, "pattern_a", s->pattern_a);
    if (s->pattern_b != NULL)
        json_field_string(f, "pattern_b", s->pattern_b);
    if (s->file_a != NULL)
        json_field_string(f, "file_a", s->file_a);
    if (s->file_b != NULL)
        json_field_string(f, "file_b", s->file_b);
    fprintf(f, ", \"seed\": %" PRIu64, s->seed);
    json_field_bool(f, "cached_b", row->cached_b);
    json_field_bool(f, "copy_kept", row->copy_kept);
    json_field_number(f, "ms", ms);
    json_field_number(f, "min_ms", row->ran ? row->min_ms : NAN);
    json_field_number(f, "host_us", row->ran ? row->host_us : NAN);
    if (gemm) {
        json_field_number(f, "tflops", s->flops / ms * 1e-9);
        json_field_number(f, "effective_tflops", s->effective_flops / ms * 1e-9);
        json_field_string(f, "baseline", s->baseline);
        json_field_number(f, "baseline_ms", s->baseline_ms);
        json_field_number(f, "speedup", s->baseline_ms / ms);
    } else {
        op[0] = row->operand;
        json_field_string(f, "operand", op);
        json_field_number(f, "bytes", row->bytes);
        json_field_number(f, "gbps", row->bytes / ms * 1e-6);
        /* Nothing in the same process does what an extraction does. */
        json_field_string(f, "baseline", "none");
        json_field_number(f, "baseline_ms", NAN);
        json_field_number(f, "speedup", NAN);
    }
    if (gemm && s->target > 0.0 && strcmp(row->kernel, "esmm") == 0 && !row->cached_b)
        json_field_number(f, "target_speedup", s->target);
    if (row->has_info)
        write_info(f, row);
    json_field_number(f, "max_rel_error", row->max_error);
    json_field_number(f, "tolerance", s->tolerance > 0.0 ? s->tolerance : NAN);
    json_field_string(f, "reference", row->is_reference ? "self" : s->reference);
    json_field_string(f, "check", row->check);
    json_field_integer(f, "runs", s->runs);
    json_field_integer(f, "warmup", s->warmup);
    json_field_string(f, "backend", s->backend);
    if (!row->ran)
        json_field_string(f, "error", row->error);
    fputc('}', f);
}

void report_json_begin(report_json_t *j, FILE *f, const char *device, const char *commit,
                       const char *date)
{
    j->f = f;
    j->results = 0;
    fputs("{\n  \"device\": ", f);
    json_write_string(f, device);
    fputs(",\n  \"commit\": ", f);
    json_write_string(f, commit);
    fputs(",\n  \"date\": ", f);
    json_write_string(f, date);
    fputs(",\n  \"esmm_version\": ", f);
    json_write_string(f, esmm_version());
    fputs(",\n  \"results\": [", f);
}

void report_json_add(report_json_t *j, const bench_summary_t *s, const bench_row_t *rows,
                     int count)
{
    for (int i = 0; i < count; i++) {
        fputs(j->results++ > 0 ? ",\n" : "\n", j->f);
        write_result(j->f, s, &rows[i]);
    }
}

void report_json_end(report_json_t *j)
{
    fputs("\n  ]\n}\n", j->f);
}

void report_write_json(FILE *f, const bench_summary_t *s, const bench_row_t *rows, int count,
                       const char *commit, const char *date)
{
    report_json_t j;
    report_json_begin(&j, f, s->device, commit, date);
    report_json_add(&j, s, rows, count);
    report_json_end(&j);
}

static void format_ms(double ms, char *out, size_t cap)
{
    if (isfinite(ms))
        snprintf(out, cap, "%.4f", ms);
    else
        snprintf(out, cap, "-");
}

static void format_ratio(double baseline_ms, double ms, char *out, size_t cap)
{
    if (isfinite(baseline_ms) && isfinite(ms))
        snprintf(out, cap, "%.2f", baseline_ms / ms);
    else
        snprintf(out, cap, "-");
}

void report_print_sweep(FILE *f, const char *name, const char *baseline, const sweep_line_t *lines,
                        int count)
{
    bool any_target = false, any_cached = false;
    for (int i = 0; i < count; i++) {
        any_target = any_target || lines[i].target > 0.0;
        any_cached = any_cached || isfinite(lines[i].cached_ms);
    }
    fprintf(f, "\nsweep %s (medians; esmm end-to-end extracts both operands' patterns in every "
               "call%s):\n",
            name, any_cached ? ", cached B extracts B's once before timing" : "");
    char baseline_ms[32];
    snprintf(baseline_ms, sizeof baseline_ms, "%s ms", baseline);
    fprintf(f, "%-28s %6s %10s %10s %6s", "case", "size", baseline_ms, "esmm ms", "x");
    if (any_target)
        fprintf(f, " %6s %4s", "target", "met");
    if (any_cached)
        fprintf(f, " %10s %6s", "cached ms", "x");
    fprintf(f, "  %-7s %7s  %s\n", "path", "work", "check");
    int met = 0, targets = 0;
    for (int i = 0; i < count; i++) {
        const sweep_line_t *l = &lines[i];
        char base[24], esmm[24], ratio[24], cached[24], cached_ratio[24];
        format_ms(l->baseline_ms, base, sizeof base);
        format_ms(l->esmm_ms, esmm, sizeof esmm);
        format_ratio(l->baseline_ms, l->esmm_ms, ratio, sizeof ratio);
        format_ms(l->cached_ms, cached, sizeof cached);
        format_ratio(l->baseline_ms, l->cached_ms, cached_ratio, sizeof cached_ratio);
        fprintf(f, "%-28s %6" PRId64 " %10s %10s %6s", l->label, l->size, base, esmm, ratio);
        if (any_target) {
            char target[24] = "-";
            const char *verdict = "-";
            if (l->target > 0.0) {
                bool ok = isfinite(l->baseline_ms) && isfinite(l->esmm_ms) &&
                          l->baseline_ms / l->esmm_ms >= l->target;
                snprintf(target, sizeof target, "%.2f", l->target);
                verdict = ok ? "yes" : "NO";
                targets++;
                met += ok;
            }
            fprintf(f, " %6s %4s", target, verdict);
        }
        if (any_cached)
            fprintf(f, " %10s %6s", cached, cached_ratio);
        char work[24] = "-";
        if (l->has_info)
            snprintf(work, sizeof work, "%.1f%%", percent(l->info.work_fraction));
        fprintf(f, "  %-7s %7s  %s\n", l->has_info ? report_path_name(l->info.path) : "-", work,
                l->check);
    }
    if (targets > 0)
        fprintf(f, "targets met: %d of %d (esmm end-to-end, x %s)\n", met, targets, baseline);
    fflush(f);
}

void report_utc_now(char *out, size_t cap)
{
    time_t now = time(NULL);
    struct tm *utc = gmtime(&now);
    if (utc == NULL || strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", utc) == 0)
        snprintf(out, cap, "unknown");
}

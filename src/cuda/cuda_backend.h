/*
 * The one boundary between host C and CUDA: every function here is defined
 * with C linkage in src/cuda/launch.cu. Pointers are device pointers; stream
 * is a cudaStream_t. Nothing here synchronises with the host unless it says so.
 */
#ifndef ESMM_CUDA_BACKEND_H
#define ESMM_CUDA_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "esmm.h"
#include "csr_problem.h"
#include "gemm_problem.h"
#include "patterns/pattern_layout.h"

/* Number of usable CUDA devices; 0 when there is none or no driver. */
int esmm_cuda_device_count(void);

/* Device the calling thread uses, and its description. */
esmm_status_t esmm_cuda_current_device(int *device);
esmm_status_t esmm_cuda_device_info(int device, esmm_device_info_t *info);

/* Makes `device` current for a call on an object that lives there (a
 * destroy, say), giving the device that was current in *previous, which
 * esmm_cuda_leave_device makes current again. */
esmm_status_t esmm_cuda_enter_device(int device, int *previous);
void esmm_cuda_leave_device(int previous);

/* Launches remember per device what they asked the driver once (kernels'
 * shared-memory grants, the multiprocessor count); a device reset drops
 * those, so each new handle makes them ask again. */
void esmm_cuda_forget_launch_cache(void);

/*
 * Split-K. Where C has few 128 x 128 tiles for the SMs (skinny or small C,
 * long k), or a number that leaves the last turn of CTAs on the SMs mostly
 * empty, the dense and the zero-skipping kernels cut k into `splits` ranges
 * of k_per_split (a multiple of 32), one grid layer each, writing raw sums
 * into as many C-shaped buffers of partial sums (workspace), which
 * esmm_cuda_finish_splits adds in order of k into C. The rule depends on the
 * shape alone, so every path of a product splits alike (their bits stay
 * equal) and results do not depend on the GPU model.
 *
 * It picks the split with the least modelled time of the dense kernel and the
 * finishing pass on a reference GPU of ESMM_SPLIT_SMS SMs (the H100's). Equal
 * CTAs spread evenly, so the SM with the most takes ceil(CTAs / SMs) of them,
 * two at a time while it has two, and each turn costs a prologue and C's
 * stores besides its k. Fitted to the dense kernel's times on the H100 at 16
 * shapes from 768^3 to 2560^3, each under 1 to 16 splits (README item 4).
 * A split is taken only where it saves at least ESMM_SPLIT_GAIN_PERCENT
 * percent of the unsplit time: the skipping paths split alike and lose more
 * by it than the dense kernel (their closed launches grow with the layers,
 * pair and strip warps write and read partial sums, the warp lists add each
 * range in turn), so at 2560^3 a 6% gain on dense data cost both operands at
 * d = 0.125 40%.
 * Where C is at most ESMM_SPLIT_NARROW wide or tall, the dense kernel runs
 * smaller tiles (narrow_tiles in 08_pipelined.cu), and the earlier rule that
 * its tiles were measured with stays: aim at ESMM_SPLIT_CTAS CTAs each at
 * least ESMM_SPLIT_MIN_K deep, or where k is too short for that to give
 * every SM a CTA, finer ranges down to one k tile, up to one CTA an SM (a
 * CTA alone on its SM takes as long as its k).
 */
#define ESMM_SPLIT_TILE 128   /* the dense kernel's C tile */
#define ESMM_SPLIT_MIN_K 256  /* k below it does not split */
#define ESMM_SPLIT_MAX 32
#define ESMM_SPLIT_K_ALIGN 32 /* the dense kernel's k tile; a multiple of the mask's 8 */
#define ESMM_SPLIT_SMS 132    /* the reference GPU's SMs */
/* More tiles than this turn the SMs over many times: such products do not split. */
#define ESMM_SPLIT_TILES_AT_MOST (4 * ESMM_SPLIT_SMS)
/* Modelled times are integers in tenths of a picosecond, exact on every
 * compiler: the workspace's size is reckoned in C (esmm_split_bytes) and the
 * launches in CUDA's host code, and a split that rounding or contraction
 * decided differently in the two would write partial sums past the buffer. */
#define ESMM_SPLIT_SOLO_PER_K 976000  /* 97.6 ns per k: a CTA alone on its SM */
#define ESMM_SPLIT_PAIR_PER_K 1740000 /* 174 ns per k: each of two CTAs sharing an SM */
#define ESMM_SPLIT_TURN 30000000      /* 3 us: a turn of an SM's CTAs besides its k */
#define ESMM_SPLIT_PARTIAL 24         /* 2.4 ps: a float of partial sums or of C, finishing */
#define ESMM_SPLIT_GAIN_PERCENT 10
/* Deeper k does not split: it keeps the modelled times within int64_t (a
 * product that deep with C past ESMM_SPLIT_NARROW wide and tall would need
 * operands of over 500 GB). */
#define ESMM_SPLIT_K_MODELLED (INT64_C(1) << 31)
#define ESMM_SPLIT_NARROW 64
#define ESMM_SPLIT_CTAS 256 /* narrow products: CTAs to aim for */

typedef struct {
    int64_t splits, k_per_split;
} esmm_k_split_t;

static inline int64_t esmm_split_min(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* k cut into at most `want` ranges of a multiple of ESMM_SPLIT_K_ALIGN. */
static inline esmm_k_split_t esmm_split_ranges(int64_t k, int64_t want)
{
    const esmm_k_split_t none = {1, k};
    if (want < 2)
        return none;
    const int64_t per = ((k + want - 1) / want + ESMM_SPLIT_K_ALIGN - 1) / ESMM_SPLIT_K_ALIGN *
                        ESMM_SPLIT_K_ALIGN;
    const esmm_k_split_t split = {(k + per - 1) / per, per};
    return split.splits > 1 ? split : none;
}

/* Modelled time (tenths of a picosecond) of `split` over `tiles` tiles of an
 * m x n C. */
static inline int64_t esmm_split_time(int64_t m, int64_t n, int64_t tiles, esmm_k_split_t split)
{
    const int64_t per_sm = (tiles * split.splits + ESMM_SPLIT_SMS - 1) / ESMM_SPLIT_SMS;
    const int64_t depth = split.k_per_split;
    int64_t t = per_sm / 2 * (depth * ESMM_SPLIT_PAIR_PER_K + ESMM_SPLIT_TURN) +
                per_sm % 2 * (depth * ESMM_SPLIT_SOLO_PER_K + ESMM_SPLIT_TURN);
    if (split.splits > 1)
        t += (split.splits + 1) * m * n * ESMM_SPLIT_PARTIAL;
    return t;
}

/* Whether a split of modelled time `split_time` saves at least
 * ESMM_SPLIT_GAIN_PERCENT of `whole_time`. */
static inline int esmm_split_pays(int64_t split_time, int64_t whole_time)
{
    return split_time * 100 <= whole_time * (100 - ESMM_SPLIT_GAIN_PERCENT);
}

static inline esmm_k_split_t esmm_k_split(int64_t m, int64_t n, int64_t k)
{
    const esmm_k_split_t none = {1, k};
    const int64_t tiles_m = (m + ESMM_SPLIT_TILE - 1) / ESMM_SPLIT_TILE;
    const int64_t tiles_n = (n + ESMM_SPLIT_TILE - 1) / ESMM_SPLIT_TILE;
    const int64_t tiles = tiles_m * tiles_n;
    if (tiles == 0 || tiles > ESMM_SPLIT_TILES_AT_MOST || k < ESMM_SPLIT_MIN_K)
        return none;
    if (m <= ESMM_SPLIT_NARROW || n <= ESMM_SPLIT_NARROW) {
        if (tiles >= ESMM_SPLIT_CTAS / 2)
            return none;
        int64_t want = esmm_split_min((ESMM_SPLIT_CTAS + tiles - 1) / tiles, k / ESMM_SPLIT_MIN_K);
        const int64_t one_per_sm =
            esmm_split_min(ESMM_SPLIT_CTAS / 2 / tiles, k / ESMM_SPLIT_K_ALIGN);
        if (tiles * want < ESMM_SPLIT_CTAS / 2 && one_per_sm > want)
            want = one_per_sm;
        return esmm_split_ranges(k, esmm_split_min(want, ESMM_SPLIT_MAX));
    }
    if (k > ESMM_SPLIT_K_MODELLED)
        return none;
    const int64_t whole_time = esmm_split_time(m, n, tiles, none);
    esmm_k_split_t best = none;
    int64_t best_time = whole_time;
    for (int64_t want = 2; want <= ESMM_SPLIT_MAX && k / want >= ESMM_SPLIT_K_ALIGN; ++want) {
        const esmm_k_split_t split = esmm_split_ranges(k, want);
        if (split.splits != want)
            continue; /* the same ranges as a smaller want */
        const int64_t t = esmm_split_time(m, n, tiles, split);
        if (t < best_time) {
            best = split;
            best_time = t;
        }
    }
    return esmm_split_pays(best_time, whole_time) ? best : none;
}

/* Bytes of partial sums a product needs (0 when it does not split). */
static inline size_t esmm_split_bytes(int64_t m, int64_t n, int64_t k)
{
    const esmm_k_split_t s = esmm_k_split(m, n, k);
    return s.splits > 1 ? (size_t)s.splits * (size_t)m * (size_t)n * sizeof(float) : 0;
}

/* The dense kernels, ladder order. The last is the best and is what
 * esmm_sgemm runs on the dense path; it splits k as above, with `partials`
 * (esmm_split_bytes of device memory) for its sums, and finishes C itself. */
int esmm_cuda_kernel_count(void);
const char *esmm_cuda_kernel_name(int index);
int esmm_cuda_kernel_find(const char *name); /* index, or -1 */
esmm_status_t esmm_cuda_run_kernel(int index, const esmm_gemm_problem_t *p, float *partials,
                                   void *stream);

/* C = beta * C (beta == 0 writes zeros): the alpha == 0 or k == 0 case. */
esmm_status_t esmm_cuda_scale_c(int64_t m, int64_t n, float beta, float *c, int64_t ldc,
                                void *stream);

/* Pattern extraction on the device into the layout of
 * patterns/pattern_layout.h: bits and nonfinite each hold
 * strips * kblocks bytes (device memory). One pass over the operand; nothing
 * is allocated and nothing waits for the host. */
esmm_status_t esmm_cuda_extract_a(esmm_operation_t op, const float *a, int64_t lda, int64_t m,
                                  int64_t k, uint8_t *bits, uint8_t *nonfinite, void *stream);
esmm_status_t esmm_cuda_extract_b(esmm_operation_t op, const float *b, int64_t ldb, int64_t k,
                                  int64_t n, uint8_t *bits, uint8_t *nonfinite, void *stream);

struct esmm_plan_stats; /* esmm_plan_stats_t, below */

/* The k-major copies, as a set: of A (read in place of A by the swapped
 * orientation) and of B (by the normal orientation's), each also read by the
 * warp lists where the workspace holds it (esmm_copies_held) and by the dense
 * path where its rule makes it (esmm_dense_copies). */
typedef enum {
    ESMM_COPY_NONE = 0,
    ESMM_COPY_A = 1,   /* A (m x k, op N) copied k x m, read with op T */
    ESMM_COPY_B = 2,   /* B (n x k, op T) copied k x n, read with op N */
    ESMM_COPY_BOTH = 3 /* both, B's at esmm_wide_copy_b_at */
} esmm_copied_t;

/* Both operands of a product in one launch (the two above, sharing the GPU);
 * an operand whose bits are NULL is not read (its pattern was given). With
 * stats (device memory, filled by esmm_cuda_probe) the launch does nothing
 * when the probe sends the product to the dense path, and marks in
 * stats->nonfinite_seen each operand where it finds NaN/Inf.
 * extraction_copy (an esmm_copied_t set from esmm_copies_held, of operands
 * read here; with stats only) names the k-major copies the launch also
 * writes, each at its place in wide_copy (esmm_wide_copy_b_at), where the
 * probe's counts say so (esmm_extraction_copy_made). */
esmm_status_t esmm_cuda_extract_both(const esmm_gemm_problem_t *p, uint8_t *a_bits,
                                     uint8_t *a_nonfinite, uint8_t *b_bits,
                                     uint8_t *b_nonfinite, struct esmm_plan_stats *stats,
                                     esmm_copied_t extraction_copy, float *wide_copy,
                                     void *stream);

/* The masks of both operands of one product (device pointers; layout of
 * patterns/pattern_layout.h; strips_a = ceil(m/32), strips_b = ceil(n/32)). */
typedef struct {
    const uint8_t *a_bits, *a_nonfinite;
    const uint8_t *b_bits, *b_nonfinite;
} esmm_masks_t;

/* Which masks the zero-skipping kernel skips by. */
typedef enum {
    ESMM_SKIP_BY_A = 1,
    ESMM_SKIP_BY_B = 2,
    ESMM_SKIP_BY_BOTH = 3
} esmm_skip_by_t;

/* The operands as bits (esmm_plan_stats_t's nonfinite_seen and finite). */
#define ESMM_OPERAND_A 1u
#define ESMM_OPERAND_B 2u

/* Counts of the dense probe, packed: op(A)'s in the low 16 bits, op(B)'s in
 * the high (at most 8 * ESMM_PROBE_BLOCKS each), so slots add as words. */
#define ESMM_PROBE_SLOTS 64
typedef struct {
    uint32_t zeros;  /* sampled slices that are zero */
    uint32_t slices; /* sampled slices */
} esmm_probe_slot_t;

static inline ESMM_HOST_DEVICE uint32_t esmm_probe_pack(uint32_t a, uint32_t b)
{
    return a | b << 16;
}

/* Written on the device by esmm_cuda_probe and esmm_cuda_plan; the host
 * reads it only in esmm_get_last_info. work counts the (strip of A, strip of
 * B, k) triples whose product the masks do not prove zero, out of
 * ceil(m/32) * ceil(n/32) * k. steps_* count the (CTA, k) steps the skipping
 * kernel runs in each orientation: with A's strips leading (normal) it lists,
 * per strip of A, the k where the strip and any of 8 B strips are nonzero;
 * swapped, the same with the roles exchanged. */
typedef struct esmm_plan_stats {
    unsigned long long work;
    unsigned long long bits_a, bits_b; /* set mask bits of each operand */
    unsigned long long steps_normal, steps_swapped;
    unsigned long long union_skipped; /* k the union path leaves out (esmm_union_needs_k) */
    unsigned long long warp_list_pairs; /* strip pairs the warp lists have taken */
    unsigned int blocks_done;   /* the last plan block to finish decides */
    int decision;             /* an esmm_plan_decision_t */
    int orientation;          /* the cheaper skipping orientation, even when dense wins */
    int form;                 /* the skipping kernel's form that runs (esmm_plan_form_t) */
    /* NaN/Inf (ESMM_OPERAND_* bits): nonfinite_seen, the operands whose
     * extraction found a NaN/Inf slice, or whose masks were given (set by
     * the probe, as nothing here read them); finite, the others, written by
     * the plan's last block (0 until then: a plan that did not finish proves
     * nothing). The warp lists leave a finite operand's NaN/Inf bytes unread. */
    unsigned int nonfinite_seen, finite;
    /* The dense probe's counts (patterns/pattern_layout.h), one slot per
     * probe CTA (on the CPU, the totals in slot 0): all 0 when no probe ran. */
    esmm_probe_slot_t probe[ESMM_PROBE_SLOTS];
} esmm_plan_stats_t;

/* A planned product whose probe finds the zero shares of the two operands'
 * sampled slices adding up to less than 1 / ESMM_PROBE_ZERO_SUM runs the
 * dense kernel without extracting or planning. Skipping cannot pay there: a
 * step is skipped only where its leading strip or all strips of its tile are
 * zero, so an orientation keeps at least 1 - f_a - f_b of its steps, and the
 * pair warps run only from zero shares f_a + f_b of about 0.23
 * (esmm_plan_cost at most ESMM_PLAN_SKIP_BELOW: the kernel saves 12% of the
 * dense kernel's time there, and the extraction costs about 3% of it at
 * 4096^3); the warp lists, whose work is at least 1 - f_a - f_b, need 0.47.
 * With 2048 slices sampled per operand (256 blocks), even when all 8 slices
 * of each block agree (binomial over 256 blocks), a sum of 0.3 (where pair
 * warps save about 18%) reads as below 1/5 with probability about 2e-4 and a
 * sum of 0.25 with 0.03, and a sum of 0.15 reads as 1/5 or more (paying for
 * an extraction that leads to the dense kernel) with 0.013; a miss costs
 * time, never a result. Smaller operands are read whole. */
#define ESMM_PROBE_ZERO_SUM 5u

/* The rule over packed totals (esmm_probe_slot_t): f_a + f_b < 1 / ESMM_PROBE_ZERO_SUM. */
static inline ESMM_HOST_DEVICE int esmm_probe_rule(uint32_t zeros, uint32_t slices)
{
    const uint32_t zero_a = zeros & 0xffffu, zero_b = zeros >> 16;
    const uint32_t slices_a = slices & 0xffffu, slices_b = slices >> 16;
    return slices_a > 0 && slices_b > 0 &&
           ESMM_PROBE_ZERO_SUM * (zero_a * slices_b + zero_b * slices_a) < slices_a * slices_b;
}

/* The packed totals of all slots. */
static inline ESMM_HOST_DEVICE esmm_probe_slot_t esmm_probe_totals(const esmm_plan_stats_t *s)
{
    esmm_probe_slot_t total = {0, 0};
    for (int i = 0; i < ESMM_PROBE_SLOTS; i++) {
        total.zeros += s->probe[i].zeros;
        total.slices += s->probe[i].slices;
    }
    return total;
}

static inline ESMM_HOST_DEVICE int esmm_probe_dense(const esmm_plan_stats_t *s)
{
    const esmm_probe_slot_t total = esmm_probe_totals(s);
    return esmm_probe_rule(total.zeros, total.slices);
}

typedef enum {
    ESMM_PLAN_DENSE = 0,
    ESMM_PLAN_SKIP_NORMAL = 1, /* skipping kernel, A's strips leading */
    ESMM_PLAN_SKIP_SWAPPED = 2, /* skipping kernel on C^T, B's strips leading */
    ESMM_PLAN_UNION = 3         /* the dense kernel over the listed k (esmm_union_needs_k) */
} esmm_plan_decision_t;

/* A skipping path runs when its modelled time is at most this fraction of a
 * dense pass: the pair warps' from their steps (esmm_plan_cost), the warp
 * lists' from their work. Measured on the H100 at 4096^3, pair warps with A
 * at d = 0.75 ran at 0.854 of the dense kernel's time, both operands at 0.75
 * at 0.859. */
#define ESMM_PLAN_SKIP_BELOW 0.88
/* Pair warps take ESMM_PLAN_PAIR_PER_STEP of a dense pass per share of their
 * steps, plus ESMM_PLAN_PAIR_FIXED. Fitted on the H100 at 4096^3 (the dense
 * kernel 2.70 ms), A only at d = 0.75 / 0.5 / 0.25 / 0.125 / 0.0625: 0.854 /
 * 0.585 / 0.307 / 0.170 / 0.103 of a dense pass (4096 x 1024 x 4096: 0.58 at
 * 0.5, 0.31 at 0.25). Where both operands are sparse a warp also passes over
 * the entries its strips do not need, so their steps cost less (0.8-1.0). */
#define ESMM_PLAN_PAIR_PER_STEP 1.10
#define ESMM_PLAN_PAIR_FIXED 0.035
/* How the wide operand is read when its rows run along k: transposed on the
 * way in, 4 bytes at a time (steps cost ESMM_PLAN_TRANSPOSED_IN times more:
 * on the H100, pair warps took 0.64-0.68 of a dense pass at a quarter of the
 * steps and 1.01-1.04 at half, 1024 x 4096 x 4096 with op(B) = B^T and
 * 4096 x 1024 x 4096 with op(A) = A, strip warps 0.52-0.53 and 0.89-0.91),
 * or from a k-major copy made first. The copy moves 8 bytes per element of an
 * r x k operand where the dense pass does 2 r c k flops (c: C's other side),
 * so it costs ESMM_PLAN_COPY_COST / c of a dense pass (fitted on the H100 at
 * 4096^3 to 61 us, 2.1%; the copy now takes 49 us there, so this overstates
 * it by a quarter, on the safe side: not refitted); it is made when that is
 * at most ESMM_PLAN_COPY_AT_MOST (esmm_plan_copy_at_most: more in large NT
 * products), so small products keep to one kernel. */
#define ESMM_PLAN_TRANSPOSED_IN 2.4
#define ESMM_PLAN_COPY_COST 88.0
#define ESMM_PLAN_COPY_AT_MOST 0.05
/* Where both operands run along k (NT: op(A) = A, op(B) = B^T, a linear
 * layer's x @ W^T), each skipping orientation either copies its wide operand
 * or transposes it on the way in, and the copy is made from C's other side
 * 440 (ESMM_PLAN_COPY_COST / ESMM_PLAN_BOTH_K_COPY_AT_MOST). Measured on the
 * H100 against the edge at 1760 (esmm_sgemm, ms): 1024 x 4096 x 4096 with A
 * at d = 0.25 0.434 -> 0.297, 512 x 4096 x 4096 with A at d = 0.5 0.500
 * (dense) -> 0.315. Not elsewhere: in NN the swapped orientation copying A
 * looked as cheap as the normal one reading B directly and ran slower (1024^3,
 * both operands at d = 0.25: 0.0469 -> 0.0565), and the dense path keeps its
 * copies from 1760 (esmm_dense_copies). Only for products of at least
 * ESMM_PLAN_BOTH_K_COPY_MIN_PRODUCT multiply-adds m n k: below, the copy's
 * launch weighs more (512 x 1024 x 1024, A at d = 0.25: 0.0612 against
 * 0.0574 ms; 1024^3 NT on the dense path, which queues the launch closed:
 * 0.0907 against 0.0894). */
#define ESMM_PLAN_BOTH_K_COPY_AT_MOST 0.2
#define ESMM_PLAN_BOTH_K_COPY_MIN_PRODUCT 4294967296.0
#define ESMM_PLAN_TILE_STRIPS 8 /* B strips (256 columns) per CTA of the skipping kernel */
/* The skipping kernel's strip-warp form (each warp multiplies only the k its
 * own B strip needs) runs when a step needs at most ESMM_PLAN_STRIP_WARPS_AT_MOST
 * of its tile's strips on average and the orientation runs at least
 * ESMM_PLAN_STRIP_WARPS_FROM of the dense steps; else the pair-warp form
 * (faster arithmetic, a warp owning two strips, 4 CTAs an SM to the other's 2).
 * Fitted on the H100 at 4096^3: A only (strips needed 1, steps 0.5) favours
 * pair warps by 8%; both operands at d = 0.5 and 0.25 (needed about 0.5 and
 * 0.28, steps 0.5 and 0.22) strip warps by 10% and 6%. Since strip warps load
 * fragments further ahead and copy only the strips an entry needs, they also
 * win at d = 0.125 (0.19, steps 0.08) by 1% and at A 0.25, B 0.125 (steps
 * 0.11) by 6%; pair warps still win at d = 0.0625 (steps 0.03) by 3%. Where
 * the wide operand is transposed on the way in (where pair warps spill), strip
 * warps also win with one operand skipped: A at d = 0.5 and 0.25 on 1024 x
 * 4096 x 4096 with op(B) = B^T by 13% and 22%, B at 0.5 and 0.25 on 4096 x
 * 1024 x 4096 by 11% and 19%. In NT products that size the wide operand is
 * now copied (ESMM_PLAN_BOTH_K_COPY_AT_MOST): 1024 x 4096 x 4096 NT with A at
 * d = 0.25 ran pair warps on B's copy in 0.298 ms against strip warps' 0.433. */
#define ESMM_PLAN_STRIP_WARPS_AT_MOST 0.75
#define ESMM_PLAN_STRIP_WARPS_FROM 0.05
/* Both forms are queued (each launch the plan closes costs 3-4 us) only for
 * products of at least this many multiply-adds m n k; smaller ones run the
 * pair-warp form alone. Measured on the H100 at d = 0.25: at 1024^3 the strip
 * form saved 3 us, less than its launches cost; at 2048^3 it saved 17 us. */
#define ESMM_PLAN_STRIP_WARPS_MIN_PRODUCT 4294967296.0

/* How an orientation of the skipping kernel reads its wide operand. */
typedef enum {
    ESMM_WIDE_DIRECT = 0,     /* rows along m/n: 16-byte copies */
    ESMM_WIDE_TRANSPOSED = 1, /* rows along k, transposed on the way in */
    ESMM_WIDE_COPIED = 2      /* rows along k, copied k-major first */
} esmm_wide_read_t;

/* The read of a wide operand whose rows run along k when k_rows, for a C
 * whose other side is `other`: copied where the copy costs at most
 * `at_most` of a dense pass. */
static inline ESMM_HOST_DEVICE int esmm_wide_read(int k_rows, int64_t other, double at_most)
{
    if (!k_rows)
        return ESMM_WIDE_DIRECT;
    return ESMM_PLAN_COPY_COST <= at_most * (double)other ? ESMM_WIDE_COPIED
                                                          : ESMM_WIDE_TRANSPOSED;
}

/* The share of a dense pass a skipping orientation's copy may cost in an
 * m x n x k product. */
static inline ESMM_HOST_DEVICE double esmm_plan_copy_at_most(int64_t m, int64_t n, int64_t k,
                                                             esmm_operation_t op_a,
                                                             esmm_operation_t op_b)
{
    return op_a == ESMM_OP_N && op_b == ESMM_OP_T &&
                   (double)m * (double)n * (double)k >= ESMM_PLAN_BOTH_K_COPY_MIN_PRODUCT
               ? ESMM_PLAN_BOTH_K_COPY_AT_MOST
               : ESMM_PLAN_COPY_AT_MOST;
}

/* The wide operand of each orientation: op(B) (normal, its rows run along k
 * for op(B) = B^T) and op(A)^T (swapped, for op(A) = A). */
static inline ESMM_HOST_DEVICE int esmm_plan_normal_wide(int64_t m, int64_t n, int64_t k,
                                                         esmm_operation_t op_a,
                                                         esmm_operation_t op_b)
{
    return esmm_wide_read(op_b == ESMM_OP_T, m, esmm_plan_copy_at_most(m, n, k, op_a, op_b));
}

static inline ESMM_HOST_DEVICE int esmm_plan_swapped_wide(int64_t m, int64_t n, int64_t k,
                                                          esmm_operation_t op_a,
                                                          esmm_operation_t op_b)
{
    return esmm_wide_read(op_a == ESMM_OP_N, n, esmm_plan_copy_at_most(m, n, k, op_a, op_b));
}

/* An orientation's modelled time in the pair-warp form as a fraction of a
 * dense pass: its steps out of `all`, weighted by how its wide operand is read
 * (wide, esmm_wide_read_t), whose copy serves C's other side `other` and
 * costs nothing where the extraction already made it (copy_made), and by how
 * far its tiles reach past C against the dense kernel's (a step costs the
 * same where part of its tile lies past C): along C's side `span`, 32 *
 * ESMM_PLAN_TILE_STRIPS columns each against 128 (or 32 where C is at most 64
 * wide, item 13), and along the leading strips' side `lead`, 32 rows each
 * against 128 where C is wider than 64 both ways (narrower products run
 * other dense tiles along it, item 13, and are left as fitted). On the H100, 4096 x 128 x 4096
 * with A at d = 0.5 (half of each tile past C) took 0.180 ms in pair warps
 * against 0.168 on the dense path, and at 0.75 0.235 against 0.169. At
 * m = 1797 (the dense tiles span 1920 rows, the strips 1824) pair warps with
 * A's dead channels leaving 3/4 of k took 0.3267 ms against the union path's
 * 0.3334 (dense tiles), where at m = 2048 they took 0.3210 against 0.3002
 * (op(A) = A^T, n = k = 2048); the model still gives the union path the
 * first, by 4% where it lost by 2%. */
static inline ESMM_HOST_DEVICE double esmm_plan_cost(unsigned long long steps, double all,
                                                     int wide, int64_t other, int copy_made,
                                                     int64_t span, int64_t lead)
{
    const int64_t tile = 32 * ESMM_PLAN_TILE_STRIPS, dense_tile = span <= 64 ? 32 : 128;
    const double spanned = (double)((span + tile - 1) / tile * tile) /
                           (double)((span + dense_tile - 1) / dense_tile * dense_tile);
    const double led = lead <= 64 || span <= 64 ? 1.0
                                                : (double)((lead + 31) / 32 * 32) /
                                                      (double)((lead + 127) / 128 * 128);
    const double share = (double)steps / all * spanned * led;
    const double read = wide == ESMM_WIDE_TRANSPOSED ? share * ESMM_PLAN_TRANSPOSED_IN : share;
    const double copy =
        wide == ESMM_WIDE_COPIED && !copy_made ? ESMM_PLAN_COPY_COST / (double)other : 0.0;
    return ESMM_PLAN_PAIR_PER_STEP * read + ESMM_PLAN_PAIR_FIXED + copy;
}

/* The forms of the skipping kernel (esmm_plan_stats_t.form): pair and strip
 * warps run in one orientation (skip_gemm.cu), warp lists in none
 * (warp_list_gemm.cu: a warp per strip pair, with its own list of k). */
typedef enum {
    ESMM_FORM_PAIR_WARPS = 0,
    ESMM_FORM_STRIP_WARPS = 1,
    ESMM_FORM_WARP_LISTS = 2,
    ESMM_FORM_UNION = 3 /* no skipping kernel: the dense kernel's tiles (ESMM_PLAN_UNION) */
} esmm_plan_form_t;

/* The warp-list form's modelled time as a fraction of a dense pass: per share
 * of the strip-pair work, and fixed (listing every pair's k, writing C),
 * fitted on the H100 at 4096^3 against the dense kernel's 2.70 ms. The
 * kernel alone once took, both operands at d = 0.75 / 0.5 / 0.25 / 0.125 /
 * 0.0625, 0.946 / 0.424 / 0.118 / 0.041 / 0.026 (A at 0.5 and B at 0.75:
 * 0.633); its copies now take fewer instructions, and those times less the
 * calls' measured gains (end to end, the same products) come to 0.331 /
 * 0.094 / 0.036 at d = 0.5 / 0.25 / 0.125: 1.27 per share, where the fixed
 * part stays near 0.02. The warp lists run where they cost less than pair
 * warps (esmm_plan_cost). */
#define ESMM_PLAN_LIST_PER_WORK 1.27
#define ESMM_PLAN_LIST_FIXED 0.02

/* Whether skipping by `skip` (an esmm_skip_by_t) queues the strip-warp form
 * beside the pair-warp one for an m x n x k product: only skipping by both
 * operands can favour it, and only large products repay its launches. */
static inline ESMM_HOST_DEVICE int esmm_plan_queues_strip_warps(int skip, int64_t m, int64_t n,
                                                                int64_t k)
{
    return skip == ESMM_SKIP_BY_BOTH &&
           (double)m * (double)n * (double)k >= ESMM_PLAN_STRIP_WARPS_MIN_PRODUCT;
}

/* The k-major copies of the operands whose rows run along k (op(A) = A,
 * op(B) = B^T) whose copy costs at most `at_most` of a dense pass
 * (esmm_wide_read: A's serves C's n columns, B's its m rows). */
static inline ESMM_HOST_DEVICE esmm_copied_t esmm_copies_at(int64_t m, int64_t n,
                                                            esmm_operation_t op_a,
                                                            esmm_operation_t op_b,
                                                            double at_most)
{
    const int a = esmm_wide_read(op_a == ESMM_OP_N, n, at_most) == ESMM_WIDE_COPIED;
    const int b = esmm_wide_read(op_b == ESMM_OP_T, m, at_most) == ESMM_WIDE_COPIED;
    return (esmm_copied_t)((a ? ESMM_COPY_A : 0) | (b ? ESMM_COPY_B : 0));
}

/* The k-major copies a product's workspace holds: those its skipping
 * orientations read (esmm_plan_swapped_wide for A, esmm_plan_normal_wide for
 * B, by the share esmm_plan_copy_at_most), each at its place
 * (esmm_wide_copy_b_at). A planned call's extraction may write them as it
 * reads the operands (esmm_extraction_copy_made), which then reads each
 * operand once. */
static inline ESMM_HOST_DEVICE esmm_copied_t esmm_copies_held(int64_t m, int64_t n, int64_t k,
                                                              esmm_operation_t op_a,
                                                              esmm_operation_t op_b)
{
    return esmm_copies_at(m, n, op_a, op_b, esmm_plan_copy_at_most(m, n, k, op_a, op_b));
}

/* The held copies the dense path (and so the union path) reads: those made
 * where the copy costs at most ESMM_PLAN_COPY_AT_MOST of a dense pass (C's
 * other side from 1760), whatever the ops. Its kernel transposes an operand
 * along k on the way in, 4 bytes at a time, which costs about 9% of a dense
 * pass (on the H100 the kernel alone took 2.616 ms at 4096^3 with both
 * operands along m/n, TN; 2.861 with A along k, NN; 2.854 with B along k, TT;
 * 3.058 with both, NT; at 2048^3 0.336, 0.369, 0.366 and 0.393). Closer to
 * the skipping orientations' edge in NT it did not gain: reading B's copy
 * too, 1024 x 4096 x 4096 took 0.759 ms against 0.766, 768 x 4096 x 4096
 * 0.671 against 0.676, 1024^3 0.0916 against 0.0889 and 512 x 4096 x 4096
 * 0.746 against 0.465, all NT (esmm_sgemm on the H100). */
static inline ESMM_HOST_DEVICE esmm_copied_t esmm_dense_copies(int64_t m, int64_t n,
                                                               esmm_operation_t op_a,
                                                               esmm_operation_t op_b)
{
    return esmm_copies_at(m, n, op_a, op_b, ESMM_PLAN_COPY_AT_MOST);
}

/* The union path: the dense kernel's tiles over only the k that some strip
 * of op(A) and some strip of op(B) need, listed once for the whole product
 * by the plan (the exact form of the uniform pattern: the union of every
 * strip's mask, never the majority's). It pays where whole columns of op(A)
 * or rows of op(B) are zero in every strip (dead channels), which the
 * skipping kernels' 32-wide tiles also skip, but slower. k needs multiplying
 * unless one side is zero in every strip there and the other finite
 * (DESIGN.md, Exactness): a (b) is whether any strip of op(A) (op(B)) has a
 * nonzero at k, nf_a (nf_b) whether any has a NaN or an infinity. */
static inline ESMM_HOST_DEVICE int esmm_union_needs_k(int a, int b, int nf_a, int nf_b)
{
    return (a || nf_b) && (b || nf_a);
}

/* Its modelled time as a fraction of a dense pass: per share of k listed,
 * and fixed (the list's reads). Fitted on the H100 at 4096^3 (dead channels
 * in A, sparse-union end to end: 0.820 / 1.498 / 2.175 ms at a quarter / a
 * half / three quarters of k listed, 2.71 ms per whole k, against 2.63-2.65
 * for esmm on dense data with A along m, as its copy is read): a gathered k
 * costs 1.02-1.03 of a dense one, so the union path undercuts a dense pass
 * from 4% of k left out. Against a skipping path, a listed k costs
 * ESMM_PLAN_UNION_TRANSPOSED_IN more for each operand that the dense kernel
 * transposes on the way in (rows along k, not copied:
 * esmm_dense_transposed_in), which the pair warps' cost, fitted where none
 * is, leaves out (against a dense pass, the same kernel, it cancels).
 * Measured on the H100 with
 * A's dead channels (`--pattern-a 11111100`, 3/4 of k listed; forced paths
 * end to end, ms, union against pair warps): with one operand so, 2048^3 NN
 * 0.3292 against 0.3225, NT 0.3316 against 0.3299, 1797 x 2048 x 2048 NT
 * 0.3437 against 0.3282, 1024^3 NN 0.0870 against 0.0748, and 4096^3 NT
 * with half of k listed 1.612 against 1.593; with none, 2048^3 TN 0.3002
 * against 0.3210 and 4096^3 NN (A's copy read) 1.498 against 1.556. */
#define ESMM_PLAN_UNION_PER_K 1.03
#define ESMM_PLAN_UNION_TRANSPOSED_IN 0.12
#define ESMM_PLAN_UNION_FIXED 0.01

/* How many of the two operands the dense kernel (and so the union path)
 * transposes on the way in: rows along k and not in the k-major copy it
 * reads (copy: esmm_dense_copies's). */
static inline ESMM_HOST_DEVICE int esmm_dense_transposed_in(esmm_operation_t op_a,
                                                            esmm_operation_t op_b, int copy)
{
    return (op_a == ESMM_OP_N && !(copy & ESMM_COPY_A)) +
           (op_b == ESMM_OP_T && !(copy & ESMM_COPY_B));
}

/* What making the k-major copies `copied` (an esmm_copied_t set) costs, as a
 * fraction of an m x n dense pass (ESMM_PLAN_COPY_COST over C's other side). */
static inline ESMM_HOST_DEVICE double esmm_plan_copies_cost(int copied, int64_t m, int64_t n)
{
    return ((copied & ESMM_COPY_A) ? ESMM_PLAN_COPY_COST / (double)n : 0.0) +
           ((copied & ESMM_COPY_B) ? ESMM_PLAN_COPY_COST / (double)m : 0.0);
}

/* The union path's list in the workspace for a product of depth k, written
 * by the plan: a word of ESMM_UNION_K_PER_WORD bits per plan block (bit i:
 * k = word * 64 + i is listed), how many listed k lie before each
 * ESMM_UNION_TILE-deep k-tile (two per word, then the total), and the
 * listed k in increasing order, with ESMM_UNION_PAD entries more that a
 * kernel's stage may read past the end. ESMM_UNION_TILE is the dense
 * kernel's k-tile and divides every split's range (esmm_k_split), so a
 * split layer finds its range from two counts. */
#define ESMM_UNION_K_PER_WORD 64
#define ESMM_UNION_TILE 32
#define ESMM_UNION_PAD 32

typedef struct {
    unsigned long long *words;
    int *starts;
    int *entries;
} esmm_union_list_t;

static inline ESMM_HOST_DEVICE int64_t esmm_union_words(int64_t k)
{
    return (k + ESMM_UNION_K_PER_WORD - 1) / ESMM_UNION_K_PER_WORD;
}

/* Bytes of the list for depth k (a multiple of 8). */
static inline ESMM_HOST_DEVICE size_t esmm_union_list_bytes(int64_t k)
{
    const size_t words = (size_t)esmm_union_words(k);
    const size_t ints = 2 * words + 1 + ESMM_UNION_K_PER_WORD * words + ESMM_UNION_PAD;
    return words * sizeof(unsigned long long) + (ints * sizeof(int) + 7) / 8 * 8;
}

/* The list's parts in the esmm_union_list_bytes(k) at base. */
static inline ESMM_HOST_DEVICE esmm_union_list_t esmm_union_list_at(void *base, int64_t k)
{
    const int64_t words = esmm_union_words(k);
    esmm_union_list_t list;
    list.words = (unsigned long long *)base;
    list.starts = (int *)(list.words + words);
    list.entries = list.starts + 2 * words + 1;
    return list;
}

/* The share of k the union path lists, from the plan's statistics. */
static inline ESMM_HOST_DEVICE double esmm_union_share(const esmm_plan_stats_t *s, int64_t k)
{
    return k > 0 ? 1.0 - (double)s->union_skipped / (double)k : 0.0;
}

/* The union path's choice after the skipping paths': it runs where its
 * modelled time (union_share: listed k out of k; < 0 where not offered)
 * undercuts the path chosen, whose time is `chosen` (a dense pass: 1).
 * Against a dense pass, which is the same kernel reading the same operands,
 * a listed k costs ESMM_PLAN_UNION_PER_K; against a skipping path it also
 * pays ESMM_PLAN_UNION_TRANSPOSED_IN for each operand the dense kernel
 * transposes on the way in, and the copies it reads (esmm_dense_copies) that
 * the extraction did not make (made, an esmm_copied_t set). */
static inline ESMM_HOST_DEVICE void esmm_plan_take_union(esmm_plan_stats_t *s, double chosen,
                                                         double union_share, int64_t m,
                                                         int64_t n, esmm_operation_t op_a,
                                                         esmm_operation_t op_b, int made)
{
    if (union_share < 0.0)
        return;
    const double listed = ESMM_PLAN_UNION_PER_K * union_share + ESMM_PLAN_UNION_FIXED;
    int take = listed < 1.0;
    if (s->decision != ESMM_PLAN_DENSE) {
        const int copy = esmm_dense_copies(m, n, op_a, op_b);
        const double transposed =
            ESMM_PLAN_UNION_TRANSPOSED_IN * esmm_dense_transposed_in(op_a, op_b, copy);
        take = listed + ESMM_PLAN_UNION_PER_K * transposed * union_share +
                   esmm_plan_copies_cost(copy & ~made, m, n) <
               chosen;
    }
    if (take) {
        s->decision = ESMM_PLAN_UNION;
        s->form = ESMM_FORM_UNION;
    }
}

/* Fills decision, orientation and form from complete statistics of an
 * op_a / op_b product skipping by `skip` (each orientation reads its wide
 * operand as esmm_plan_normal_wide and esmm_plan_swapped_wide say);
 * warp_lists is what the warp-list form costs besides its own work (its
 * copy), or < 0 where it is not queued (esmm_plan_warp_lists). Where it is,
 * it takes the strip-warp form's place. made (an esmm_copied_t set) holds
 * the copies the extraction already wrote (esmm_extraction_copy_made), which
 * the paths reading them no longer pay for; where the warp lists are queued,
 * those are copies they read, so their copy cost falls by the same terms.
 * Last, the union path (esmm_plan_take_union) where union_share >= 0. */
static inline ESMM_HOST_DEVICE void esmm_plan_decide(esmm_plan_stats_t *s, int64_t m,
                                                     int64_t n, int64_t k,
                                                     esmm_operation_t op_a,
                                                     esmm_operation_t op_b, int skip,
                                                     double warp_lists, int made,
                                                     double union_share)
{
    const int normal_wide = esmm_plan_normal_wide(m, n, k, op_a, op_b);
    const int swapped_wide = esmm_plan_swapped_wide(m, n, k, op_a, op_b);
    const double strips_a = (double)((m + 31) / 32), strips_b = (double)((n + 31) / 32);
    const double tiles_a = (double)((m + 32 * ESMM_PLAN_TILE_STRIPS - 1) /
                                    (32 * ESMM_PLAN_TILE_STRIPS));
    const double tiles_b = (double)((n + 32 * ESMM_PLAN_TILE_STRIPS - 1) /
                                    (32 * ESMM_PLAN_TILE_STRIPS));
    const double all_normal = strips_a * tiles_b * (double)k;
    const double all_swapped = strips_b * tiles_a * (double)k;
    const double cost_normal =
        esmm_plan_cost(s->steps_normal, all_normal, normal_wide, m, made & ESMM_COPY_B, n, m);
    const double cost_swapped =
        esmm_plan_cost(s->steps_swapped, all_swapped, swapped_wide, n, made & ESMM_COPY_A, m, n);
    const int normal = cost_normal <= cost_swapped;
    s->orientation = normal ? ESMM_PLAN_SKIP_NORMAL : ESMM_PLAN_SKIP_SWAPPED;
    /* work counts strip pairs, each step a tile of ESMM_PLAN_TILE_STRIPS. */
    const double steps = (double)(normal ? s->steps_normal : s->steps_swapped);
    const double all_steps = normal ? all_normal : all_swapped;
    const double cost = normal ? cost_normal : cost_swapped;
    if (warp_lists >= 0.0) {
        warp_lists -= esmm_plan_copies_cost(made, m, n);
        warp_lists = warp_lists > 0.0 ? warp_lists : 0.0;
        const double work = (double)s->work / (strips_a * strips_b * (double)k);
        const double lists = ESMM_PLAN_LIST_PER_WORK * work + ESMM_PLAN_LIST_FIXED + warp_lists;
        if (lists < cost) {
            s->form = ESMM_FORM_WARP_LISTS;
            s->decision = lists > ESMM_PLAN_SKIP_BELOW ? ESMM_PLAN_DENSE : s->orientation;
            esmm_plan_take_union(s, lists, union_share, m, n, op_a, op_b, made);
            return;
        }
        s->form = ESMM_FORM_PAIR_WARPS;
    } else {
        const int transposed = (normal ? normal_wide : swapped_wide) == ESMM_WIDE_TRANSPOSED;
        const int strips =
            esmm_plan_queues_strip_warps(skip, m, n, k) &&
            (transposed ||
             (double)s->work <= ESMM_PLAN_STRIP_WARPS_AT_MOST * ESMM_PLAN_TILE_STRIPS * steps) &&
            steps >= ESMM_PLAN_STRIP_WARPS_FROM * all_steps;
        s->form = strips ? ESMM_FORM_STRIP_WARPS : ESMM_FORM_PAIR_WARPS;
    }
    s->decision = cost > ESMM_PLAN_SKIP_BELOW ? ESMM_PLAN_DENSE : s->orientation;
    esmm_plan_take_union(s, cost, union_share, m, n, op_a, op_b, made);
}

/* Row length (floats) of the k-major copy of an operand with `rows` rows
 * along m or n: a multiple of 4, so the kernel copies 16-byte chunks. */
static inline ESMM_HOST_DEVICE int64_t esmm_wide_copy_ld(int64_t rows)
{
    return (rows + 3) / 4 * 4;
}

/* The copies the warp-list form reads (ESMM_COPY_BOTH: A's and B's): it
 * reads both operands along m / n, so one stored along k is read from its
 * k-major copy (the one the skipping orientation with it in B's place reads). */
static inline ESMM_HOST_DEVICE esmm_copied_t esmm_plan_warp_lists_copy(esmm_operation_t op_a,
                                                                       esmm_operation_t op_b)
{
    return (esmm_copied_t)((op_a == ESMM_OP_N ? ESMM_COPY_A : 0) |
                           (op_b == ESMM_OP_T ? ESMM_COPY_B : 0));
}

/* Whether the extraction writes the copies of `candidates` (an esmm_copied_t
 * set, from esmm_copies_held), from the probe's packed totals
 * (esmm_probe_slot_t): each where at least 1 in ESMM_PROBE_COPY_SHARE of the
 * other operand's sampled slices is zero. The paths that read an operand's
 * copy are the ones that skip by the other operand's zeros (the warp lists,
 * and the orientation with its strips leading) and the dense path where its
 * own rule names the copy (esmm_dense_copies); only
 * skipping by the copied operand's own zeros alone reads none. A wrong guess
 * costs time (a copy made for nothing, or made by the copy launch after all),
 * never a result. */
#define ESMM_PROBE_COPY_SHARE 4u

static inline ESMM_HOST_DEVICE esmm_copied_t esmm_extraction_copy_made(uint32_t zeros,
                                                                       uint32_t slices,
                                                                       esmm_copied_t candidates)
{
    const uint32_t zero_a = zeros & 0xffffu, zero_b = zeros >> 16;
    const uint32_t slices_a = slices & 0xffffu, slices_b = slices >> 16;
    const int a = (candidates & ESMM_COPY_A) && slices_b > 0 &&
                  ESMM_PROBE_COPY_SHARE * zero_b >= slices_b;
    const int b = (candidates & ESMM_COPY_B) && slices_a > 0 &&
                  ESMM_PROBE_COPY_SHARE * zero_a >= slices_a;
    return (esmm_copied_t)((a ? ESMM_COPY_A : 0) | (b ? ESMM_COPY_B : 0));
}

/* The warp-list form's cost besides its work for a product (its copies, as a
 * fraction of a dense pass), or -1 where it is not queued: it takes the
 * strip-warp form's place (esmm_plan_queues_strip_warps) where the workspace
 * holds a copy of each operand along k (esmm_copies_held). */
static inline double esmm_plan_warp_lists(int skip, int64_t m, int64_t n, int64_t k,
                                          esmm_operation_t op_a, esmm_operation_t op_b)
{
    if (!esmm_plan_queues_strip_warps(skip, m, n, k) || k > 0x7fffffffLL - 32)
        return -1.0;
    const esmm_copied_t copied = esmm_plan_warp_lists_copy(op_a, op_b);
    if (copied & ~esmm_copies_held(m, n, k, op_a, op_b))
        return -1.0;
    return esmm_plan_copies_cost(copied, m, n);
}

/* Where B's k-major copy starts in the workspace's copy buffer (floats):
 * after A's where the workspace holds both (esmm_copies_held), else at its
 * start. */
static inline int64_t esmm_wide_copy_b_at(int64_t m, int64_t n, int64_t k, esmm_operation_t op_a,
                                          esmm_operation_t op_b)
{
    return esmm_copies_held(m, n, k, op_a, op_b) == ESMM_COPY_BOTH ? esmm_wide_copy_ld(m) * k : 0;
}

/* Floats of workspace the k-major copies need for a product (0: no path
 * copies): those esmm_copies_held names, each at its place. */
static inline int64_t esmm_wide_copy_floats(int64_t m, int64_t n, int64_t k,
                                            esmm_operation_t op_a, esmm_operation_t op_b)
{
    const esmm_copied_t held = esmm_copies_held(m, n, k, op_a, op_b);
    const int64_t end_a = (held & ESMM_COPY_A) ? esmm_wide_copy_ld(m) * k : 0;
    const int64_t end_b = (held & ESMM_COPY_B) ? esmm_wide_copy_b_at(m, n, k, op_a, op_b) +
                                                     esmm_wide_copy_ld(n) * k
                                               : 0;
    return end_a > end_b ? end_a : end_b;
}

/* Clears *stats (device memory) for a product's plan and, with probe set,
 * samples both operands into its probe slots (esmm_probe_dense): op(A) from
 * A, or from given->a_bits when that is not NULL (a pattern the caller
 * gave), and likewise op(B). One launch, queued first, so the extraction and
 * the plan can read the verdict. */
esmm_status_t esmm_cuda_probe(const esmm_gemm_problem_t *p, const esmm_masks_t *given, int probe,
                              esmm_plan_stats_t *stats, void *stream);

/* How a plan treats the union path (ESMM_PLAN_UNION). */
typedef enum {
    ESMM_UNION_NOT_OFFERED = 0,
    ESMM_UNION_OFFERED = 1, /* chosen where it costs least (esmm_plan_take_union) */
    ESMM_UNION_FORCED = 2   /* always chosen (the "sparse-union" kernel) */
} esmm_union_mode_t;

/* Fills *stats (device memory, cleared by esmm_cuda_probe) from the masks,
 * decision included (op_a and op_b give the copy layouts the decision
 * weighs, extraction_copy the copies the extraction was given to write);
 * does nothing, leaving the decision dense, when the probe sent the product
 * there. Unless union_mode is ESMM_UNION_NOT_OFFERED it also counts the k
 * the union path needs into list.words (esmm_union_list_bytes(k) at
 * esmm_union_list_at) and, where the decision is the union path, writes the
 * list. */
esmm_status_t esmm_cuda_plan(const esmm_masks_t *masks, int64_t m, int64_t n, int64_t k,
                             esmm_operation_t op_a, esmm_operation_t op_b, esmm_skip_by_t skip,
                             esmm_copied_t extraction_copy, esmm_union_mode_t union_mode,
                             esmm_union_list_t list, esmm_plan_stats_t *stats, void *stream);

/* The zero-skipping product. plan (device memory, filled by esmm_cuda_plan)
 * is read when skipping by both operands, and the warp lists count in it the
 * strip pairs they take (warp_list_pairs, which the probe cleared); with
 * planned != 0 the product runs
 * only if the plan selects skipping, and esmm_cuda_run_dense_gated runs the
 * dense kernel only if it does not, so both are queued without the host
 * reading the plan. A product that splits k writes its sums to partials;
 * esmm_cuda_finish_splits then completes C. wide_copy (esmm_wide_copy_floats
 * floats, or NULL) holds the k-major copies that the extraction or
 * esmm_cuda_copy_operand made, which each path reads where its rule copies
 * (esmm_plan_normal_wide, esmm_plan_swapped_wide, esmm_dense_copies,
 * esmm_plan_warp_lists_copy), each at its place (esmm_wide_copy_b_at).
 *
 * *settled (0 after esmm_cuda_plan) says whether a kernel queued since the
 * plan waited for it, so that a launch the plan closes may end without
 * waiting for the kernel ahead; the launches that queue a kernel set it. */
esmm_status_t esmm_cuda_run_skip(const esmm_gemm_problem_t *p, const esmm_masks_t *masks,
                                 esmm_skip_by_t skip, esmm_plan_stats_t *plan,
                                 int planned, float *partials, float *wide_copy, int *settled,
                                 void *stream);
/* The dense kernel behind the plan: it runs where the decision is dense, and
 * where it is the union path, over the k in list (esmm_cuda_plan's). */
esmm_status_t esmm_cuda_run_dense_gated(const esmm_gemm_problem_t *p,
                                        const esmm_plan_stats_t *gate, int settled,
                                        esmm_union_list_t list, float *partials,
                                        float *wide_copy, void *stream);
/* Queued before both: makes in wide_copy the k-major copies that the path
 * which runs reads (chosen on the device, as the kernels' gates choose: the
 * plan's decision when planned, else its orientation, or the one orientation
 * that skipping by A or B alone runs), but not those the extraction made
 * (extraction_copy, as given to esmm_cuda_extract_both). One launch; none
 * when no path copies or wide_copy is NULL (*settled as above). */
esmm_status_t esmm_cuda_copy_operand(const esmm_gemm_problem_t *p, esmm_skip_by_t skip,
                                     const esmm_plan_stats_t *plan, int planned,
                                     esmm_copied_t extraction_copy, float *wide_copy,
                                     int *settled, void *stream);

/* x (rows x cols, row stride ld) transposed into out, row stride
 * esmm_wide_copy_ld(rows): the k-major copy of an operand stored along k, as
 * a pattern keeps it (esmm_pattern_keep_copy). One launch, ungated. */
esmm_status_t esmm_cuda_transpose(const float *x, int64_t ld, int64_t rows, int64_t cols,
                                  float *out, void *stream);

/* C = alpha * (the partial sums, added in order of k) + beta * C, after a
 * split product's kernels; nothing when the product does not split, nor
 * where lists_plan (device memory, or NULL where the warp lists were not
 * queued) picked the warp lists (planned: as esmm_cuda_run_skip was asked),
 * which sum the ranges themselves and write C. */
esmm_status_t esmm_cuda_finish_splits(const esmm_gemm_problem_t *p, const float *partials,
                                      const esmm_plan_stats_t *lists_plan, int planned,
                                      void *stream);

/* Device memory and events for the API layer (cudaEvent_t as void *). */
esmm_status_t esmm_cuda_malloc(void **ptr, size_t bytes);
void esmm_cuda_free(void *ptr);
/* Copies device memory to the host after the stream's earlier work; waits. */
esmm_status_t esmm_cuda_copy_to_host(void *dst, const void *src, size_t bytes, void *stream);
esmm_status_t esmm_cuda_event_create(void **event);
void esmm_cuda_event_destroy(void *event);
esmm_status_t esmm_cuda_event_record(void *event, void *stream);
/* Orders work queued on stream `to` from now on after the work queued on
 * `from` so far (through event), on the device; nothing where either stream
 * is being captured, as a dependency between the two would cross the
 * capture's boundary. */
esmm_status_t esmm_cuda_stream_follow(void *event, void *from, void *to);
/* Milliseconds between two recorded events; waits for the second. */
esmm_status_t esmm_cuda_event_elapsed(void *start, void *stop, double *ms);

/* Waits for the whole device (pattern statistics only). */
esmm_status_t esmm_cuda_device_synchronize(void);

/* Waits for the stream (handle teardown only). */
esmm_status_t esmm_cuda_stream_synchronize(void *stream);

/* The architectures this library was compiled for, e.g. "80-real;90-real;90-virtual". */
const char *esmm_cuda_build_architectures(void);

/* CSR products (esmm_cpu_csrmm's arithmetic). transposed is W^T as CSR (from
 * esmm_cuda_csr_transpose) when the product is op(W) = W^T and W was
 * prepared, else NULL: T then scatters with atomics. With ESMM_CSR_B_SPARSE
 * workspace holds at least esmm_cuda_csrmm_workspace(k, n) bytes of device
 * memory; the other modes do not touch it. */
typedef enum {
    ESMM_CSR_B_AUTO = 0,  /* the default: rows of B read densely (the faster path measured) */
    ESMM_CSR_B_DENSE = 1, /* every row of B read densely; B is not compressed */
    ESMM_CSR_B_SPARSE = 2 /* every row of B through its compressed nonzeros */
} esmm_csr_b_mode_t;

/* SIZE_MAX where the path cannot take B: its compressed nonzeros' positions
 * would pass INT32_MAX (B of over 2^31 elements, as padded), or the bytes
 * would pass size_t. */
size_t esmm_cuda_csrmm_workspace(int64_t k, int64_t n);
esmm_status_t esmm_cuda_csrmm(const esmm_csrmm_problem_t *p, const esmm_csr_view_t *transposed,
                              esmm_csr_b_mode_t mode, void *workspace, void *stream);

/* Stable transpose of a valid w into device arrays sized as for
 * esmm_cpu_csr_transpose. Allocates its scratch and waits for the stream. */
esmm_status_t esmm_cuda_csr_transpose(const esmm_csr_view_t *w, int32_t *t_row_ptr,
                                      int32_t *t_col_idx, float *t_values, void *stream);

/* Checks w as esmm_cpu_csr_validate does; *valid is 1 or 0. flag is one int
 * of device memory the check writes. Waits for the stream. */
esmm_status_t esmm_cuda_csr_validate(const esmm_csr_view_t *w, int *flag, int *valid,
                                     void *stream);

#endif

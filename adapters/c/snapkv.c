/* snapkv.c: the SnapKV policy (see snapkv.h and SPEC.md section 2). */
#include "snapkv.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The sums must be IEEE binary64 additions rounded to nearest after every step, float and
 * double evaluated in their own types. x87 code (FLT_EVAL_METHOD 2) keeps 80-bit
 * intermediates and would change bits: build with -msse2 -mfpmath=sse there. 16 (gcc's GNU
 * modes on CPUs with AVX512-FP16) concerns _Float16 only and evaluates float and double as 0
 * does. -ffp-contract=off keeps any fused multiply-add out. */
#if !defined(FLT_EVAL_METHOD) || (FLT_EVAL_METHOD != 0 && FLT_EVAL_METHOD != 16)
#error "snapkv.c needs float and double evaluated in their own types: FLT_EVAL_METHOD 0 or 16 (on 32-bit x86 build with -msse2 -mfpmath=sse)"
#endif

struct snapkv {
    snapkv_params params;
    size_t count; /* kept positions */
    size_t cap;   /* slots allocated in every per-slot array */
    size_t width; /* ring columns allocated per slot (<= obs_window) */
    size_t used;  /* ring columns ever written (<= width); later ones are all zero */
    size_t slot;  /* the ring cursor */
    int64_t last; /* highest position ever admitted, -1 before the first */
    int wrapped;  /* the cursor has come back to slot 0 at least once */
    uint32_t *pos;    /* [cap] kept positions, ascending */
    float *hist;      /* [cap * width] ring rows, row i at hist + i * width */
    double *sums;     /* [cap] window sums: kept current by each step until the ring wraps,
                       * then scratch recomputed at each evict */
    double *pooled;   /* [cap] scratch: pooled scores */
    uint32_t *work;   /* [cap] scratch: pooling deque, then selection heap, then victims */
    unsigned char *flag; /* [cap] scratch: 1 marks a victim during compaction */
};

/* Per-slot bytes apart from the ring. */
#define SLOT_FIXED_BYTES \
    (sizeof(uint32_t) + 2 * sizeof(double) + sizeof(uint32_t) + sizeof(unsigned char))

static void set_error(snapkv_error *err, const char *format, ...) {
    va_list args;
    if (err == NULL) return;
    va_start(args, format);
    vsnprintf(err->message, sizeof err->message, format, args);
    va_end(args);
}

static snapkv_status check_range(const char *name, int64_t value, snapkv_error *err) {
    if (value < 0 || value > SNAPKV_INT31_MAX) {
        set_error(err, "%s must be in [0, 2^31 - 1], got %lld", name, (long long)value);
        return SNAPKV_INVALID_PARAMS;
    }
    return SNAPKV_OK;
}

snapkv_status snapkv_check_params(const snapkv_params *p, snapkv_error *err) {
    if (check_range("budget", p->budget, err) || check_range("recentWindow", p->recent_window, err)
        || check_range("obsWindow", p->obs_window, err)
        || check_range("poolKernel", p->pool_kernel, err))
        return SNAPKV_INVALID_PARAMS;
    if (p->budget < 1) {
        set_error(err, "budget must be >= 1, got %lld", (long long)p->budget);
        return SNAPKV_INVALID_PARAMS;
    }
    if (p->recent_window >= p->budget) {
        set_error(err, "recentWindow must be < budget, got recentWindow %lld with budget %lld",
                  (long long)p->recent_window, (long long)p->budget);
        return SNAPKV_INVALID_PARAMS;
    }
    if (p->obs_window < 1) {
        set_error(err, "obsWindow must be >= 1, got %lld", (long long)p->obs_window);
        return SNAPKV_INVALID_PARAMS;
    }
    if (p->pool_kernel < 1 || p->pool_kernel % 2 == 0) {
        set_error(err, "poolKernel must be odd and >= 1, got %lld", (long long)p->pool_kernel);
        return SNAPKV_INVALID_PARAMS;
    }
    return SNAPKV_OK;
}

snapkv_status snapkv_new(const snapkv_params *params, snapkv **out, snapkv_error *err) {
    snapkv *s;
    snapkv_status status = snapkv_check_params(params, err);
    if (status != SNAPKV_OK) return status;
    s = calloc(1, sizeof *s);
    if (s == NULL) {
        set_error(err, "out of memory");
        return SNAPKV_NO_MEMORY;
    }
    s->params = *params;
    s->last = -1;
    *out = s;
    return SNAPKV_OK;
}

void snapkv_free(snapkv *s) {
    if (s == NULL) return;
    free(s->pos);
    free(s->hist);
    free(s->sums);
    free(s->pooled);
    free(s->work);
    free(s->flag);
    free(s);
}

size_t snapkv_kept(const snapkv *s) { return s->count; }

size_t snapkv_footprint(const snapkv *s) {
    return sizeof *s + s->cap * snapkv_bytes_per_slot(s);
}

size_t snapkv_capacity(const snapkv *s) { return s->cap; }

size_t snapkv_bytes_per_slot(const snapkv *s) { return SLOT_FIXED_BYTES + s->width * sizeof(float); }

/* -- storage ------------------------------------------------------------------------------ */

/* realloc that leaves *ptr alone on failure; a grown array keeps its contents. */
static int grow_array(void *ptr, size_t count, size_t size) {
    void **slot = ptr;
    void *grown;
    if (count > SIZE_MAX / size) return 0;
    grown = realloc(*slot, count * size);
    if (grown == NULL) return 0;
    *slot = grown;
    return 1;
}

/* The slot capacity to hold `needed` positions: up to budget + 1 without overshooting it
 * (what an evict-after-every-step harness keeps), doubling beyond only when used. */
static size_t next_capacity(const snapkv *s, size_t needed) {
    size_t steady = (size_t)s->params.budget + 1;
    size_t cap = s->cap ? s->cap : 8;
    while (cap < needed) cap = cap > SIZE_MAX / 2 ? needed : cap * 2;
    if (s->cap < steady && cap > steady && needed <= steady) cap = steady;
    return cap;
}

/* Make room for `rows` slots of `width` ring columns. On failure nothing observable changes:
 * arrays that did grow keep their contents and the recorded capacity stays as it was. */
static int reserve(snapkv *s, size_t rows, size_t width) {
    if (rows > s->cap) {
        if (!grow_array(&s->pos, rows, sizeof *s->pos) || !grow_array(&s->sums, rows, sizeof *s->sums)
            || !grow_array(&s->pooled, rows, sizeof *s->pooled)
            || !grow_array(&s->work, rows, sizeof *s->work)
            || !grow_array(&s->flag, rows, sizeof *s->flag))
            return 0;
        memset(s->flag + s->cap, 0, rows - s->cap);
    } else {
        rows = s->cap;
    }
    if (rows > s->cap || width > s->width) {
        float *hist;
        size_t i;
        if (width != 0 && rows > SIZE_MAX / sizeof(float) / width) return 0;
        if (width == s->width) {
            if (width != 0 && !grow_array(&s->hist, rows * width, sizeof *s->hist)) return 0;
        } else {
            /* New columns must read as zero for the rows already kept. */
            hist = calloc(rows * width, sizeof *hist);
            if (hist == NULL) return 0;
            for (i = 0; i < s->count; i++)
                if (s->width != 0)
                    memcpy(hist + i * width, s->hist + i * s->width, s->width * sizeof *hist);
            free(s->hist);
            s->hist = hist;
            s->width = width;
        }
    }
    s->cap = rows;
    return 1;
}

/* -- the step ----------------------------------------------------------------------------- */

snapkv_status snapkv_check_position(const snapkv *s, int64_t pos, snapkv_error *err) {
    if (pos < 0 || pos > SNAPKV_INT31_MAX) {
        set_error(err, "pos must be in [0, 2^31 - 1], got %lld", (long long)pos);
        return SNAPKV_INVALID_POSITION;
    }
    if (pos <= s->last) {
        set_error(err, "pos %lld must be greater than the last admitted position %lld",
                  (long long)pos, (long long)s->last);
        return SNAPKV_INVALID_POSITION;
    }
    return SNAPKV_OK;
}

static snapkv_status check_attention(const snapkv *s, const float *attn, size_t n,
                                     snapkv_error *err) {
    size_t i;
    if (attn == NULL) return SNAPKV_OK;
    if (n != s->count) {
        set_error(err, "attn has %lu weight(s) but %lu position(s) are kept", (unsigned long)n,
                  (unsigned long)s->count);
        return SNAPKV_INVALID_ATTENTION;
    }
    for (i = 0; i < n; i++) {
        /* -0.0 compares equal to 0 and is accepted; NaN fails both tests and is refused. */
        if (!(attn[i] >= 0.0f)) {
            set_error(err, "attn[%lu] is negative: %.9g", (unsigned long)i, (double)attn[i]);
            return SNAPKV_INVALID_ATTENTION;
        }
        if (attn[i] > FLT_MAX) {
            set_error(err, "attn[%lu] is beyond the float32 range", (unsigned long)i);
            return SNAPKV_INVALID_ATTENTION;
        }
    }
    return SNAPKV_OK;
}

snapkv_status snapkv_step(snapkv *s, int64_t pos, const float *attn, size_t n, snapkv_error *err) {
    snapkv_status status;
    size_t width = s->width, i;
    status = snapkv_check_position(s, pos, err);
    if (status != SNAPKV_OK) return status;
    status = check_attention(s, attn, n, err);
    if (status != SNAPKV_OK) return status;
    if (attn != NULL && s->slot >= width) {
        size_t obs = (size_t)s->params.obs_window;
        width = width > obs / 2 ? obs : width * 2;
        if (width < s->slot + 1) width = s->slot + 1;
    }
    if ((s->count == s->cap || width > s->width)
        && !reserve(s, s->count == s->cap ? next_capacity(s, s->count + 1) : s->cap, width)) {
        set_error(err, "out of memory admitting position %lld", (long long)pos);
        return SNAPKV_NO_MEMORY;
    }
    if (attn != NULL) {
        for (i = 0; i < n; i++) s->hist[i * s->width + s->slot] = attn[i];
        /* Until the ring wraps, slots are written in index order 0, 1, 2, ... and every slot
         * past the cursor is zero, so adding each weight as it arrives performs exactly the
         * additions of a slot-order sum, in the same order: the same bits, without re-adding
         * every written column at each evict (which made a huge obsWindow cost O(steps)). */
        if (!s->wrapped)
            for (i = 0; i < n; i++) s->sums[i] += (double)attn[i];
        if (s->slot + 1 > s->used) s->used = s->slot + 1;
        s->slot = (s->slot + 1) % (size_t)s->params.obs_window;
        if (s->slot == 0) s->wrapped = 1;
    }
    s->pos[s->count] = (uint32_t)pos;
    s->sums[s->count] = 0.0;
    if (s->width != 0) memset(s->hist + s->count * s->width, 0, s->width * sizeof *s->hist);
    s->count++;
    s->last = pos;
    return SNAPKV_OK;
}

/* -- scoring ------------------------------------------------------------------------------ */

/* sums[i]: ring slots 0 upward, each widened from float32, added left to right from +0.0.
 * Columns never written are all zero and add nothing, so only `used` columns are read. */
static void window_sums(snapkv *s) {
    size_t i, c;
    if (!s->wrapped) return; /* the running sums are current (see snapkv_step) */
    for (i = 0; i < s->count; i++) {
        double sum = 0.0;
        if (s->used != 0) { /* hist is NULL until the first column is written */
            const float *row = s->hist + i * s->width;
            for (c = 0; c < s->used; c++) sum += (double)row[c];
        }
        s->sums[i] = sum;
    }
}

/* pooled[i] = max(sums[j]) over kept indices j in [i - r, i + r] clamped to the list. For a
 * small radius, 2r passes of elementwise maxima (each pass one neighbour offset, clamping by
 * its bounds; branch-free and vectorisable). Otherwise a monotonic deque of indices (in
 * `work`), O(kept) whatever the kernel. max is exact, so both give the same bits. */
static void pool(snapkv *s) {
    size_t n = s->count, r = (size_t)(s->params.pool_kernel - 1) / 2;
    size_t head = 0, tail = 0, next = 0, i;
    uint32_t *dq = s->work;
    if (n == 0) return; /* the arrays may not exist yet */
    if (r <= 8) {
        const double *sums = s->sums;
        double *pooled = s->pooled;
        size_t offset;
        memcpy(pooled, sums, n * sizeof *pooled);
        for (offset = 1; offset <= r && offset < n; offset++) {
            for (i = 0; i + offset < n; i++) {
                double right = sums[i + offset], left = sums[i];
                pooled[i] = right > pooled[i] ? right : pooled[i];
                pooled[i + offset] = left > pooled[i + offset] ? left : pooled[i + offset];
            }
        }
        return;
    }
    for (i = 0; i < n; i++) {
        size_t hi = r >= n - 1 - i ? n - 1 : i + r;
        size_t lo = i >= r ? i - r : 0;
        for (; next <= hi; next++) {
            while (tail > head && s->sums[dq[tail - 1]] <= s->sums[next]) tail--;
            dq[tail++] = (uint32_t)next;
        }
        while (dq[head] < lo) head++;
        s->pooled[i] = s->sums[dq[head]];
    }
}

size_t snapkv_scores(snapkv *s, const uint32_t **positions, const double **sums,
                     const double **pooled) {
    window_sums(s);
    pool(s);
    *positions = s->pos;
    *sums = s->sums;
    *pooled = s->pooled;
    return s->count;
}

/* -- eviction ----------------------------------------------------------------------------- */

/* Kept index a ranks before b (is evicted first): smaller pooled, then lower position. Kept
 * indices are in position order, so the lower index is the lower position. */
static int ranks_before(const double *pooled, uint32_t a, uint32_t b) {
    return pooled[a] < pooled[b] || (pooled[a] == pooled[b] && a < b);
}

/* Restore the max-heap (root = the candidate ranked last) below `at`. */
static void sift_down(uint32_t *heap, size_t size, size_t at, const double *pooled) {
    for (;;) {
        size_t child = 2 * at + 1, worst = at;
        uint32_t tmp;
        if (child < size && ranks_before(pooled, heap[worst], heap[child])) worst = child;
        if (child + 1 < size && ranks_before(pooled, heap[worst], heap[child + 1]))
            worst = child + 1;
        if (worst == at) return;
        tmp = heap[at];
        heap[at] = heap[worst];
        heap[worst] = tmp;
        at = worst;
    }
}

/* Keep in heap[0..k) the k candidates that rank first, in O(candidates * log k). */
static void select_victims(snapkv *s, size_t candidates, size_t k) {
    uint32_t *heap = s->work;
    size_t size = 0, i;
    for (i = 0; i < candidates; i++) {
        if (size < k) {
            size_t at = size++;
            heap[at] = (uint32_t)i;
            while (at > 0 && ranks_before(s->pooled, heap[(at - 1) / 2], heap[at])) {
                uint32_t tmp = heap[at];
                heap[at] = heap[(at - 1) / 2];
                heap[(at - 1) / 2] = tmp;
                at = (at - 1) / 2;
            }
        } else if (ranks_before(s->pooled, (uint32_t)i, heap[0])) {
            heap[0] = (uint32_t)i;
            sift_down(heap, size, 0, s->pooled);
        }
    }
}

size_t snapkv_evict(snapkv *s, const uint32_t **victims) {
    size_t budget = (size_t)s->params.budget, recent = (size_t)s->params.recent_window;
    size_t k, i, kept = 0, out = 0;
    *victims = s->work;
    if (s->count <= budget) return 0;
    k = s->count - budget;
    window_sums(s);
    pool(s);
    /* recent < budget, so the candidates (all but the recent highest) always outnumber k. */
    select_victims(s, s->count - recent, k);
    for (i = 0; i < k; i++) s->flag[s->work[i]] = 1;
    /* One pass in position order: victims come out ascending into work (out <= i, so the
     * heap is no longer needed where it is overwritten), survivors move down with rings. */
    for (i = 0; i < s->count; i++) {
        if (s->flag[i]) {
            s->flag[i] = 0;
            s->work[out++] = s->pos[i];
            continue;
        }
        if (kept != i) {
            s->pos[kept] = s->pos[i];
            s->sums[kept] = s->sums[i];
            if (s->width != 0)
                memcpy(s->hist + kept * s->width, s->hist + i * s->width,
                       s->width * sizeof *s->hist);
        }
        kept++;
    }
    s->count = kept;
    return out;
}

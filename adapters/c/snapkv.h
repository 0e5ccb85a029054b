/* snapkv.h: a C99 implementation of the decode-time SnapKV KV-cache eviction policy.
 *
 * Written from SPEC.md section 2 (the policy). The library does no I/O and knows nothing of
 * JSON; adapter.c puts protocol v1 around it.
 *
 * Memory (sized by use): per kept slot a 4-byte position, a float32
 * history ring, and scratch (two doubles for sums and pooled scores, one uint32 of work space
 * for pooling and selection, one flag byte). Ring columns are allocated lazily, as the cursor
 * first reaches them, so an obsWindow of 2^31 - 1 costs nothing until steps are observed.
 * The slot capacity grows to budget + 1 (the steady state of a harness that evicts after
 * every step) and doubles beyond that only when the harness steps several times between
 * evictions.
 *
 * Every fallible call is atomic: when it returns anything but SNAPKV_OK the policy is exactly
 * as it was before the call.
 */
#ifndef SNAPKV_H
#define SNAPKV_H

#include <stddef.h>
#include <stdint.h>

/* The largest value of any parameter and of any position: 2^31 - 1. */
#define SNAPKV_INT31_MAX 2147483647

typedef enum {
    SNAPKV_OK = 0,
    SNAPKV_INVALID_PARAMS,
    SNAPKV_INVALID_POSITION,
    SNAPKV_INVALID_ATTENTION,
    SNAPKV_NO_MEMORY
} snapkv_status;

/* Construction parameters. int64_t so that a caller can pass any value it read (negative or
 * too large) and get the library's verdict rather than a silent truncation. */
typedef struct {
    int64_t budget;        /* >= 1 */
    int64_t recent_window; /* 0 <= recent_window < budget */
    int64_t obs_window;    /* >= 1 */
    int64_t pool_kernel;   /* odd, >= 1 */
} snapkv_params;

/* Where a refusal explains itself. Callers may pass NULL when they do not want the text. */
typedef struct {
    char message[200];
} snapkv_error;

typedef struct snapkv snapkv;

/* Validate params (each in [0, 2^31 - 1] plus the relations above). */
snapkv_status snapkv_check_params(const snapkv_params *params, snapkv_error *err);

/* Validate params and create an empty policy in *out. The registry's seed is not taken: SnapKV
 * never uses it. Returns SNAPKV_INVALID_PARAMS or SNAPKV_NO_MEMORY on failure (*out untouched). */
snapkv_status snapkv_new(const snapkv_params *params, snapkv **out, snapkv_error *err);

void snapkv_free(snapkv *policy);

/* The number of kept positions (the length a step's attention must have). */
size_t snapkv_kept(const snapkv *policy);

/* SNAPKV_OK when pos is in [0, 2^31 - 1] and above every position admitted so far. */
snapkv_status snapkv_check_position(const snapkv *policy, int64_t pos, snapkv_error *err);

/* One decode step. attn is NULL for a null attention (nothing written, the ring cursor does
 * not move), else exactly n == snapkv_kept() float32 weights in ascending kept-position order,
 * each finite and not negative (-0.0 counts as zero). The position is judged before the
 * attention. Then pos is admitted with an all-zero history. */
snapkv_status snapkv_step(snapkv *policy, int64_t pos, const float *attn, size_t n,
                          snapkv_error *err);

/* Evict max(0, kept - budget) positions. Returns how many; *victims (may be NULL when the
 * count is 0) holds them in ascending order until the next call on this policy. Never fails:
 * all the scratch it needs was allocated when the positions were admitted. */
size_t snapkv_evict(snapkv *policy, const uint32_t **victims);

/* What an evict now would rank by. Returns the kept count; the three arrays stay valid until
 * the next call on this policy. */
size_t snapkv_scores(snapkv *policy, const uint32_t **positions, const double **sums,
                     const double **pooled);

/* Bytes the policy holds on the heap (its struct and arrays, not the allocator's overhead). */
size_t snapkv_footprint(const snapkv *policy);

/* Slots allocated (kept positions it can hold before it must grow). */
size_t snapkv_capacity(const snapkv *policy);

/* Bytes of one kept slot at capacity: position, ring columns allocated so far, scratch. */
size_t snapkv_bytes_per_slot(const snapkv *policy);

#endif

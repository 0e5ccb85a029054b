/* memory.c: measure the C port's memory per kept slot (README.md quotes its output).
 *
 * Three runs, each through the library alone (no adapter, no JSON):
 *   defaults   budget 512, recentWindow 16, obsWindow 16, poolKernel 7, evict after every
 *              step, 4096 steps with attention: the steady state, which should stay near
 *              45 KB at the defaults (see README.md);
 *   batched    the same, but 64 steps between evictions (capacity must grow past budget + 1);
 *   huge       every parameter near 2^31 - 1 and 1000 observed steps: memory follows use.
 * For each it prints the library's own count (snapkv_footprint) and, on glibc, how much less
 * malloc has in use once the policy is freed (mallinfo2), which adds the allocator's
 * per-chunk overhead to the footprint.
 */
#define _GNU_SOURCE /* mallinfo2 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "snapkv.h"

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
#include <malloc.h>
#define HAVE_MALLINFO2 1
/* Chunks in use, from the arena and mmap'd. glibc counts chunks parked in its per-thread cache
 * as in use, so the Makefile runs this with that cache off (glibc.malloc.tcache_count=0). */
static long heap_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return (long)(info.uordblks + info.hblkhd);
}
#else
#define HAVE_MALLINFO2 0
static long heap_in_use(void) { return 0; }
#endif

static uint32_t lcg_state = 12345;

/* A deterministic weight in [0, 1): the figures must not depend on a library's rand(). */
static float next_weight(void) {
    lcg_state = lcg_state * 1664525u + 1013904223u;
    return (float)(lcg_state >> 8) / 16777216.0f;
}

static int run(const char *name, snapkv_params params, long steps, long evict_every) {
    snapkv *policy;
    snapkv_error err;
    float *attn = NULL;
    size_t attn_cap = 0, i, most = 0, footprint, per_slot, capacity;
    long step, in_use;
    if (snapkv_new(&params, &policy, &err) != SNAPKV_OK) {
        fprintf(stderr, "%s: %s\n", name, err.message);
        return 1;
    }
    for (step = 0; step < steps; step++) {
        size_t n = snapkv_kept(policy);
        const uint32_t *victims;
        if (n > attn_cap) {
            attn_cap = 2 * n;
            attn = realloc(attn, attn_cap * sizeof *attn);
            if (attn == NULL) return 1;
        }
        for (i = 0; i < n; i++) attn[i] = next_weight();
        if (snapkv_step(policy, step, attn, n, &err) != SNAPKV_OK) {
            fprintf(stderr, "%s: %s\n", name, err.message);
            return 1;
        }
        if (snapkv_kept(policy) > most) most = snapkv_kept(policy);
        if ((step + 1) % evict_every == 0) snapkv_evict(policy, &victims);
    }
    footprint = snapkv_footprint(policy);
    per_slot = snapkv_bytes_per_slot(policy);
    capacity = snapkv_capacity(policy);
    free(attn); /* the attention buffer is the caller's, not the policy's */
    in_use = heap_in_use(); /* before printf: stdout's buffer is malloc'd lazily */
    snapkv_free(policy);
    in_use -= heap_in_use();
    printf("%-9s kept at most %5lu  capacity %5lu  per slot %4lu B  footprint %8lu B (%.1f KiB)",
           name, (unsigned long)most, (unsigned long)capacity, (unsigned long)per_slot,
           (unsigned long)footprint, footprint / 1024.0);
    if (HAVE_MALLINFO2) printf("  malloc in use %8ld B", in_use);
    printf("\n");
    return 0;
}

int main(void) {
    const snapkv_params defaults = {512, 16, 16, 7};
    const snapkv_params huge = {SNAPKV_INT31_MAX, SNAPKV_INT31_MAX - 1, SNAPKV_INT31_MAX,
                                SNAPKV_INT31_MAX};
    return run("defaults", defaults, 4096, 1) || run("batched", defaults, 4096, 64)
           || run("huge", huge, 1000, 1);
}

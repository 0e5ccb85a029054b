/* adapter.c: protocol v1 (SPEC.md section 3) over stdin/stdout for the C SnapKV port.
 *
 * One JSON request per line in, exactly one JSON response per line out, in order, written
 * with one write(2) per response (no buffering to flush). Lines may be of any length. A line
 * of only whitespace is skipped, as the reference adapter does. `bye` answers and exits 0;
 * end of input exits 0.
 *
 * Judgement order (SPEC.md §6, item 1): not an object / no integer id / unknown op / a
 * required field missing -> bad-request; then no-policy; then invalid-position; then
 * invalid-attention. Params, pos and seed must be JSON integers: 4.0 and 4e0 are refused.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "snapkv.h"

#define NO_NODE ((size_t)-1)
#define EXCERPT_MAX 60

/* -- output --------------------------------------------------------------------------------- */

typedef struct {
    char *data;
    size_t len, cap;
} buffer;

static void die(const char *why) {
    fprintf(stderr, "snapkv-adapter: %s\n", why);
    exit(70);
}

static void reserve_bytes(buffer *b, size_t more) {
    if (b->cap - b->len >= more) return;
    while (b->cap - b->len < more) {
        if (b->cap > SIZE_MAX / 2) die("out of memory");
        b->cap = b->cap ? b->cap * 2 : 4096;
    }
    b->data = realloc(b->data, b->cap);
    if (b->data == NULL) die("out of memory");
}

static void put(buffer *b, const char *bytes, size_t n) {
    reserve_bytes(b, n);
    memcpy(b->data + b->len, bytes, n);
    b->len += n;
}

static void puts_raw(buffer *b, const char *text) { put(b, text, strlen(text)); }

static void put_uint(buffer *b, unsigned long value) {
    char digits[24];
    put(b, digits, (size_t)snprintf(digits, sizeof digits, "%lu", value));
}

/* A JSON string: quotes, backslashes and control bytes escaped, other bytes as they are (the
 * input was checked to be UTF-8 and excerpts end on a character boundary). */
static void put_string(buffer *b, const char *text, size_t n) {
    size_t i;
    put(b, "\"", 1);
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c == '"' || c == '\\') {
            char escaped[2] = {'\\', (char)c};
            put(b, escaped, 2);
        } else if (c < 0x20) {
            char escaped[8];
            put(b, escaped, (size_t)snprintf(escaped, sizeof escaped, "\\u%04x", c));
        } else {
            put(b, (const char *)&c, 1);
        }
    }
    put(b, "\"", 1);
}

/* The shortest %.Ng text that reads back as exactly `value` (a round trip is monotone in N,
 * so a binary search over 1..17 finds it), with ".0" added when it would read as an integer. */
static void put_double(buffer *b, double value) {
    char text[320]; /* %.17g needs about 25 bytes; the rest silences -Wformat-truncation */
    int lo = 1, hi = 17, n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        snprintf(text, sizeof text, "%.*g", mid, value);
        if (strtod(text, NULL) == value)
            hi = mid;
        else
            lo = mid + 1;
    }
    n = snprintf(text, sizeof text, "%.*g", lo, value);
    if (strcspn(text, ".e") == (size_t)n) {
        memcpy(text + n, ".0", 3);
        n += 2;
    }
    put(b, text, (size_t)n);
}

static int write_all(const char *data, size_t n) {
    while (n > 0) {
        ssize_t wrote = write(STDOUT_FILENO, data, n);
        if (wrote < 0 && errno == EINTR) continue;
        if (wrote <= 0) return 0;
        data += wrote;
        n -= (size_t)wrote;
    }
    return 1;
}

/* -- requests ------------------------------------------------------------------------------- */

typedef struct {
    snapkv *policy;
    json_doc doc;
    buffer out;
    float *weights;
    size_t weights_cap;
    int finished;
} session;

/* Why a request was refused. kind == NULL means it succeeded. */
typedef struct {
    const char *kind;
    char message[320];
} verdict;

static int refuse(verdict *v, const char *kind, const char *format, ...) {
    va_list args;
    v->kind = kind;
    va_start(args, format);
    vsnprintf(v->message, sizeof v->message, format, args);
    va_end(args);
    return 0;
}

/* The raw text of node i, cut to EXCERPT_MAX bytes on a UTF-8 character boundary. */
static const char *excerpt(const session *s, size_t i, char *out, size_t size) {
    const json_node *node = &s->doc.nodes[i];
    size_t n = node->len;
    const char *text = s->doc.text + node->start;
    if (n > EXCERPT_MAX) {
        n = EXCERPT_MAX - 3;
        while (n > 0 && ((unsigned char)text[n] & 0xC0) == 0x80) n--;
        snprintf(out, size, "%.*s...", (int)n, text);
    } else {
        snprintf(out, size, "%.*s", (int)n, text);
    }
    return out;
}

static int is_integer(const session *s, size_t i) {
    return s->doc.nodes[i].type == JSON_NUMBER && s->doc.nodes[i].integral;
}

static int required(session *s, size_t request, const char *op, const char *field,
                    size_t *index, verdict *v) {
    *index = json_member(&s->doc, request, field);
    if (*index == NO_NODE)
        return refuse(v, "bad-request", "%s request is missing '%s'", op, field);
    return 1;
}

static int need_policy(const session *s, verdict *v) {
    if (s->policy == NULL) return refuse(v, "no-policy", "no policy: send an accepted new first");
    return 1;
}

static const char *status_kind(snapkv_status status) {
    switch (status) {
    case SNAPKV_INVALID_PARAMS: return "invalid-params";
    case SNAPKV_INVALID_POSITION: return "invalid-position";
    case SNAPKV_INVALID_ATTENTION: return "invalid-attention";
    case SNAPKV_NO_MEMORY: die("out of memory"); break;
    case SNAPKV_OK: break;
    }
    return NULL;
}

static int library_verdict(snapkv_status status, const snapkv_error *err, verdict *v) {
    if (status == SNAPKV_OK) return 1;
    return refuse(v, status_kind(status), "%s", err->message);
}

static int op_hello(session *s, size_t request, verdict *v) {
    char text[EXCERPT_MAX + 1];
    size_t protocol;
    if (!required(s, request, "hello", "protocol", &protocol, v)) return 0;
    if (!is_integer(s, protocol) || json_integer(&s->doc, protocol) != 1)
        return refuse(v, "unsupported", "this adapter speaks protocol 1, not %s",
                      excerpt(s, protocol, text, sizeof text));
    puts_raw(&s->out, ",\"protocol\":1,\"implementation\":{\"name\":\"snapkv-c\",\"language\":"
                      "\"c\",\"version\":\"0.1.0\"},\"capabilities\":[\"scores\"]");
    return 1;
}

static int read_params(session *s, size_t raw, snapkv_params *params, verdict *v) {
    static const char *const names[4] = {"budget", "recentWindow", "obsWindow", "poolKernel"};
    int64_t *fields[4];
    char text[EXCERPT_MAX + 1];
    size_t i, value[4];
    fields[0] = &params->budget;
    fields[1] = &params->recent_window;
    fields[2] = &params->obs_window;
    fields[3] = &params->pool_kernel;
    if (s->doc.nodes[raw].type != JSON_OBJECT)
        return refuse(v, "invalid-params", "params must be an object, got %s",
                      excerpt(s, raw, text, sizeof text));
    for (i = 0; i < 4; i++) {
        value[i] = json_member(&s->doc, raw, names[i]);
        if (value[i] == NO_NODE)
            return refuse(v, "invalid-params", "params is missing %s", names[i]);
    }
    for (i = raw + 1; i < s->doc.nodes[raw].end; i = s->doc.nodes[i + 1].end) {
        size_t k = 0;
        while (k < 4 && !json_string_is(&s->doc, i, names[k])) k++;
        if (k == 4)
            return refuse(v, "invalid-params", "params has unknown field %s",
                          excerpt(s, i, text, sizeof text));
    }
    for (i = 0; i < 4; i++) {
        if (!is_integer(s, value[i]))
            return refuse(v, "invalid-params", "%s must be an integer, got %s", names[i],
                          excerpt(s, value[i], text, sizeof text));
        *fields[i] = json_integer(&s->doc, value[i]);
    }
    return 1;
}

static int op_new(session *s, size_t request, verdict *v) {
    char text[EXCERPT_MAX + 1];
    size_t raw, seed;
    snapkv_params params;
    snapkv_error err;
    snapkv *policy;
    if (!required(s, request, "new", "params", &raw, v)
        || !required(s, request, "new", "seed", &seed, v))
        return 0;
    /* The seed feeds the registry's Rng, which SnapKV never uses: any JSON integer will do. */
    if (!is_integer(s, seed))
        return refuse(v, "invalid-params", "seed must be an integer, got %s",
                      excerpt(s, seed, text, sizeof text));
    if (!read_params(s, raw, &params, v)) return 0;
    if (!library_verdict(snapkv_new(&params, &policy, &err), &err, v)) return 0;
    snapkv_free(s->policy); /* only now: a refused new leaves the earlier policy in place */
    s->policy = policy;
    return 1;
}

/* float32 nearest to d, ties to even; beyond the float32 range it is +-infinity. The explicit
 * bound keeps the out-of-range conversion (undefined behaviour in C99) from ever happening. */
static float narrow(double d) {
    if (fabs(d) >= 0x1.ffffffp+127) return d < 0 ? -HUGE_VALF : HUGE_VALF;
    return (float)d;
}

/* Read attn into s->weights: *n weights, or *null_attn for null. */
static int read_attention(session *s, size_t attn, size_t *n, int *null_attn, verdict *v) {
    char text[EXCERPT_MAX + 1];
    const json_node *list = &s->doc.nodes[attn];
    size_t i, k = 0;
    *null_attn = list->type == JSON_NULL;
    *n = 0;
    if (*null_attn) return 1;
    if (list->type != JSON_ARRAY)
        return refuse(v, "invalid-attention", "attn must be null or a list, got %s",
                      excerpt(s, attn, text, sizeof text));
    /* Never NULL, even for an empty list: snapkv_step reads a NULL attn as a null step. */
    if (list->count > s->weights_cap || s->weights == NULL) {
        free(s->weights);
        s->weights_cap = list->count > 64 ? list->count : 64;
        s->weights = malloc(s->weights_cap * sizeof *s->weights);
        if (s->weights == NULL) die("out of memory");
    }
    for (i = attn + 1; i < list->end; i = s->doc.nodes[i].end, k++) {
        if (s->doc.nodes[i].type != JSON_NUMBER)
            return refuse(v, "invalid-attention", "attn[%lu] is not a number: %s",
                          (unsigned long)k, excerpt(s, i, text, sizeof text));
        s->weights[k] = narrow(json_double(&s->doc, i));
    }
    *n = k;
    return 1;
}

static int op_step(session *s, size_t request, verdict *v) {
    char text[EXCERPT_MAX + 1];
    size_t pos, attn, n;
    int64_t position;
    int null_attn;
    snapkv_error err;
    if (!required(s, request, "step", "pos", &pos, v)
        || !required(s, request, "step", "attn", &attn, v) || !need_policy(s, v))
        return 0;
    if (!is_integer(s, pos))
        return refuse(v, "invalid-position", "pos must be an integer, got %s",
                      excerpt(s, pos, text, sizeof text));
    position = json_integer(&s->doc, pos);
    if (!library_verdict(snapkv_check_position(s->policy, position, &err), &err, v)) return 0;
    if (!read_attention(s, attn, &n, &null_attn, v)) return 0;
    return library_verdict(
        snapkv_step(s->policy, position, null_attn ? NULL : s->weights, n, &err), &err, v);
}

static void put_positions(buffer *b, const uint32_t *positions, size_t n) {
    size_t i;
    put(b, "[", 1);
    for (i = 0; i < n; i++) {
        if (i) put(b, ",", 1);
        put_uint(b, positions[i]);
    }
    put(b, "]", 1);
}

static void put_doubles(buffer *b, const double *values, size_t n) {
    size_t i;
    put(b, "[", 1);
    for (i = 0; i < n; i++) {
        if (i) put(b, ",", 1);
        put_double(b, values[i]);
    }
    put(b, "]", 1);
}

static int op_evict(session *s, size_t request, verdict *v) {
    const uint32_t *victims;
    size_t n;
    (void)request;
    if (!need_policy(s, v)) return 0;
    n = snapkv_evict(s->policy, &victims);
    puts_raw(&s->out, ",\"victims\":");
    put_positions(&s->out, victims, n);
    return 1;
}

static int op_scores(session *s, size_t request, verdict *v) {
    const uint32_t *positions;
    const double *sums, *pooled;
    size_t n;
    (void)request;
    if (!need_policy(s, v)) return 0;
    n = snapkv_scores(s->policy, &positions, &sums, &pooled);
    puts_raw(&s->out, ",\"positions\":");
    put_positions(&s->out, positions, n);
    puts_raw(&s->out, ",\"sums\":");
    put_doubles(&s->out, sums, n);
    puts_raw(&s->out, ",\"pooled\":");
    put_doubles(&s->out, pooled, n);
    return 1;
}

static int op_bye(session *s, size_t request, verdict *v) {
    (void)request;
    (void)v;
    s->finished = 1;
    return 1;
}

static const struct {
    const char *name;
    int (*handle)(session *, size_t, verdict *);
} OPS[] = {{"hello", op_hello}, {"new", op_new},       {"step", op_step},
           {"evict", op_evict}, {"scores", op_scores}, {"bye", op_bye}};

/* Answer one line into s->out. */
static void answer(session *s, const char *line, size_t len) {
    char text[EXCERPT_MAX + 1];
    verdict v;
    size_t id = NO_NODE, op, k, mark;
    int parsed;
    v.kind = NULL;
    s->out.len = 0;
    if (!json_valid_utf8(line, len)) {
        refuse(&v, "bad-request", "request is not UTF-8");
    } else if ((parsed = json_parse(&s->doc, line, len)) <= 0) {
        if (parsed < 0) die("out of memory");
        refuse(&v, "bad-request", "request is not a JSON object line: %s at byte %lu",
               s->doc.error, (unsigned long)s->doc.error_at);
    } else if (s->doc.nodes[0].type != JSON_OBJECT) {
        refuse(&v, "bad-request", "request must be an object, got %s",
               excerpt(s, 0, text, sizeof text));
    } else if ((id = json_member(&s->doc, 0, "id")) == NO_NODE) {
        refuse(&v, "bad-request", "request has no id");
    } else if (!is_integer(s, id)) {
        refuse(&v, "bad-request", "id must be an integer, got %s", excerpt(s, id, text, sizeof text));
    }
    /* SPEC §3.1: only an integer id is echoed; every other answer carries null. */
    puts_raw(&s->out, "{\"id\":");
    if (id != NO_NODE && is_integer(s, id))
        put(&s->out, s->doc.text + s->doc.nodes[id].start, s->doc.nodes[id].len);
    else
        puts_raw(&s->out, "null");
    if (v.kind == NULL) {
        op = json_member(&s->doc, 0, "op");
        for (k = 0; op != NO_NODE && k < sizeof OPS / sizeof OPS[0]; k++)
            if (json_string_is(&s->doc, op, OPS[k].name)) break;
        if (op == NO_NODE) {
            refuse(&v, "bad-request", "request has no op");
        } else if (k == sizeof OPS / sizeof OPS[0]) {
            refuse(&v, "bad-request", "unknown op %s", excerpt(s, op, text, sizeof text));
        } else {
            mark = s->out.len; /* a refusing handler has written nothing after this */
            puts_raw(&s->out, ",\"ok\":true");
            if (!OPS[k].handle(s, 0, &v)) s->out.len = mark;
        }
    }
    if (v.kind != NULL) {
        puts_raw(&s->out, ",\"ok\":false,\"error\":{\"kind\":\"");
        puts_raw(&s->out, v.kind);
        puts_raw(&s->out, "\",\"message\":");
        put_string(&s->out, v.message, strlen(v.message));
        put(&s->out, "}", 1);
    }
    put(&s->out, "}\n", 2);
}

static int is_blank(const char *line, size_t len) {
    size_t i;
    for (i = 0; i < len; i++)
        if (!strchr(" \t\n\r", line[i]) || line[i] == '\0') return 0;
    return 1;
}

int main(void) {
    session s;
    buffer in = {NULL, 0, 0};
    size_t start = 0, scanned = 0;
    int eof = 0;
    memset(&s, 0, sizeof s);
    while (!s.finished) {
        char *newline = in.len > scanned ? memchr(in.data + scanned, '\n', in.len - scanned) : NULL;
        size_t len;
        if (newline == NULL && !eof) {
            ssize_t got;
            if (start > 0) { /* slide the unfinished line to the front before reading more */
                memmove(in.data, in.data + start, in.len - start);
                in.len -= start;
                start = 0;
            }
            scanned = in.len;
            reserve_bytes(&in, 65536 + 1); /* +1: room for the terminator json_parse needs */
            got = read(STDIN_FILENO, in.data + in.len, 65536);
            if (got < 0 && errno == EINTR) continue;
            if (got < 0) die("cannot read stdin");
            if (got == 0) eof = 1;
            in.len += (size_t)got;
            continue;
        }
        if (newline == NULL && start == in.len) break; /* end of input, nothing pending */
        len = (newline ? (size_t)(newline - in.data) : in.len) - start;
        in.data[start + len] = '\0'; /* replaces the newline; stops strtod at a number's end */
        if (!is_blank(in.data + start, len)) {
            answer(&s, in.data + start, len);
            if (!write_all(s.out.data, s.out.len)) die("cannot write stdout");
        }
        start += len + (newline != NULL);
        scanned = start;
        if (newline == NULL) break;
    }
    snapkv_free(s.policy);
    json_release(&s.doc);
    free(s.weights);
    free(s.out.data);
    free(in.data);
    return 0;
}

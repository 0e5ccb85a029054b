/* json.c: the strict JSON reader declared in json.h. */
#include "json.h"

#include "decimal.h"

#include <stdlib.h>
#include <string.h>

#define NO_NODE ((size_t)-1)

static int is_digit(char c) { return c >= '0' && c <= '9'; }

static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int fail(json_doc *doc, const char *why, size_t at) {
    doc->error = why;
    doc->error_at = at;
    return 0;
}

static int grow(void *ptr, size_t *cap, size_t size) {
    void **array = ptr;
    size_t new_cap = *cap ? *cap * 2 : 64;
    void *grown;
    if (new_cap > SIZE_MAX / size) return 0;
    grown = realloc(*array, new_cap * size);
    if (grown == NULL) return 0;
    *array = grown;
    *cap = new_cap;
    return 1;
}

/* Append a node; returns its index or NO_NODE when memory ran out. */
static size_t add_node(json_doc *doc, json_type type, size_t start) {
    json_node *node;
    if (doc->count == doc->cap && !grow(&doc->nodes, &doc->cap, sizeof *doc->nodes))
        return NO_NODE;
    node = &doc->nodes[doc->count];
    node->type = (unsigned char)type;
    node->integral = 0;
    node->start = start;
    node->len = 0;
    node->count = 0;
    node->end = doc->count + 1;
    return doc->count++;
}

/* The end of the string that opens at text[at] (a '"'), or 0 on a syntax error. */
static size_t scan_string(json_doc *doc, size_t at, size_t len) {
    const char *t = doc->text;
    size_t p = at + 1;
    while (p < len) {
        unsigned char c = (unsigned char)t[p];
        if (c == '"') return p + 1;
        if (c < 0x20) return fail(doc, "control character in string", p);
        if (c != '\\') {
            p++;
            continue;
        }
        if (p + 1 >= len) break;
        switch (t[p + 1]) {
        case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
            p += 2;
            break;
        case 'u':
            if (p + 5 >= len || hex_value(t[p + 2]) < 0 || hex_value(t[p + 3]) < 0
                || hex_value(t[p + 4]) < 0 || hex_value(t[p + 5]) < 0)
                return fail(doc, "bad \\u escape", p);
            p += 6;
            break;
        default:
            return fail(doc, "bad escape", p);
        }
    }
    return fail(doc, "unterminated string", at);
}

/* The end of the number that starts at text[at], or 0 on a syntax error; sets *integral. */
static size_t scan_number(json_doc *doc, size_t at, size_t len, int *integral) {
    const char *t = doc->text;
    size_t p = at;
    *integral = 1;
    if (p < len && t[p] == '-') p++;
    if (p < len && t[p] == '0') {
        p++;
    } else if (p < len && t[p] >= '1' && t[p] <= '9') {
        while (p < len && is_digit(t[p])) p++;
    } else {
        return fail(doc, "expected a value", at);
    }
    if (p < len && t[p] == '.') {
        *integral = 0;
        if (++p >= len || !is_digit(t[p])) return fail(doc, "expected a digit after '.'", p);
        while (p < len && is_digit(t[p])) p++;
    }
    if (p < len && (t[p] == 'e' || t[p] == 'E')) {
        *integral = 0;
        p++;
        if (p < len && (t[p] == '+' || t[p] == '-')) p++;
        if (p >= len || !is_digit(t[p])) return fail(doc, "expected a digit in the exponent", p);
        while (p < len && is_digit(t[p])) p++;
    }
    return p;
}

static size_t skip_space(const char *t, size_t p, size_t len) {
    while (p < len && (t[p] == ' ' || t[p] == '\t' || t[p] == '\n' || t[p] == '\r')) p++;
    return p;
}

/* Parse one scalar at text[p] into a node; returns the end offset or 0 (error in doc). */
static size_t parse_scalar(json_doc *doc, size_t p, size_t len, size_t *index) {
    static const struct {
        const char *word;
        json_type type;
    } literals[] = {{"true", JSON_TRUE}, {"false", JSON_FALSE}, {"null", JSON_NULL}};
    const char *t = doc->text;
    size_t end = 0, i;
    int integral = 0;
    json_type type = JSON_NUMBER;
    if (t[p] == '"') {
        type = JSON_STRING;
        end = scan_string(doc, p, len);
    } else if (t[p] == '-' || is_digit(t[p])) {
        end = scan_number(doc, p, len, &integral);
    } else {
        for (i = 0; i < sizeof literals / sizeof literals[0]; i++) {
            size_t n = strlen(literals[i].word);
            if (len - p >= n && memcmp(t + p, literals[i].word, n) == 0) {
                type = literals[i].type;
                end = p + n;
                break;
            }
        }
        if (end == 0) return fail(doc, "expected a value", p);
    }
    if (end == 0) return 0;
    *index = add_node(doc, type, p);
    if (*index == NO_NODE) return 0;
    doc->nodes[*index].len = end - p;
    doc->nodes[*index].integral = (unsigned char)integral;
    return end;
}

int json_parse(json_doc *doc, const char *text, size_t len) {
    enum { VALUE, KEY, AFTER } state = VALUE;
    size_t depth = 0, p = 0, index;
    doc->text = text;
    doc->count = 0;
    doc->error = NULL;
    doc->error_at = 0;
    for (;;) {
        p = skip_space(text, p, len);
        if (state == AFTER && depth == 0) {
            return p == len ? 1 : fail(doc, "extra data after the value", p);
        }
        if (p >= len) return fail(doc, "unexpected end of line", p);
        if (state == AFTER) {
            json_node *parent = &doc->nodes[doc->stack[depth - 1]];
            char close = parent->type == JSON_OBJECT ? '}' : ']';
            if (text[p] == ',') {
                state = parent->type == JSON_OBJECT ? KEY : VALUE;
            } else if (text[p] == close) {
                parent->end = doc->count;
                parent->len = p + 1 - parent->start;
                depth--;
            } else {
                return fail(doc, "expected ',' or the container's end", p);
            }
            p++;
            continue;
        }
        if (state == KEY) {
            if (text[p] != '"') return fail(doc, "expected a member name", p);
            if ((p = parse_scalar(doc, p, len, &index)) == 0) return doc->error ? 0 : -1;
            p = skip_space(text, p, len);
            if (p >= len || text[p] != ':') return fail(doc, "expected ':'", p);
            p++;
            state = VALUE;
            continue;
        }
        /* state == VALUE: a value begins here and counts as a child of the open container. */
        if (depth > 0) doc->nodes[doc->stack[depth - 1]].count++;
        if (text[p] == '{' || text[p] == '[') {
            int object = text[p] == '{';
            if ((index = add_node(doc, object ? JSON_OBJECT : JSON_ARRAY, p)) == NO_NODE)
                return -1;
            if (depth == doc->stack_cap && !grow(&doc->stack, &doc->stack_cap, sizeof *doc->stack))
                return -1;
            doc->stack[depth++] = index;
            p = skip_space(text, p + 1, len);
            if (p < len && text[p] == (object ? '}' : ']')) {
                state = AFTER; /* the AFTER branch sees the close and ends the container */
            } else {
                state = object ? KEY : VALUE;
            }
            continue;
        }
        if ((p = parse_scalar(doc, p, len, &index)) == 0) return doc->error ? 0 : -1;
        state = AFTER;
    }
}

void json_release(json_doc *doc) {
    free(doc->nodes);
    free(doc->stack);
    doc->nodes = NULL;
    doc->stack = NULL;
    doc->count = doc->cap = doc->stack_cap = 0;
}

int json_valid_utf8(const char *text, size_t len) {
    const unsigned char *s = (const unsigned char *)text;
    size_t p = 0;
    while (p < len) {
        unsigned char c = s[p];
        size_t need, k;
        unsigned char lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
        if (c < 0x80) {
            /* Requests are almost all ASCII: skip 8 bytes at a time while no high bit is set. */
            uint64_t word;
            while (len - p >= sizeof word) {
                memcpy(&word, s + p, sizeof word);
                if (word & UINT64_C(0x8080808080808080)) break;
                p += sizeof word;
            }
            if (p < len && s[p] < 0x80) p++;
            continue;
        }
        if (c >= 0xC2 && c <= 0xDF) {
            need = 1;
        } else if (c >= 0xE0 && c <= 0xEF) {
            need = 2;
            if (c == 0xE0) lo = 0xA0; /* no overlong forms */
            if (c == 0xED) hi = 0x9F; /* no UTF-16 surrogates (U+D800..U+DFFF) */
        } else if (c >= 0xF0 && c <= 0xF4) {
            need = 3;
            if (c == 0xF0) lo = 0x90;
            if (c == 0xF4) hi = 0x8F; /* nothing above U+10FFFF */
        } else {
            return 0;
        }
        if (len - p <= need) return 0;
        if (s[p + 1] < lo || s[p + 1] > hi) return 0;
        for (k = 2; k <= need; k++)
            if (s[p + k] < 0x80 || s[p + k] > 0xBF) return 0;
        p += need + 1;
    }
    return 1;
}

int json_string_is(const json_doc *doc, size_t i, const char *ascii) {
    const json_node *node = &doc->nodes[i];
    const char *t = doc->text + node->start + 1, *end = doc->text + node->start + node->len - 1;
    if (node->type != JSON_STRING) return 0;
    while (t < end) {
        char c = *t++;
        if (c == '\\') {
            switch (*t++) {
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'n': c = '\n'; break;
            case 'r': c = '\r'; break;
            case 't': c = '\t'; break;
            case 'u': {
                /* Only an escape of an ASCII code point can match an ASCII name. */
                int code = hex_value(t[0]) << 12 | hex_value(t[1]) << 8 | hex_value(t[2]) << 4
                         | hex_value(t[3]);
                if (code == 0 || code > 0x7F) return 0;
                c = (char)code;
                t += 4;
                break;
            }
            default: c = t[-1]; /* '"', '\\' and '/' stand for themselves */
            }
        }
        if (*ascii == '\0' || c != *ascii++) return 0;
    }
    return *ascii == '\0';
}

size_t json_member(const json_doc *doc, size_t obj, const char *key) {
    size_t i = obj + 1, found = NO_NODE;
    if (doc->nodes[obj].type != JSON_OBJECT) return NO_NODE;
    while (i < doc->nodes[obj].end) {
        size_t value = doc->nodes[i].end; /* a key is a scalar: its value follows it */
        if (json_string_is(doc, i, key)) found = value;
        i = doc->nodes[value].end;
    }
    return found;
}

int64_t json_integer(const json_doc *doc, size_t i) {
    const json_node *node = &doc->nodes[i];
    const char *t = doc->text + node->start, *end = t + node->len;
    int negative = *t == '-';
    uint64_t magnitude = 0;
    if (negative) t++;
    for (; t < end; t++) {
        unsigned digit = (unsigned)(*t - '0');
        if (magnitude > ((uint64_t)INT64_MAX - digit) / 10) return negative ? INT64_MIN : INT64_MAX;
        magnitude = magnitude * 10 + digit;
    }
    return negative ? -(int64_t)magnitude : (int64_t)magnitude;
}

double json_double(const json_doc *doc, size_t i) {
    const char *t = doc->text + doc->nodes[i].start;
    /* The token is a validated JSON number followed by a byte strtod cannot take as part of
     * it (see json_parse), as decimal_to_double requires. */
    return decimal_to_double(t, t + doc->nodes[i].len);
}

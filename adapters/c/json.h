/* json.h: a small strict JSON reader for the adapter protocol's requests (RFC 8259 values).
 *
 * json_parse turns one line into a flat array of nodes in document order. Every node records
 * its raw text span, so a caller can echo a value exactly as it was sent, compare a string
 * without allocating, and convert a number only when it needs it. Containers are followed by
 * their children; node.end is the index one past a node's subtree, so the next sibling of
 * node i is node nodes[i].end. An object's children alternate key, value.
 *
 * Strict: no NaN/Infinity, no comments, no trailing commas, no leading zeros, no control
 * characters inside strings, nothing after the value but whitespace. Nesting depth is limited
 * only by memory (the parser keeps its own stack rather than recursing).
 */
#ifndef SNAPKV_JSON_H
#define SNAPKV_JSON_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    JSON_NULL,
    JSON_FALSE,
    JSON_TRUE,
    JSON_NUMBER,
    JSON_STRING,
    JSON_ARRAY,
    JSON_OBJECT
} json_type;

typedef struct {
    unsigned char type;     /* json_type */
    unsigned char integral; /* a number written without fraction or exponent */
    size_t start, len;      /* the raw text, quotes included for strings */
    size_t count;           /* elements of an array, members of an object */
    size_t end;             /* one past the last node of this subtree */
} json_node;

typedef struct {
    const char *text; /* the parsed line (not owned); must stay alive while nodes are used */
    json_node *nodes;
    size_t count, cap;
    size_t *stack; /* open containers while parsing */
    size_t stack_cap;
    const char *error; /* why json_parse failed */
    size_t error_at;   /* byte offset of the failure */
} json_doc;

/* Parse text[0..len) as one JSON value. Returns 1 on success, 0 on a syntax error (doc->error
 * and doc->error_at say why and where) and -1 when memory ran out. The doc's arrays are reused
 * across calls; json_release frees them. text[len] must be readable and not a digit, sign,
 * '.', 'e' or 'E' (a NUL terminator is the usual choice) so that strtod stops at a number's end. */
int json_parse(json_doc *doc, const char *text, size_t len);
void json_release(json_doc *doc);

/* 1 when text[0..len) is well-formed UTF-8 (RFC 3629): shortest forms only, no encoded
 * surrogates, nothing above U+10FFFF. */
int json_valid_utf8(const char *text, size_t len);

/* The index of the value of the last member named key (an ASCII name, compared after
 * unescaping) in the object at index obj, or (size_t)-1 when there is none. */
size_t json_member(const json_doc *doc, size_t obj, const char *key);

/* 1 when the string node at index i, unescaped, equals the ASCII string ascii. */
int json_string_is(const json_doc *doc, size_t i, const char *ascii);

/* The integral number node at index i as an int64, saturated at INT64_MIN/INT64_MAX when it
 * is too large (callers range-check it anyway). */
int64_t json_integer(const json_doc *doc, size_t i);

/* The number node at index i read as the nearest double (strtod; beyond the range: +-HUGE_VAL). */
double json_double(const json_doc *doc, size_t i);

#endif

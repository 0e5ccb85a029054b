/* test_decimal.c: decimal_to_double against the C library's strtod, bit for bit.
 *
 * Millions of number texts: shortest and longer forms of random float32 and float64 values
 * (subnormals included), random digit strings with random exponents, 19-digit texts next to
 * the half-way point between two doubles (where the fast method must defer to strtod), and
 * hand-picked edges. Usage: build/test-decimal [seed] [rounds]. Exit 1 on any difference. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decimal.h"

static uint64_t state = UINT64_C(0x9e3779b97f4a7c15);
static unsigned long checked, failed;

static uint64_t next(void) { /* xorshift64* */
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * UINT64_C(2685821657736338717);
}

static void check(const char *text) {
    double want = strtod(text, NULL), got = decimal_to_double(text, text + strlen(text));
    checked++;
    if (memcmp(&want, &got, sizeof want) != 0) {
        if (failed++ < 20) printf("MISMATCH %s: strtod %.17g, decimal_to_double %.17g\n", text, want, got);
    }
}

static void check_value(double value) {
    char text[64];
    int precision;
    if (!isfinite(value)) return;
    for (precision = 1; precision <= 17; precision++) {
        snprintf(text, sizeof text, "%.*g", precision, value);
        check(text);
    }
    snprintf(text, sizeof text, "%.20e", value);
    check(text);
}

static void check_digits(void) {
    char text[96];
    int digits = 1 + (int)(next() % 24), point = (int)(next() % (uint64_t)(digits + 1)), n = 0, i;
    int exponent = (int)(next() % 700) - 360;
    if (next() & 1) text[n++] = '-';
    for (i = 0; i < digits; i++) {
        if (i == point && i > 0) text[n++] = '.';
        text[n++] = (char)('0' + (i == 0 ? 1 + next() % 9 : next() % 10));
    }
    if (next() & 1) n += snprintf(text + n, sizeof text - (size_t)n, "e%d", exponent);
    text[n] = '\0';
    check(text);
}

static void check_near_half(double value) {
    char text[64];
    double above = nextafter(value, INFINITY);
    long double mid = ((long double)value + (long double)above) / 2;
    if (!isfinite(value) || !isfinite(above)) return;
    snprintf(text, sizeof text, "%.18Le", mid); /* 19 significant digits next to half-way */
    check(text);
    snprintf(text, sizeof text, "%.30Le", mid);
    check(text);
}

int main(int argc, char **argv) {
    static const char *edges[] = {
        "0", "-0", "0.0", "-0.0", "0e5", "1", "-1", "1e400", "-1e400", "1e-400", "1e308",
        "1e309", "1e-324", "5e-324", "4.9406564584124654e-324", "2.4703282292062327e-324",
        "2.4703282292062328e-324", "2.2250738585072011e-308", "2.2250738585072014e-308",
        "1.7976931348623157e308", "1.7976931348623158e308", "1.7976931348623159e308",
        "1.797693134862315807e308", "1.797693134862315808e308", "9007199254740993",
        "9007199254740992.5", "9007199254740993.0000000001", "3.4028235677973366e+38",
        "0.10000000149011612", "1.0000000149011612e-1", "10000000000000000000",
        "9999999999999999999", "18446744073709551615", "18446744073709551616",
        "0.000000000000000000000000000001", "123456789012345678901234567890e-10",
        "1e22", "1e23", "8.98846567431158e307", "4.4501477170144023e-308",
    };
    unsigned long rounds = argc > 2 ? strtoul(argv[2], NULL, 10) : 300000, r;
    size_t i;
    if (argc > 1) state ^= strtoull(argv[1], NULL, 10) * UINT64_C(0xbf58476d1ce4e5b9);
    for (i = 0; i < sizeof edges / sizeof edges[0]; i++) check(edges[i]);
    for (r = 0; r < rounds; r++) {
        uint32_t f32bits = (uint32_t)next();
        uint64_t f64bits = next();
        float f;
        double d;
        memcpy(&f, &f32bits, sizeof f);
        memcpy(&d, &f64bits, sizeof d);
        check_value((double)f);
        check_value(d);
        check_near_half(d);
        check_near_half((double)f);
        check_digits();
        check_digits();
    }
    printf("%lu texts checked, %lu differ from strtod\n", checked, failed);
    return failed != 0;
}

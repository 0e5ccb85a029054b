/* decimal.c: JSON number text to the nearest double (see decimal.h).
 *
 * Reading weights is most of what the adapter does, and strtod is slow on the 17-digit
 * decimals that shortest round-trip text uses. This is the Eisel-Lemire method: with the
 * decimal as w * 10^q (w at most 19 digits), 10^q = 5^q * 2^q, and a 128-bit approximation T
 * of 5^q scaled by 2^s (pow5.h, from tools/gen_pow5.py), the 192-bit product P = w' * T
 * (w' = w shifted left until its top bit is set) holds the value's leading bits. Since
 * 0 <= 5^q * 2^s - T < 1, the exact product lies in [P, P + 2^64). Rounding to 53 bits only
 * depends on where the value falls against the half-way point between two doubles; when
 * that point is within 2^66 of P the approximation cannot decide (exact ties, and rare
 * near-ties), and strtod does. strtod also takes what the table does not cover: more than
 * 19 significant digits, exponents outside pow5.h, and results below the normal range. */
#include "decimal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pow5.h"

/* The 128-bit product of two 64-bit numbers: one instruction where the compiler has a 128-bit
 * type, else portable C99 (four 32-bit products). Both give the same bits; DECIMAL_PORTABLE
 * selects the portable code here and below, so that the tests check it too. */
static void multiply(uint64_t a, uint64_t b, uint64_t *hi, uint64_t *lo) {
#if defined(__SIZEOF_INT128__) && !defined(DECIMAL_PORTABLE)
    __extension__ typedef unsigned __int128 u128;
    u128 product = (u128)a * b;
    *lo = (uint64_t)product;
    *hi = (uint64_t)(product >> 64);
#else
    uint64_t a0 = a & 0xffffffffu, a1 = a >> 32, b0 = b & 0xffffffffu, b1 = b >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    uint64_t middle = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
    *lo = (middle << 32) | (p00 & 0xffffffffu);
    *hi = p11 + (p01 >> 32) + (p10 >> 32) + (middle >> 32);
#endif
}

static int leading_zeros(uint64_t x) { /* x != 0 */
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_clzll(x);
#else
    int n = 0;
    while (!(x & (UINT64_C(1) << 63))) {
        x <<= 1;
        n++;
    }
    return n;
#endif
}

/* Eisel-Lemire for w * 10^q, w != 0: returns 0 when it cannot decide (the caller uses
 * strtod), else stores the magnitude's double in *out. */
static int eisel_lemire(uint64_t w, int q, double *out) {
    uint64_t hi, lo, a1, a0, b1, b0, p2, p1, m, rest2, bits;
    int lz, k, s, exponent, round_up, ambiguous;
    if (q < POW5_MIN_Q || q > POW5_MAX_Q) return 0;
    lz = leading_zeros(w);
    w <<= lz;
    hi = POW5[q - POW5_MIN_Q].hi;
    lo = POW5[q - POW5_MIN_Q].lo;
    s = POW5[q - POW5_MIN_Q].s;
    /* P = w * (hi * 2^64 + lo) as p2:p1:p0; p0 (the lowest word) is below the error bound
     * and never needed. */
    multiply(w, lo, &a1, &a0);
    multiply(w, hi, &b1, &b0);
    p1 = b0 + a1;
    p2 = b1 + (p1 < b0);
    /* P is in [2^190, 2^192): keep its top 53 bits; k bits of p2 fall below them. */
    k = (p2 >> 63) ? 11 : 10;
    m = p2 >> k;
    rest2 = p2 & ((UINT64_C(1) << (k - 1)) - 1); /* the bits below the rounding bit */
    round_up = (int)((p2 >> (k - 1)) & 1);
    /* The exact value lies in [P, P + 2^64); with a 2^66 margin, ambiguous when the bits
     * below the rounding bit are all zeros (just above half-way) or all ones (just below). */
    if (round_up)
        ambiguous = rest2 == 0 && p1 < 4;
    else
        ambiguous = rest2 == (UINT64_C(1) << (k - 1)) - 1 && p1 >= UINT64_MAX - 3;
    if (ambiguous) return 0;
    /* value = P * 2^(q - s - lz) = m * 2^(128 + k + q - s - lz), m in [2^52, 2^53). */
    exponent = 128 + k + q - s - lz;
    m += (uint64_t)round_up;
    if (m == (UINT64_C(1) << 53)) {
        m >>= 1;
        exponent++;
    }
    exponent += 52 + 1023; /* the biased exponent of m * 2^exponent with m read as 1.f */
    if (exponent <= 0) return 0; /* subnormal: strtod */
    if (exponent >= 2047) {
        bits = UINT64_C(0x7ff0000000000000); /* beyond the double range */
    } else {
        bits = ((uint64_t)exponent << 52) | (m & ((UINT64_C(1) << 52) - 1));
    }
    memcpy(out, &bits, sizeof *out);
    return 1;
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && \
    !defined(DECIMAL_PORTABLE)
#define EIGHT_AT_ONCE 1
/* Eight bytes as a little-endian word: the first byte is the lowest. */
static uint64_t read_eight(const char *p) {
    uint64_t word;
    memcpy(&word, p, sizeof word);
    return word;
}

/* True when every byte of the word is an ASCII digit. */
static int eight_digits(uint64_t word) {
    return !(((word + UINT64_C(0x4646464646464646)) | (word - UINT64_C(0x3030303030303030))) &
             UINT64_C(0x8080808080808080));
}

/* The value of eight ASCII digits, the first one most significant, by pairing neighbours:
 * two digits per byte pair, then four, then eight (integer arithmetic, exact). */
static uint64_t eight_digit_value(uint64_t word) {
    const uint64_t mask = UINT64_C(0x000000ff000000ff);
    const uint64_t mul1 = UINT64_C(0x000f424000000064); /* 100 + (1000000 << 32) */
    const uint64_t mul2 = UINT64_C(0x0000271000000001); /* 1 + (10000 << 32) */
    word -= UINT64_C(0x3030303030303030);
    word = (word * 10) + (word >> 8);
    return (((word & mask) * mul1) + (((word >> 16) & mask) * mul2)) >> 32;
}
#else
#define EIGHT_AT_ONCE 0
#endif

double decimal_to_double(const char *text, const char *end) {
    const char *t = text;
    uint64_t w = 0;
    int negative = 0, significant = 0, q = 0, exp_sign = 1, exp_value = 0;
    double value;
    if (*t == '-') {
        negative = 1;
        t++;
    }
    for (; t < end && *t >= '0' && *t <= '9'; t++) {
        if (w == 0 && *t == '0') continue; /* leading zeros are not significant */
        if (++significant > 19) goto slow;
        w = w * 10 + (uint64_t)(*t - '0');
    }
    if (t < end && *t == '.') {
        t++;
#if EIGHT_AT_ONCE
        /* Shortest round-trip text has most of its digits after the point: take them eight at
         * a time once the significant digits have started, as long as they stay within 19. */
        if (t < end && w == 0 && *t >= '1' && *t <= '9') {
            w = (uint64_t)(*t++ - '0');
            q--;
            significant = 1;
        }
        while (w != 0 && significant <= 11 && end - t >= 8 && eight_digits(read_eight(t))) {
            w = w * 100000000u + eight_digit_value(read_eight(t));
            q -= 8;
            significant += 8;
            t += 8;
        }
#endif
        for (; t < end && *t >= '0' && *t <= '9'; t++) {
            q--;
            if (w == 0 && *t == '0') continue;
            if (++significant > 19) goto slow;
            w = w * 10 + (uint64_t)(*t - '0');
        }
    }
    if (t < end && (*t == 'e' || *t == 'E')) {
        t++;
        if (*t == '+' || *t == '-') exp_sign = *t++ == '-' ? -1 : 1;
        for (; t < end; t++) {
            if (exp_value > 100000) goto slow; /* far outside the table whatever the digits */
            exp_value = exp_value * 10 + (*t - '0');
        }
        q += exp_sign * exp_value;
    }
    if (w == 0) return negative ? -0.0 : 0.0;
    if (!eisel_lemire(w, q, &value)) goto slow;
    return negative ? -value : value;
slow:
    /* The token is a validated JSON number followed by a byte strtod cannot take as part of
     * it, so strtod reads exactly the token, correctly rounded. */
    return strtod(text, NULL);
}

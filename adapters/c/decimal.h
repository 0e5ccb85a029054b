/* decimal.h: JSON number text to the nearest double, fast and correctly rounded. */
#ifndef SNAPKV_DECIMAL_H
#define SNAPKV_DECIMAL_H

/* The double nearest to the JSON number written in [text, end) (a valid JSON number token,
 * which the caller has checked), ties to even, as a correct strtod gives it: an infinity
 * beyond the double range. */
double decimal_to_double(const char *text, const char *end);

#endif

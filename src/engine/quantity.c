/*
 * quantity.c - Kubernetes resource quantities ("500m", "1.5", "64Gi", "1e3").
 *
 * The grammar is the one of k8s.io/apimachinery resource.Quantity: an
 * optional sign, a decimal number ("5", "5.", ".5", "5.25"), then one
 * optional suffix: a binary one (Ki Mi Gi Ti Pi Ei), a decimal one (n u m k
 * M G T P E) or an exponent ("e3", "E-2").  The value times the caller's
 * scale is computed exactly with a small fixed-size big integer and rounded
 * up to an integer, as Kubernetes rounds up.  No floating point, no I/O, no
 * globals.
 */
#include <stdbool.h>
#include <string.h>

#include "muster/error.h"
#include "muster/resource.h"

/* Significant digits accepted; more is MU_ERANGE (nobody writes that). */
#define QTY_MAX_DIGITS 400
/* 32-bit limbs: 400 digits (1329 bits) * scale (63) * 2^60 fits in 48. */
#define QTY_LIMBS 56
/* Exponents are clamped to this magnitude (the value is 0 or overflows). */
#define QTY_MAX_EXP 100000

/* An unsigned big integer, little-endian limbs, n of them in use. */
typedef struct qty_big {
	uint32_t l[QTY_LIMBS];
	int n;
} qty_big_t;

/* b = b * m + add.  Returns false if it would not fit in QTY_LIMBS. */
static bool big_mul_add(qty_big_t *b, uint32_t m, uint32_t add)
{
	uint64_t carry = add;
	for (int i = 0; i < b->n; i++) {
		uint64_t v = (uint64_t)b->l[i] * m + carry;
		b->l[i] = (uint32_t)v;
		carry = v >> 32;
	}
	if (carry) {
		if (b->n == QTY_LIMBS)
			return false;
		b->l[b->n++] = (uint32_t)carry;
	}
	return true;
}

/* b = b * m for a 64-bit m: (b * hi) << 32 + b * lo. */
static bool big_mul64(qty_big_t *b, uint64_t m)
{
	uint32_t lo = (uint32_t)m, hi = (uint32_t)(m >> 32);
	if (hi == 0)
		return big_mul_add(b, lo, 0);
	qty_big_t h = *b;
	if (!big_mul_add(&h, hi, 0) || !big_mul_add(b, lo, 0))
		return false;
	/* b += h << 32 */
	uint64_t carry = 0;
	for (int i = 0; i < h.n || carry; i++) {
		if (i + 1 >= QTY_LIMBS)
			return false;
		while (b->n <= i + 1)
			b->l[b->n++] = 0;
		uint64_t v = (uint64_t)b->l[i + 1] + (i < h.n ? h.l[i] : 0) + carry;
		b->l[i + 1] = (uint32_t)v;
		carry = v >> 32;
	}
	while (b->n > 0 && b->l[b->n - 1] == 0)
		b->n--;
	return true;
}

/* b = b / 10; returns the remainder. */
static uint32_t big_div10(qty_big_t *b)
{
	uint64_t rem = 0;
	for (int i = b->n - 1; i >= 0; i--) {
		uint64_t v = (rem << 32) | b->l[i];
		b->l[i] = (uint32_t)(v / 10);
		rem = v % 10;
	}
	while (b->n > 0 && b->l[b->n - 1] == 0)
		b->n--;
	return (uint32_t)rem;
}

/* True when b fits in an int64; stores it in *out. */
static bool big_to_i64(const qty_big_t *b, int64_t *out)
{
	if (b->n > 2)
		return false;
	uint64_t v = b->n > 0 ? b->l[0] : 0;
	if (b->n == 2)
		v |= (uint64_t)b->l[1] << 32;
	if (v > (uint64_t)INT64_MAX)
		return false;
	*out = (int64_t)v;
	return true;
}

/* Parses the suffix at s (the rest of the string) into a power of ten
 * *e10 and a power of two *e2.  Returns false if it is not a suffix. */
static bool qty_suffix(const char *s, long *e10, int *e2)
{
	static const struct { const char *s; int e10, e2; } tab[] = {
		{"", 0, 0},   {"Ki", 0, 10}, {"Mi", 0, 20}, {"Gi", 0, 30},
		{"Ti", 0, 40}, {"Pi", 0, 50}, {"Ei", 0, 60}, {"n", -9, 0},
		{"u", -6, 0}, {"m", -3, 0},  {"k", 3, 0},   {"M", 6, 0},
		{"G", 9, 0},  {"T", 12, 0},  {"P", 15, 0},  {"E", 18, 0},
	};
	for (size_t i = 0; i < sizeof tab / sizeof *tab; i++) {
		if (strcmp(s, tab[i].s) == 0) {
			*e10 = tab[i].e10;
			*e2 = tab[i].e2;
			return true;
		}
	}
	if (*s != 'e' && *s != 'E')
		return false;
	s++;
	bool neg = false;
	if (*s == '+' || *s == '-')
		neg = *s++ == '-';
	if (*s < '0' || *s > '9')
		return false;
	long v = 0;
	for (; *s >= '0' && *s <= '9'; s++)
		if (v < QTY_MAX_EXP)
			v = v * 10 + (*s - '0');
	if (*s)
		return false;
	*e10 = neg ? -v : v;
	*e2 = 0;
	return true;
}

/* Scans "ddd.ddd" at *pp: the significant digits go into d (leading zeros
 * skipped, trailing zeros folded into *e10), and *e10 is lowered by the
 * number of fraction digits.  Moves *pp past the number.  Returns MU_OK,
 * MU_EPARSE without a digit, MU_ERANGE with too many significant digits. */
static int qty_number(const char **pp, char *d, int *nd, long *e10)
{
	const char *p = *pp;
	long tz = 0;
	bool frac = false, big = false, any = false;
	*nd = 0;
	for (;; p++) {
		if (*p == '.' && !frac) {
			frac = true;
			continue;
		}
		if (*p < '0' || *p > '9')
			break;
		any = true;
		if (frac)
			(*e10)--;
		if (*p == '0') {
			tz += *nd > 0;
			continue;
		}
		if (big || *nd + tz >= QTY_MAX_DIGITS) {
			big = true;
			continue;
		}
		for (; tz > 0; tz--)
			d[(*nd)++] = '0';
		d[(*nd)++] = *p;
	}
	*e10 += tz;
	*pp = p;
	return !any ? MU_EPARSE : big ? MU_ERANGE : MU_OK;
}

/*
 * value = D * 10^e10 * 2^e2 * scale, with D the significant digits.  The
 * big integer holds D * 2^e2 * scale (exact); a positive e10 multiplies by
 * ten until it overflows int64, a negative one divides, remembering any
 * remainder to round up.  Work is bounded by QTY_MAX_DIGITS and the
 * number of limbs.
 */
int mu_quantity_parse(const char *s, int64_t scale, int64_t *out)
{
	if (scale < 1)
		return MU_EINVAL;
	if (!s || !*s)
		return MU_EPARSE;
	bool neg = false;
	if (*s == '+' || *s == '-')
		neg = *s++ == '-';
	char d[QTY_MAX_DIGITS];
	int nd, e2;
	long e10 = 0, esuf;
	const char *p = s;
	int rc = qty_number(&p, d, &nd, &e10);
	if (rc == MU_EPARSE || !qty_suffix(p, &esuf, &e2))
		return MU_EPARSE;
	if (rc != MU_OK)
		return rc;
	if (nd == 0) {
		*out = 0;
		return MU_OK;
	}
	if (neg)
		return MU_ERANGE;
	e10 += esuf;
	qty_big_t b = {.n = 0};
	for (int i = 0; i < nd; i++)
		if (!big_mul_add(&b, 10, (uint32_t)(d[i] - '0')))
			return MU_ERANGE;
	for (int i = 0; i < e2; i += 10)
		if (!big_mul_add(&b, 1024, 0))
			return MU_ERANGE;
	if (!big_mul64(&b, (uint64_t)scale))
		return MU_ERANGE;
	int64_t v;
	if (e10 >= 0) {
		for (long i = 0; i < e10; i++)
			if (b.n > 2 || !big_mul_add(&b, 10, 0))
				return MU_ERANGE;
		if (!big_to_i64(&b, &v))
			return MU_ERANGE;
		*out = v;
		return MU_OK;
	}
	/* b has at most QTY_LIMBS * 32 bits, about 540 decimal digits */
	if (-e10 > 10 * QTY_LIMBS) {
		*out = 1;
		return MU_OK;
	}
	bool rem = false;
	for (long i = 0; i < -e10; i++)
		rem |= big_div10(&b) != 0;
	if (!big_to_i64(&b, &v) || (rem && v == INT64_MAX))
		return MU_ERANGE;
	*out = v + rem;
	return MU_OK;
}

/*
 * test_quantity.c - unit tests of mu_quantity_parse(): every suffix kind,
 * exact rounding up, overflow at the int64 edge, and malformed text.
 */
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "muster/error.h"
#include "muster/resource.h"

/* Parses s with scale and returns the value, or the error code plus a
 * marker so that CHECK_EQ_INT shows which one came back. */
static int64_t q(const char *s, int64_t scale)
{
	int64_t v = -77;
	int rc = mu_quantity_parse(s, scale, &v);
	if (rc != MU_OK)
		return -1000000 + rc;
	return v;
}

#define ERR(rc) (-1000000 + (rc))

static void test_plain_and_fractions(mu_t_t *t)
{
	CHECK_EQ_INT(t, q("2", 1000), 2000);
	CHECK_EQ_INT(t, q("2", 1), 2);
	CHECK_EQ_INT(t, q("1.5", 1000), 1500);
	CHECK_EQ_INT(t, q("0.5", 1000), 500);
	CHECK_EQ_INT(t, q(".5", 1000), 500);
	CHECK_EQ_INT(t, q("5.", 1), 5);
	CHECK_EQ_INT(t, q("+3", 1), 3);
	CHECK_EQ_INT(t, q("0", 1000), 0);
	CHECK_EQ_INT(t, q("0.000", 1), 0);
	CHECK_EQ_INT(t, q("-0", 1), 0);
	CHECK_EQ_INT(t, q("007", 1), 7);
	CHECK_EQ_INT(t, q("50.0", 1), 50);
	CHECK_EQ_INT(t, q("2.675", 1000), 2675);
	/* exact decimal: binary floating point would round these wrong */
	CHECK_EQ_INT(t, q("0.1", 10), 1);
	CHECK_EQ_INT(t, q("0.3", 10), 3);
	CHECK_EQ_INT(t, q("0.7", 10), 7);
}

static void test_round_up(mu_t_t *t)
{
	CHECK_EQ_INT(t, q("500m", 1), 1);
	CHECK_EQ_INT(t, q("1001m", 1), 2);
	CHECK_EQ_INT(t, q("1000m", 1), 1);
	CHECK_EQ_INT(t, q("0.0005", 1000), 1);
	CHECK_EQ_INT(t, q("1n", 1), 1);
	CHECK_EQ_INT(t, q("1u", 1000), 1);
	CHECK_EQ_INT(t, q("1.0000000000000000000000001", 1), 2);
	CHECK_EQ_INT(t, q("1.0000000000000000000000000", 1), 1);
}

static void test_suffixes(mu_t_t *t)
{
	CHECK_EQ_INT(t, q("500m", 1000), 500);
	CHECK_EQ_INT(t, q("250u", 1000000), 250);
	CHECK_EQ_INT(t, q("3n", 1000000000), 3);
	CHECK_EQ_INT(t, q("2k", 1), 2000);
	CHECK_EQ_INT(t, q("3M", 1), 3000000);
	CHECK_EQ_INT(t, q("4G", 1), 4000000000LL);
	CHECK_EQ_INT(t, q("5T", 1), 5000000000000LL);
	CHECK_EQ_INT(t, q("6P", 1), 6000000000000000LL);
	CHECK_EQ_INT(t, q("1E", 1), 1000000000000000000LL);
	CHECK_EQ_INT(t, q("1Ki", 1), 1024);
	CHECK_EQ_INT(t, q("512Mi", 1), 536870912);
	CHECK_EQ_INT(t, q("64Gi", 1), 68719476736LL);
	CHECK_EQ_INT(t, q("1Ti", 1), 1099511627776LL);
	CHECK_EQ_INT(t, q("1Pi", 1), 1125899906842624LL);
	CHECK_EQ_INT(t, q("7Ei", 1), 7LL << 60);
	CHECK_EQ_INT(t, q("1.5Gi", 1), 1610612736LL);
	CHECK_EQ_INT(t, q("0.5Ki", 1), 512);
	CHECK_EQ_INT(t, q("0.001Ki", 1), 2); /* 1.024 rounds up */
}

static void test_exponents(mu_t_t *t)
{
	CHECK_EQ_INT(t, q("1e3", 1), 1000);
	CHECK_EQ_INT(t, q("1E3", 1), 1000);
	CHECK_EQ_INT(t, q("1e+3", 1), 1000);
	CHECK_EQ_INT(t, q("1.5e1", 1), 15);
	CHECK_EQ_INT(t, q("1e-3", 1000), 1);
	CHECK_EQ_INT(t, q("1e-4", 1000), 1);
	CHECK_EQ_INT(t, q("25e-1", 1), 3);
	CHECK_EQ_INT(t, q("1e-1000000", 1), 1);
	CHECK_EQ_INT(t, q("0e1000000", 1), 0);
	CHECK_EQ_INT(t, q("1e1000000", 1), ERR(MU_ERANGE));
	CHECK_EQ_INT(t, q("1e18", 1), 1000000000000000000LL);
	CHECK_EQ_INT(t, q("1e19", 1), ERR(MU_ERANGE));
}

static void test_overflow(mu_t_t *t)
{
	CHECK_EQ_INT(t, q("9223372036854775807", 1), INT64_MAX);
	CHECK_EQ_INT(t, q("9223372036854775808", 1), ERR(MU_ERANGE));
	CHECK_EQ_INT(t, q("9223372036854775807m", 1000), INT64_MAX);
	CHECK_EQ_INT(t, q("9223372036854775806.5", 1), INT64_MAX);
	CHECK_EQ_INT(t, q("9223372036854775807.1", 1), ERR(MU_ERANGE));
	CHECK_EQ_INT(t, q("8Ei", 1), ERR(MU_ERANGE));
	CHECK_EQ_INT(t, q("10E", 1), ERR(MU_ERANGE));
	CHECK_EQ_INT(t, q("9223372036854775807", 1000), ERR(MU_ERANGE));
	CHECK_EQ_INT(t, q("1", INT64_MAX), INT64_MAX);
	CHECK_EQ_INT(t, q("2", INT64_MAX), ERR(MU_ERANGE));
	CHECK_EQ_INT(t, q("0.5", 3LL << 32), 3LL << 31);
	CHECK_EQ_INT(t, q("0.000001Ei", 1000), 1152921504606847LL);
	CHECK_EQ_INT(t, q("-1", 1), ERR(MU_ERANGE));
	CHECK_EQ_INT(t, q("-500m", 1000), ERR(MU_ERANGE));
}

static void test_long_inputs(mu_t_t *t)
{
	char buf[2048];
	/* 1000 zeros after the point, then a 1: tiny but not zero */
	strcpy(buf, "0.");
	memset(buf + 2, '0', 1000);
	strcpy(buf + 1002, "1");
	CHECK_EQ_INT(t, q(buf, 1), 1);
	/* 1000 leading zeros do not count as digits */
	memset(buf, '0', 1000);
	strcpy(buf + 1000, "42");
	CHECK_EQ_INT(t, q(buf, 1), 42);
	/* 500 significant digits are too many */
	memset(buf, '1', 500);
	buf[500] = '\0';
	CHECK_EQ_INT(t, q(buf, 1), ERR(MU_ERANGE));
	strcpy(buf + 500, "x");
	CHECK_EQ_INT(t, q(buf, 1), ERR(MU_EPARSE));
	/* 300 significant digits scaled way down fit */
	memset(buf, '9', 300);
	strcpy(buf + 300, "e-299");
	CHECK_EQ_INT(t, q(buf, 1), 10);
}

static void test_malformed(mu_t_t *t)
{
	static const char *bad[] = {
		"", "abc", "1.2.3", "5 Gi", " 5", "5 ", "1K", "1e", "e3",
		".", "+", "-", "1ki", "1Gb", "1.5.Gi", "0x10", "1e3.5",
		"1Ki2", "--1", "1e--3", "1 e3", "∞",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		int64_t v = 123;
		int rc = mu_quantity_parse(bad[i], 1, &v);
		if (rc != MU_EPARSE || v != 123)
			fprintf(stderr, "  input \"%s\" -> %d\n", bad[i], rc);
		CHECK_EQ_INT(t, rc, MU_EPARSE);
		CHECK_EQ_INT(t, v, 123);
	}
	int64_t v = 5;
	CHECK_EQ_INT(t, mu_quantity_parse(NULL, 1, &v), MU_EPARSE);
	CHECK_EQ_INT(t, mu_quantity_parse("1", 0, &v), MU_EINVAL);
	CHECK_EQ_INT(t, mu_quantity_parse("1", -1000, &v), MU_EINVAL);
	CHECK_EQ_INT(t, v, 5);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_plain_and_fractions);
	MU_RUN(&t, test_round_up);
	MU_RUN(&t, test_suffixes);
	MU_RUN(&t, test_exponents);
	MU_RUN(&t, test_overflow);
	MU_RUN(&t, test_long_inputs);
	MU_RUN(&t, test_malformed);
	return mu_t_done(&t);
}

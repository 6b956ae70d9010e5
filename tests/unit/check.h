/*
 * check.h - the tiny unit-test harness every tests/unit/test_*.c includes.
 *
 * A test file defines `static void test_x(mu_t_t *t)` functions and a main()
 * that calls MU_RUN(t, test_x) for each, then returns mu_t_done(&t).  Each
 * failed CHECK prints file:line and the expression; the run ends with the
 * line "unit <file>: N passed, N failed" that tests/run.sh adds up.  A test
 * passes when none of its checks failed.
 */
#ifndef MUSTER_TEST_CHECK_H
#define MUSTER_TEST_CHECK_H

#include <stdio.h>
#include <string.h>

typedef struct mu_t {
	const char *file;
	int passed, failed;
	int cur_failed;
} mu_t_t;

#define MU_T_INIT {__FILE__, 0, 0, 0}

#define CHECK(t, cond)                                                        \
	do {                                                                  \
		if (!(cond)) {                                                \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, \
				__LINE__, #cond);                             \
			(t)->cur_failed++;                                    \
		}                                                             \
	} while (0)

#define CHECK_EQ_INT(t, a, b)                                                 \
	do {                                                                  \
		long long mu_a_ = (long long)(a), mu_b_ = (long long)(b);     \
		if (mu_a_ != mu_b_) {                                         \
			fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n", \
				__FILE__, __LINE__, #a, mu_a_, #b, mu_b_);    \
			(t)->cur_failed++;                                    \
		}                                                             \
	} while (0)

#define CHECK_STR(t, a, b)                                                    \
	do {                                                                  \
		const char *mu_a_ = (a), *mu_b_ = (b);                        \
		if (!mu_a_ || !mu_b_ || strcmp(mu_a_, mu_b_) != 0) {          \
			fprintf(stderr, "%s:%d: %s is \"%s\", expected \"%s\"\n", \
				__FILE__, __LINE__, #a, mu_a_ ? mu_a_ : "(null)", \
				mu_b_ ? mu_b_ : "(null)");                    \
			(t)->cur_failed++;                                    \
		}                                                             \
	} while (0)

#define MU_RUN(t, fn)                                                         \
	do {                                                                  \
		(t)->cur_failed = 0;                                          \
		fn(t);                                                        \
		if ((t)->cur_failed) {                                        \
			(t)->failed++;                                        \
			printf("FAIL %s\n", #fn);                             \
		} else {                                                      \
			(t)->passed++;                                        \
		}                                                             \
	} while (0)

static inline int mu_t_done(mu_t_t *t)
{
	const char *base = strrchr(t->file, '/');
	printf("unit %s: %d passed, %d failed\n", base ? base + 1 : t->file,
	       t->passed, t->failed);
	fflush(stdout);
	return t->failed ? 1 : 0;
}

#endif

/*
 * cpuset.c - CPU sets as fixed bitmaps, and the Linux cpulist text form
 * ("0-31,64-95") that sysfs and NodeResourceTopology use.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "muster/error.h"
#include "muster/model.h"

/* Reads a decimal CPU id at *p (advancing it); -1 if none or too big. */
static long cpu_id(const char **p)
{
	if (!isdigit((unsigned char)**p))
		return -1;
	long v = 0;
	while (isdigit((unsigned char)**p)) {
		v = v * 10 + (**p - '0');
		if (v >= MU_MAX_CPUS)
			return -2;
		(*p)++;
	}
	return v;
}

int mu_cpuset_parse(const char *s, mu_cpuset_t *set)
{
	mu_cpuset_t out;
	memset(&out, 0, sizeof out);
	const char *p = s;
	while (*p == ' ' || *p == '\t')
		p++;
	while (*p && *p != '\n') {
		long a = cpu_id(&p), b = a;
		if (a == -2)
			return MU_ERANGE;
		if (a < 0)
			return MU_EPARSE;
		if (*p == '-') {
			p++;
			b = cpu_id(&p);
			if (b == -2)
				return MU_ERANGE;
			if (b < a)
				return MU_EPARSE;
		}
		for (long c = a; c <= b; c++)
			out.w[c / 64] |= (uint64_t)1 << (c % 64);
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return MU_EPARSE;
	}
	*set = out;
	return MU_OK;
}

int mu_cpuset_count(const mu_cpuset_t *set)
{
	int n = 0;
	for (int w = 0; w < MU_CPUSET_WORDS; w++)
		n += __builtin_popcountll(set->w[w]);
	return n;
}

static bool has(const mu_cpuset_t *s, int c)
{
	return c >= 0 && c < MU_MAX_CPUS && (s->w[c / 64] >> (c % 64)) & 1;
}

void mu_cpuset_format(const mu_cpuset_t *set, char *buf, size_t len)
{
	size_t off = 0;
	if (len)
		buf[0] = '\0';
	for (int c = 0; c < MU_MAX_CPUS; c++) {
		if (!has(set, c))
			continue;
		int e = c;
		while (has(set, e + 1))
			e++;
		int n = e > c ? snprintf(buf + off, off < len ? len - off : 0, "%s%d-%d",
					 off ? "," : "", c, e)
			      : snprintf(buf + off, off < len ? len - off : 0, "%s%d",
					 off ? "," : "", c);
		if (n < 0 || off + (size_t)n >= len) {
			if (len)
				buf[len - 1] = '\0';
			return;
		}
		off += (size_t)n;
		c = e;
	}
}

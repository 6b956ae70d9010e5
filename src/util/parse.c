/*
 * parse.c - strict parsers for integers, numbers, booleans, durations and
 * names, shared by the loaders, the control plane and the CLI.  Each takes
 * the whole string (trailing junk is an error), bounds its work by the
 * string's length, and never writes to *out on failure.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "muster/util.h"

int mu__parse_int(const char *s, int64_t min, int64_t max, int64_t *out)
{
	if (!s || !*s || isspace((unsigned char)*s))
		return MU_EPARSE;
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (*end != '\0')
		return MU_EPARSE;
	if (errno == ERANGE || v < min || v > max)
		return MU_ERANGE;
	*out = v;
	return MU_OK;
}

int mu__parse_num(const char *s, double min, double max, double *out)
{
	if (!s || !*s || isspace((unsigned char)*s))
		return MU_EPARSE;
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (*end != '\0')
		return MU_EPARSE;
	if (errno == ERANGE || !isfinite(v) || v < min || v > max)
		return MU_ERANGE;
	*out = v;
	return MU_OK;
}

int mu__parse_bool(const char *s, bool *out)
{
	static const char *yes[] = {"true", "True", "TRUE", "yes", "1"};
	static const char *no[] = {"false", "False", "FALSE", "no", "0"};
	if (!s)
		return MU_EPARSE;
	for (size_t i = 0; i < sizeof yes / sizeof *yes; i++) {
		if (strcmp(s, yes[i]) == 0) {
			*out = true;
			return MU_OK;
		}
		if (strcmp(s, no[i]) == 0) {
			*out = false;
			return MU_OK;
		}
	}
	return MU_EPARSE;
}

int mu__parse_duration(const char *s, int64_t *out)
{
	const double max_ms = 100.0 * 365 * 86400 * 1000;
	if (!s || !*s)
		return MU_EPARSE;
	double total = 0;
	const char *p = s;
	int parts = 0;
	while (*p) {
		if (!isdigit((unsigned char)*p) && *p != '.')
			return *p == '-' ? MU_ERANGE : MU_EPARSE;
		char *end;
		errno = 0;
		double v = strtod(p, &end);
		if (end == p || errno == ERANGE || !isfinite(v))
			return MU_EPARSE;
		p = end;
		double unit;
		if (strncmp(p, "ms", 2) == 0) {
			unit = 1;
			p += 2;
		} else if (*p == 's') {
			unit = 1000;
			p++;
		} else if (*p == 'm') {
			unit = 60e3;
			p++;
		} else if (*p == 'h') {
			unit = 3600e3;
			p++;
		} else if (*p == 'd') {
			unit = 86400e3;
			p++;
		} else if (*p == '\0' && parts == 0) {
			unit = 1000; /* a bare number is seconds */
		} else {
			return MU_EPARSE;
		}
		total += v * unit;
		parts++;
		if (total > max_ms)
			return MU_ERANGE;
	}
	*out = (int64_t)llround(total);
	return MU_OK;
}

bool mu__valid_name(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n == 0 || n > 253 || !isalnum((unsigned char)s[0]))
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (!isalnum(c) && c != '-' && c != '.' && c != '_')
			return false;
	}
	return true;
}

const char *mu__quote(const char *s, char *buf, size_t len)
{
	if (!s) {
		snprintf(buf, len, "(nothing)");
		return buf;
	}
	size_t o = 0;
	if (len < 8) {
		if (len)
			buf[0] = '\0';
		return buf;
	}
	buf[o++] = '"';
	for (const char *p = s; *p && o + 5 < len; p++) {
		unsigned char c = (unsigned char)*p;
		buf[o++] = (c >= 32 && c < 127) ? (char)c : '?';
	}
	if (strlen(s) + 5 >= len) {
		buf[o++] = '.';
		buf[o++] = '.';
	}
	buf[o++] = '"';
	buf[o] = '\0';
	return buf;
}

/*
 * time.c - RFC 3339 time stamps, as Kubernetes objects carry them: parsed
 * strictly into milliseconds since the epoch (fractions and offsets
 * accepted; 't' and a space for 'T' as RFC 3339 allows), and written in
 * UTC with or without microseconds (metav1.Time and metav1.MicroTime).
 * Shared by the control plane and the Kubernetes daemon.  Bounded by the
 * length of the text.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "muster/util.h"

/* Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* Reads n digits at *p into *v. */
static bool digits(const char **p, int n, int *v)
{
	*v = 0;
	for (int i = 0; i < n; i++, (*p)++) {
		if (**p < '0' || **p > '9')
			return false;
		*v = *v * 10 + (**p - '0');
	}
	return true;
}

int mu__rfc3339_parse(const char *s, int64_t *ms)
{
	int y, mo, d, h, mi, se, frac = 0, fd = 0;
	const char *p = s;
	if (!s || !digits(&p, 4, &y) || *p++ != '-' || !digits(&p, 2, &mo) ||
	    *p++ != '-' || !digits(&p, 2, &d) || (*p != 'T' && *p != 't' && *p != ' '))
		return MU_EPARSE;
	p++;
	if (!digits(&p, 2, &h) || *p++ != ':' || !digits(&p, 2, &mi) ||
	    *p++ != ':' || !digits(&p, 2, &se))
		return MU_EPARSE;
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60)
		return MU_EPARSE;
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++, fd++)
			if (fd < 3)
				frac = frac * 10 + (*p - '0');
		while (fd > 0 && fd < 3)
			frac *= 10, fd++;
	}
	int64_t off = 0;
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int sign = *p++ == '-' ? -1 : 1, oh, om;
		if (!digits(&p, 2, &oh) || *p++ != ':' || !digits(&p, 2, &om))
			return MU_EPARSE;
		off = sign * (oh * 3600 + om * 60);
	} else {
		return MU_EPARSE;
	}
	if (*p)
		return MU_EPARSE;
	int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se - off;
	*ms = secs * 1000 + frac;
	return MU_OK;
}

/* Writes v in n decimal digits (zero-padded) at p. */
static void put_digits(char *p, long v, int n)
{
	while (n-- > 0) {
		p[n] = (char)('0' + v % 10);
		v /= 10;
	}
}

void mu__rfc3339_format(int64_t us, bool micro, char *buf, size_t len)
{
	int64_t secs = us >= 0 ? us / 1000000 : -((-us + 999999) / 1000000);
	long frac = (long)(us - secs * 1000000);
	time_t t = (time_t)secs;
	struct tm tm;
	gmtime_r(&t, &tm);
	int year = tm.tm_year + 1900;
	/* the common case by hand, the same text as the snprintf below (a
	 * write stamps a dozen times, and snprintf was most of it) */
	if (year >= 0 && year <= 9999 && len >= (micro ? 28u : 21u)) {
		put_digits(buf, year, 4);
		buf[4] = '-';
		put_digits(buf + 5, tm.tm_mon + 1, 2);
		buf[7] = '-';
		put_digits(buf + 8, tm.tm_mday, 2);
		buf[10] = 'T';
		put_digits(buf + 11, tm.tm_hour, 2);
		buf[13] = ':';
		put_digits(buf + 14, tm.tm_min, 2);
		buf[16] = ':';
		put_digits(buf + 17, tm.tm_sec, 2);
		char *p = buf + 19;
		if (micro) {
			*p++ = '.';
			put_digits(p, frac, 6);
			p += 6;
		}
		p[0] = 'Z';
		p[1] = '\0';
		return;
	}
	if (micro)
		snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", year,
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
	else
		snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02dZ", year,
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

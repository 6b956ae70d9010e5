/*
 * fmt.c - text formatting shared by every layer that writes for people or
 * for JSON: UTF-8 aware HTML escaping with truncation, human formats for
 * durations, counts and percentages, and a JSON string writer.  Nothing
 * allocates; write errors are left for the caller's ferror().
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "muster/util.h"

size_t mu__utf8_seqn(const char *s, size_t avail)
{
	const unsigned char *u = (const unsigned char *)s;
	unsigned c, lo = 0x80, hi = 0xBF;
	size_t len;

	if (!avail)
		return 0;
	c = u[0];
	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		len = 2;
	else if (c >= 0xE0 && c <= 0xEF)
		len = 3;
	else if (c >= 0xF0 && c <= 0xF4)
		len = 4;
	else
		return 0;
	if (len > avail)
		return 0;
	if (c == 0xE0)
		lo = 0xA0; /* overlong */
	else if (c == 0xED)
		hi = 0x9F; /* surrogates */
	else if (c == 0xF0)
		lo = 0x90; /* overlong */
	else if (c == 0xF4)
		hi = 0x8F; /* above U+10FFFF */
	/* in order, so that a NUL (which no continuation byte is) stops the
	 * reads of a NUL-terminated string before its end */
	if (u[1] < lo || u[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (u[i] < 0x80 || u[i] > 0xBF)
			return 0;
	return len;
}

size_t mu__utf8_seq(const char *s)
{
	return *s ? mu__utf8_seqn(s, 4) : 0;
}

/* Characters (valid sequences or stray bytes) in s, counting at most
 * `stop`; O(min(len, stop)). */
size_t mu__utf8_chars(const char *s, size_t stop)
{
	size_t n = 0;
	while (*s && n < stop) {
		size_t l = mu__utf8_seq(s);
		s += l ? l : 1;
		n++;
	}
	return n;
}

/* Writes one character of s escaped and returns its length in bytes. */
static size_t html_char(FILE *f, const char *s)
{
	unsigned char c = (unsigned char)*s;
	size_t l = mu__utf8_seq(s);

	switch (c) {
	case '&': fputs("&amp;", f); return 1;
	case '<': fputs("&lt;", f); return 1;
	case '>': fputs("&gt;", f); return 1;
	case '"': fputs("&quot;", f); return 1;
	case '\'': fputs("&#39;", f); return 1;
	case '\t': case '\n': case '\r': fputc(c, f); return 1;
	default: break;
	}
	if (l == 0 || c < 0x20 || c == 0x7F) {
		fputs("\xEF\xBF\xBD", f); /* U+FFFD */
		return 1;
	}
	fwrite(s, 1, l, f);
	return l;
}

void mu__html_text(FILE *f, const char *s, size_t max_chars)
{
	if (!s)
		return;
	size_t keep = (size_t)-1;
	if (max_chars > 0 && mu__utf8_chars(s, max_chars + 1) > max_chars)
		keep = max_chars - 1;
	for (size_t n = 0; *s && n < keep; n++)
		s += html_char(f, s);
	if (keep != (size_t)-1)
		fputs("\xE2\x80\xA6", f); /* ellipsis */
}

void mu__fmt_duration(char *buf, size_t n, double s)
{
	const char *sign = "";
	if (!isfinite(s)) {
		snprintf(buf, n, "-");
		return;
	}
	if (s < 0) {
		sign = "-";
		s = -s;
	}
	if (s == 0) {
		snprintf(buf, n, "0s");
	} else if (s * 1e6 < 999.5) {
		snprintf(buf, n, "%s%.3g\xC2\xB5s", sign, s * 1e6); /* micro sign */
	} else if (s * 1000 < 999.5) {
		snprintf(buf, n, "%s%.3gms", sign, s * 1000);
	} else if (s < 59.5) {
		snprintf(buf, n, "%s%.3gs", sign, s);
	} else if (s < 3599.5) {
		long long t = llround(s);
		if (t % 60)
			snprintf(buf, n, "%s%lldm %llds", sign, t / 60, t % 60);
		else
			snprintf(buf, n, "%s%lldm", sign, t / 60);
	} else if (s < 86370) {
		long long m = llround(s / 60);
		if (m % 60)
			snprintf(buf, n, "%s%lldh %lldm", sign, m / 60, m % 60);
		else
			snprintf(buf, n, "%s%lldh", sign, m / 60);
	} else if (s < 1e15) {
		long long h = llround(s / 3600);
		if (h % 24)
			snprintf(buf, n, "%s%lldd %lldh", sign, h / 24, h % 24);
		else
			snprintf(buf, n, "%s%lldd", sign, h / 24);
	} else {
		snprintf(buf, n, "%s%.3gd", sign, s / 86400);
	}
}

void mu__fmt_count(char *buf, size_t n, int64_t v)
{
	char tmp[32];
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	size_t i = sizeof tmp;
	int digits = 0;

	tmp[--i] = '\0';
	do {
		if (digits && digits % 3 == 0)
			tmp[--i] = ',';
		tmp[--i] = (char)('0' + u % 10);
		u /= 10;
		digits++;
	} while (u);
	if (v < 0)
		tmp[--i] = '-';
	snprintf(buf, n, "%s", tmp + i);
}

void mu__fmt_pct(char *buf, size_t n, double ratio, int decimals)
{
	if (!isfinite(ratio))
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%.*f%%", decimals, ratio * 100);
}

void mu__json_str(FILE *f, const char *s)
{
	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	while (*s) {
		unsigned char c = (unsigned char)*s;
		size_t l = mu__utf8_seq(s);
		if (c == '"' || c == '\\') {
			fputc('\\', f);
			fputc(c, f);
		} else if (c == '\n') {
			fputs("\\n", f);
		} else if (c == '\t') {
			fputs("\\t", f);
		} else if (c == '\r') {
			fputs("\\r", f);
		} else if (c < 0x20) {
			fprintf(f, "\\u%04x", c);
		} else if (l == 0) {
			fputs("\\ufffd", f);
		} else {
			fwrite(s, 1, l, f);
			s += l;
			continue;
		}
		s++;
	}
	fputc('"', f);
}

void mu__put_dur(FILE *f, double seconds)
{
	char b[48];
	mu__fmt_duration(b, sizeof b, seconds);
	fputs(b, f);
}

void mu__put_count(FILE *f, int64_t v)
{
	char b[32];
	mu__fmt_count(b, sizeof b, v);
	fputs(b, f);
}

void mu__put_pct(FILE *f, double ratio)
{
	char b[48];
	mu__fmt_pct(b, sizeof b, ratio, 1);
	fputs(b, f);
}

/*
 * slurm_parse.c - reads what Slurm's programs print for `muster eval
 * slurm`: timestamps ("2026-11-25T18:30:08", local time), and the lines of
 * space-separated KEY=VALUE fields of the job completion log
 * (jobcomp/filetxt) and of `scontrol -o show job`.
 *
 * The text comes from processes this code started, but it is parsed as
 * untrusted input: every function takes an explicit length, never reads
 * past it, and says MU_EPARSE for anything unexpected.  fuzz/fuzz_slurm.c
 * drives them.  Nothing is allocated.
 */
#include <string.h>
#include <time.h>

#include "muster/eval_slurm.h"

/* n decimal digits at s into *v; false if any is not a digit. */
static bool digits(const char *s, size_t n, int *v)
{
	int x = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		x = x * 10 + (s[i] - '0');
	}
	*v = x;
	return true;
}

int mu_slurm_parse_time(const char *s, size_t n, int64_t *t)
{
	/* YYYY-MM-DDTHH:MM:SS */
	int y, mo, d, h, mi, se;
	if (n != 19 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' ||
	    s[16] != ':')
		return MU_EPARSE;
	if (!digits(s, 4, &y) || !digits(s + 5, 2, &mo) || !digits(s + 8, 2, &d) ||
	    !digits(s + 11, 2, &h) || !digits(s + 14, 2, &mi) || !digits(s + 17, 2, &se))
		return MU_EPARSE;
	if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60)
		return MU_EPARSE;
	struct tm tm = {0};
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = se;
	tm.tm_isdst = -1;
	time_t r = mktime(&tm);
	if (r == (time_t)-1)
		return MU_EPARSE;
	*t = (int64_t)r;
	return MU_OK;
}

int mu_slurm_field(const char *line, size_t len, const char *key, const char **v,
		   size_t *n)
{
	size_t kl = strlen(key);
	size_t i = 0;
	while (i < len) {
		while (i < len && (line[i] == ' ' || line[i] == '\t'))
			i++;
		size_t b = i;
		while (i < len && line[i] != ' ' && line[i] != '\t' && line[i] != '\n')
			i++;
		/* the field is line[b, i) */
		if (i - b > kl && !memcmp(line + b, key, kl) && line[b + kl] == '=') {
			*v = line + b + kl + 1;
			*n = i - b - kl - 1;
			return MU_OK;
		}
		if (i < len && line[i] == '\n')
			break;
	}
	return MU_ENOENT;
}

/* An epoch time field, or -1 when absent or not a time. */
static int64_t time_field(const char *line, size_t len, const char *key)
{
	const char *v;
	size_t n;
	int64_t t;
	if (mu_slurm_field(line, len, key, &v, &n) != MU_OK ||
	    mu_slurm_parse_time(v, n, &t) != MU_OK)
		return -1;
	return t;
}

static bool field_is(const char *line, size_t len, const char *key, const char *want)
{
	const char *v;
	size_t n;
	return mu_slurm_field(line, len, key, &v, &n) == MU_OK && n == strlen(want) &&
	       !memcmp(v, want, n);
}

int mu_slurm_parse_line(const char *line, size_t len, mu_slurm_line_t *out)
{
	const char *v;
	size_t n;
	memset(out, 0, sizeof *out);
	if (mu_slurm_field(line, len, "JobId", &v, &n) != MU_OK || n == 0 || n > 15)
		return MU_EPARSE;
	int64_t id = 0;
	for (size_t i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return MU_EPARSE;
		id = id * 10 + (v[i] - '0');
	}
	out->id = id;
	out->submit = time_field(line, len, "SubmitTime");
	out->start = time_field(line, len, "StartTime");
	out->end = time_field(line, len, "EndTime");
	out->backfill = field_is(line, len, "Scheduler", "Backfill");
	out->completed = field_is(line, len, "JobState", "COMPLETED");
	return MU_OK;
}

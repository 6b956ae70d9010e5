/*
 * test_report.c - the JSON and HTML result writers and the SVG helpers.
 *
 * Results are built by hand (a realistic one from a fixed-seed generator,
 * and edge cases: nothing at all, one sample, all waits zero, hostile
 * names, NaN figures, a million samples).  JSON output goes through a small
 * validating JSON scanner in this file, then its structure and values are
 * looked up; HTML output is checked for balanced tags, escaping, no scripts
 * and no external references, and a bounded size.  With MU_REPORT_HTML set
 * to a path, the realistic page is also written there for a human to look
 * at.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "check.h"
#include "muster/sim.h"
#include "muster/report.h"

/* --- building results --------------------------------------------------- */

/* A deterministic pseudo-random number in [0, 1). */
static double rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(*s >> 11) / 9007199254740992.0;
}

static void result_free(mu_sim_result_t *r)
{
	free(r->jobs);
	free(r->samples);
	free(r->queues);
	memset(r, 0, sizeof *r);
}

/* Names point into static storage; the arrays are malloc'ed. */
static const char *const qnames[] = {"research", "product", "interns",
				     "a<b>&\"c'"};
static const char *const jnames[] = {"pretrain-7b", "bert-ft", "notebook",
				     "serve-llm", "x<script>y"};

/* A day of njobs jobs in 4 queues with nsamples samples; ~10% never
 * start, ~10% more never finish. */
static int make_result(mu_sim_result_t *r, size_t njobs, size_t nsamples)
{
	uint64_t s = 42;
	memset(r, 0, sizeof *r);
	r->jobs = calloc(njobs ? njobs : 1, sizeof *r->jobs);
	r->samples = calloc(nsamples ? nsamples : 1, sizeof *r->samples);
	r->queues = calloc(4, sizeof *r->queues);
	if (!r->jobs || !r->samples || !r->queues)
		return -1;
	r->njobs = njobs;
	r->nsamples = nsamples;
	r->nqueues = 4;
	for (size_t i = 0; i < njobs; i++) {
		mu_sim_job_t *j = &r->jobs[i];
		double u = rnd(&s);
		j->name = (char *)jnames[i % 5];
		j->queue = (char *)qnames[i % 4];
		j->type = (mu_job_type_t)(i % 4);
		j->submit_s = 86400 * rnd(&s);
		j->start_s = u < 0.1 ? -1 : j->submit_s + (u < 0.4 ? 0.2 * u :
			     pow(10, 5 * rnd(&s)));
		j->end_s = j->start_s < 0 || u > 0.9 ? -1 :
			   j->start_s + pow(10, 2 + 3 * rnd(&s));
		j->gpu_milli = (int64_t)(i % 3 ? 1000 : 8000) * (1 + (int64_t)(i % 2));
		j->pods = (int32_t)(1 + i % 2);
		j->preemptions = (int32_t)(i % 7 == 0);
		r->queues[i % 4].jobs++;
	}
	for (size_t i = 0; i < 4; i++) {
		r->queues[i].name = (char *)qnames[i];
		r->queues[i].gpu_seconds = 3600.0 * 512 * (0.4 - 0.1 * (double)i);
		r->queues[i].share = (0.4 - 0.1 * (double)i) / 1.0;
	}
	for (size_t i = 0; i < nsamples; i++) {
		mu_sim_sample_t *p = &r->samples[i];
		p->t_s = 86400.0 * (double)i / (double)(nsamples > 1 ? nsamples - 1 : 1);
		p->gpu_util = fmin(1, 0.55 + 0.4 * sin((double)i / 40) + 0.05 * rnd(&s));
		p->pending_jobs = (int32_t)(40 + 35 * sin((double)i / 25));
		p->running_jobs = (int32_t)(200 + 60 * cos((double)i / 30));
	}
	mu_sim_summary_t *m = &r->summary;
	*m = (mu_sim_summary_t){(int64_t)njobs, (int64_t)(njobs * 8 / 10), 0.8734,
		1234.5, 0.1, 5400, 30000, 8000, 4000, 40000, 90000, 97000.25,
		143, 7, 5012, 512, 0.8421, false, 0};
	return 0;
}

/* --- a validating JSON scanner ------------------------------------------ */

static const char *ws(const char *p)
{
	while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		p++;
	return p;
}

/* Past the string at p (which is at '"'), or NULL if it is not valid JSON
 * with valid UTF-8. */
static const char *jstring(const char *p)
{
	if (*p++ != '"')
		return NULL;
	while (*p != '"') {
		unsigned char c = (unsigned char)*p;
		if (c < 0x20)
			return NULL; /* also the end of the text */
		if (c == '\\') {
			p++;
			if (*p == 'u') {
				for (int i = 1; i <= 4; i++)
					if (!strchr("0123456789abcdefABCDEF", p[i]) || !p[i])
						return NULL;
				p += 5;
			} else if (*p && strchr("\"\\/bfnrt", *p)) {
				p++;
			} else {
				return NULL;
			}
			continue;
		}
		size_t l = mu__utf8_seq(p);
		if (!l)
			return NULL;
		p += l;
	}
	return p + 1;
}

static const char *jdigits(const char *p)
{
	if (*p < '0' || *p > '9')
		return NULL;
	while (*p >= '0' && *p <= '9')
		p++;
	return p;
}

/* Past the number at p, per the JSON grammar, or NULL. */
static const char *jnumber(const char *p)
{
	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (!(p = jdigits(p)))
		return NULL;
	if (*p == '.' && !(p = jdigits(p + 1)))
		return NULL;
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!(p = jdigits(p)))
			return NULL;
	}
	return p;
}

/* Past the value at p (after leading space), or NULL if it is invalid. */
static const char *jvalue(const char *p, int depth)
{
	p = ws(p);
	if (depth > 64)
		return NULL;
	if (*p == '"')
		return jstring(p);
	if (*p == '{' || *p == '[') {
		char close = *p == '{' ? '}' : ']';
		p = ws(p + 1);
		if (*p == close)
			return p + 1;
		for (;;) {
			if (close == '}') {
				if (!(p = jstring(ws(p))))
					return NULL;
				p = ws(p);
				if (*p++ != ':')
					return NULL;
			}
			if (!(p = jvalue(p, depth + 1)))
				return NULL;
			p = ws(p);
			if (*p == close)
				return p + 1;
			if (*p++ != ',')
				return NULL;
		}
	}
	if (!strncmp(p, "null", 4))
		return p + 4;
	if (!strncmp(p, "true", 4))
		return p + 4;
	if (!strncmp(p, "false", 5))
		return p + 5;
	return jnumber(p);
}

static int json_valid(const char *s)
{
	const char *p = jvalue(s, 0);
	return p && *ws(p) == '\0';
}

/* Decodes the JSON string at p into out (UTF-8, BMP escapes only). */
static void jdecode(const char *p, char *out, size_t n)
{
	size_t o = 0;
	if (!p || *p != '"') {
		out[0] = '\0';
		return;
	}
	for (p++; *p != '"' && o + 4 < n; p++) {
		if (*p != '\\') {
			out[o++] = *p;
			continue;
		}
		p++;
		const char *m = strchr("\"\"\\\\//b\bf\fn\nr\rt\t", *p);
		if (*p != 'u') {
			out[o++] = m[1];
			continue;
		}
		unsigned c = (unsigned)strtoul((char[5]){p[1], p[2], p[3], p[4], 0}, NULL, 16);
		p += 4;
		if (c < 0x80) {
			out[o++] = (char)c;
		} else if (c < 0x800) {
			out[o++] = (char)(0xC0 | c >> 6);
			out[o++] = (char)(0x80 | (c & 0x3F));
		} else {
			out[o++] = (char)(0xE0 | c >> 12);
			out[o++] = (char)(0x80 | ((c >> 6) & 0x3F));
			out[o++] = (char)(0x80 | (c & 0x3F));
		}
	}
	out[o] = '\0';
}

/* The value of member key in the object at p, or NULL. */
static const char *jget(const char *p, const char *key)
{
	char name[256];
	p = ws(p);
	if (!p || *p != '{')
		return NULL;
	p = ws(p + 1);
	while (*p == '"') {
		jdecode(p, name, sizeof name);
		p = ws(jstring(p));
		p = ws(p + 1); /* ':' */
		if (!strcmp(name, key))
			return p;
		p = ws(jvalue(p, 0));
		if (*p != ',')
			return NULL;
		p = ws(p + 1);
	}
	return NULL;
}

/* Element i of the array at p, or NULL; with i = -1, *count gets the
 * length. */
static const char *jindex(const char *p, long i, long *count)
{
	long n = 0;
	p = ws(p);
	if (!p || *p != '[')
		return NULL;
	p = ws(p + 1);
	while (*p && *p != ']') {
		if (n == i)
			return p;
		p = ws(jvalue(p, 0));
		n++;
		if (*p == ',')
			p = ws(p + 1);
	}
	if (count)
		*count = n;
	return NULL;
}

static long jlen(const char *p)
{
	long n = -1;
	jindex(p, -1, &n);
	return n;
}

/* Member `key` of element i of array `arr` in the document. */
static const char *jat(const char *doc, const char *arr, long i, const char *key)
{
	const char *e = jindex(jget(doc, arr), i, NULL);
	return e ? jget(e, key) : NULL;
}

static int jis_null(const char *p)
{
	return p && !strncmp(p, "null", 4);
}

/* Whether the text at p (may be NULL) starts with want. */
static int jstarts(const char *p, const char *want)
{
	return p && !strncmp(p, want, strlen(want));
}

static double jnum(const char *p)
{
	return p ? strtod(p, NULL) : NAN;
}

/* --- running the writers ------------------------------------------------ */

/* The writer's output as a malloc'ed string (the caller frees it), and its
 * return code in *rc. */
static char *run_json(const mu_sim_result_t *r, int *rc)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	*rc = mu_sim_write_json(r, f);
	fclose(f);
	return buf;
}

static char *run_html(const mu_sim_result_t *r, const char *title, int *rc)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	*rc = mu_sim_write_html(r, title, f);
	fclose(f);
	return buf;
}

static size_t count_of(const char *s, const char *needle)
{
	size_t n = 0, l = strlen(needle);
	while ((s = strstr(s, needle))) {
		n++;
		s += l;
	}
	return n;
}

static int has_ci(const char *s, const char *needle)
{
	size_t l = strlen(needle);
	for (; *s; s++)
		if (!strncasecmp(s, needle, l))
			return 1;
	return 0;
}

/* Whether s prints a non-finite number: "nan", "inf" or "infinity" as a
 * word of its own, in any case ("inference" is fine). */
static int has_nonfinite(const char *s)
{
	static const char *const words[] = {"nan", "inf", "infinity"};
	for (const char *p = s; *p; p++) {
		if (p > s && ((p[-1] | 0x20) >= 'a' && (p[-1] | 0x20) <= 'z'))
			continue;
		for (size_t i = 0; i < 3; i++) {
			size_t l = strlen(words[i]);
			if (strncasecmp(p, words[i], l))
				continue;
			char c = (char)(p[l] | 0x20);
			if (!(c >= 'a' && c <= 'z'))
				return 1;
		}
	}
	return 0;
}

/* Whether every element in the HTML is closed in order: void elements and
 * "/>" need no end tag; comments, <!DOCTYPE> and <style> bodies are
 * skipped.  Also fails on a '<' that starts no tag. */
static int tags_balanced(const char *s)
{
	static const char *const voids[] = {"meta", "br", "hr", "img", "link",
					    "input", "!DOCTYPE"};
	char stack[64][16];
	int depth = 0;

	while ((s = strchr(s, '<'))) {
		char name[16];
		size_t n = 0;
		int closing = s[1] == '/';
		const char *p = s + 1 + closing;
		while (*p && !strchr(" \t\n>/", *p) && n < sizeof name - 1)
			name[n++] = *p++;
		name[n] = '\0';
		if (n == 0)
			return 0;
		const char *end = strchr(p, '>');
		if (!end)
			return 0;
		int self = end[-1] == '/';
		int is_void = 0;
		for (size_t i = 0; i < sizeof voids / sizeof *voids; i++)
			is_void |= !strcasecmp(name, voids[i]);
		if (closing) {
			if (depth == 0 || strcmp(stack[depth - 1], name))
				return 0;
			depth--;
		} else if (!self && !is_void) {
			if (depth == 64)
				return 0;
			strcpy(stack[depth++], name);
		}
		s = end + 1;
		if (!closing && !strcmp(name, "style") && !(s = strstr(s, "</style>")))
			return 0;
	}
	return depth == 0;
}

/* The checks every page must pass. */
static void check_page(mu_t_t *t, const char *h)
{
	CHECK(t, h != NULL);
	if (!h)
		return;
	CHECK(t, !strncmp(h, "<!DOCTYPE html>", 15));
	CHECK(t, tags_balanced(h));
	CHECK_EQ_INT(t, count_of(h, "<svg"), count_of(h, "</svg>"));
	CHECK(t, !has_ci(h, "<script"));
	CHECK(t, !has_ci(h, "http:") && !has_ci(h, "https:") && !has_ci(h, "url("));
	CHECK(t, !has_nonfinite(h));
	CHECK(t, strstr(h, "</html>") != NULL);
}

/* --- JSON tests --------------------------------------------------------- */

static void test_json_structure(mu_t_t *t)
{
	static const char *const keys[] = {"jobs", "completed", "gpu_utilization",
		"avg_wait_s", "p50_wait_s", "p95_wait_s", "p99_wait_s", "avg_jct_s",
		"p50_jct_s", "p95_jct_s", "p99_jct_s", "makespan_s", "preemptions",
		"moves", "cycles", "total_gpus", "dra_gpus", "engine_s"};
	mu_sim_result_t r;
	int rc = -1;
	CHECK(t, make_result(&r, 50, 30) == 0);
	char *j = run_json(&r, &rc);
	CHECK_EQ_INT(t, rc, MU_OK);
	CHECK(t, j && json_valid(j));
	if (!j || !json_valid(j)) {
		free(j);
		result_free(&r);
		return;
	}
	const char *sum = jget(j, "summary");
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
		CHECK(t, jget(sum, keys[i]) != NULL);
	/* exactly those keys */
	CHECK_EQ_INT(t, count_of(strstr(j, "\"summary\""), "\": ") -
			count_of(strstr(j, "\"jobs\": ["), "\": "),
		     1 + sizeof keys / sizeof *keys);
	CHECK_EQ_INT(t, jnum(jget(sum, "jobs")), 50);
	CHECK(t, fabs(jnum(jget(sum, "gpu_utilization")) - 0.8734) < 1e-9);
	CHECK(t, fabs(jnum(jget(sum, "makespan_s")) - 97000.25) < 1e-6);
	CHECK(t, fabs(jnum(jget(sum, "engine_s")) - 0.8421) < 1e-9);
	CHECK_EQ_INT(t, jnum(jget(sum, "total_gpus")), 512);
	CHECK_EQ_INT(t, jnum(jget(sum, "moves")), 7);
	CHECK_EQ_INT(t, jnum(jget(sum, "cycles")), 5012);
	CHECK_EQ_INT(t, jlen(jget(j, "jobs")), 50);
	CHECK_EQ_INT(t, jlen(jget(j, "queues")), 4);
	CHECK_EQ_INT(t, jlen(jget(j, "samples")), 30);
	CHECK(t, jget(j, "samples") != NULL);
	/* job fields */
	static const char *const jkeys[] = {"name", "queue", "type", "submit_s",
		"start_s", "end_s", "gpus", "pods", "preemptions", "moves"};
	for (size_t i = 0; i < sizeof jkeys / sizeof *jkeys; i++)
		CHECK(t, jat(j, "jobs", 49, jkeys[i]) != NULL);
	CHECK(t, fabs(jnum(jat(j, "jobs", 0, "gpus")) - 8) < 1e-9);
	CHECK(t, fabs(jnum(jat(j, "jobs", 0, "submit_s")) - r.jobs[0].submit_s) < 1e-3);
	CHECK(t, jstarts(jat(j, "jobs", 1, "type"), "\"inference\""));
	CHECK(t, fabs(jnum(jat(j, "queues", 0, "share")) - 0.4) < 1e-9);
	CHECK(t, jat(j, "queues", 0, "deserved_gpus") != NULL);
	CHECK(t, jat(j, "queues", 0, "fair_gpu_seconds") != NULL);
	CHECK(t, fabs(jnum(jat(j, "queues", 1, "gpu_seconds")) - 3600.0 * 512 * 0.3) < 1e-3);
	CHECK_EQ_INT(t, jnum(jat(j, "queues", 2, "jobs")), r.queues[2].jobs);
	CHECK_EQ_INT(t, jnum(jat(j, "samples", 3, "running_jobs")),
		     r.samples[3].running_jobs);
	CHECK(t, jat(j, "samples", 3, "gpu_util") && jat(j, "samples", 3, "t_s") &&
		 jat(j, "samples", 3, "pending_jobs"));
	free(j);
	result_free(&r);
}

static void test_json_nulls_and_numbers(mu_t_t *t)
{
	mu_sim_job_t jobs[2] = {
		{"a", "q", MU_JOB_TRAIN, 5, -1, -1, 250, 1, 0, 0},
		{"b", "q", MU_JOB_BATCH, 5, 7.5, -1, 1500, 3, 2, 0},
	};
	mu_sim_sample_t smp[1] = {{0, NAN, 0, 0}};
	mu_sim_result_t r = {0};
	int rc = -1;
	r.jobs = jobs;
	r.njobs = 2;
	r.samples = smp;
	r.nsamples = 1;
	r.summary.avg_wait_s = NAN;
	r.summary.p99_jct_s = INFINITY;
	r.summary.gpu_utilization = -0.0;
	char *j = run_json(&r, &rc);
	CHECK_EQ_INT(t, rc, MU_OK);
	CHECK(t, j && json_valid(j));
	if (!j)
		return;
	CHECK(t, jis_null(jat(j, "jobs", 0, "start_s")));
	CHECK(t, jis_null(jat(j, "jobs", 0, "end_s")));
	CHECK(t, !jis_null(jat(j, "jobs", 1, "start_s")));
	CHECK(t, jis_null(jat(j, "jobs", 1, "end_s")));
	CHECK(t, fabs(jnum(jat(j, "jobs", 0, "gpus")) - 0.25) < 1e-12);
	CHECK(t, fabs(jnum(jat(j, "jobs", 1, "gpus")) - 1.5) < 1e-12);
	CHECK_EQ_INT(t, jnum(jat(j, "jobs", 1, "preemptions")), 2);
	CHECK(t, jstarts(jat(j, "jobs", 1, "type"), "\"batch\""));
	CHECK(t, jis_null(jget(jget(j, "summary"), "avg_wait_s")));
	CHECK(t, jis_null(jget(jget(j, "summary"), "p99_jct_s")));
	CHECK(t, jis_null(jat(j, "samples", 0, "gpu_util")));
	CHECK(t, !strstr(j, "-0") && !has_nonfinite(j));
	CHECK_EQ_INT(t, jlen(jget(j, "queues")), 0);
	free(j);
}

static void test_json_escaping(mu_t_t *t)
{
	char name[] = "q\"b\\s/\n\t\r\x01\x1f\x7f caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x9A\x80 "
		      "bad\xFF\xC0\xAF\xED\xA0\x80 end";
	const char *want = "q\"b\\s/\n\t\r\x01\x1f\x7f caf\xC3\xA9 \xE2\x82\xAC "
			   "\xF0\x9F\x9A\x80 bad\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"
			   "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD end";
	mu_sim_job_t job = {name, NULL, (mu_job_type_t)9, 0, 0, 1, 0, 1, 0, 0};
	mu_sim_queue_t q = {name, 1, 1, 1, 8, 3600};
	mu_sim_result_t r = {0};
	char dec[512];
	int rc = -1;
	r.jobs = &job;
	r.njobs = 1;
	r.queues = &q;
	r.nqueues = 1;
	char *j = run_json(&r, &rc);
	CHECK_EQ_INT(t, rc, MU_OK);
	CHECK(t, j && json_valid(j));
	if (!j)
		return;
	CHECK(t, strstr(j, "\\u0001\\u001f") != NULL);
	CHECK(t, strstr(j, "q\\\"b\\\\s/\\n\\t\\r") != NULL);
	CHECK(t, strstr(j, "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x9A\x80") != NULL);
	jdecode(jat(j, "jobs", 0, "name"), dec, sizeof dec);
	CHECK_STR(t, dec, want);
	jdecode(jat(j, "queues", 0, "name"), dec, sizeof dec);
	CHECK_STR(t, dec, want);
	CHECK(t, jis_null(jat(j, "jobs", 0, "queue")));
	CHECK(t, jstarts(jat(j, "jobs", 0, "type"), "\"unknown\""));
	free(j);
}

static void test_json_empty(mu_t_t *t)
{
	mu_sim_result_t r = {0};
	int rc = -1;
	char *j = run_json(&r, &rc);
	CHECK_EQ_INT(t, rc, MU_OK);
	CHECK(t, j && json_valid(j));
	if (!j)
		return;
	CHECK_EQ_INT(t, jlen(jget(j, "jobs")), 0);
	CHECK_EQ_INT(t, jlen(jget(j, "queues")), 0);
	CHECK_EQ_INT(t, jlen(jget(j, "samples")), 0);
	CHECK_EQ_INT(t, jnum(jget(jget(j, "summary"), "jobs")), 0);
	free(j);
	CHECK_EQ_INT(t, mu_sim_write_json(NULL, stdout), MU_EINVAL);
}

/* Write errors: a full device (seen at flush) and a read-only stream. */
static void test_write_errors(mu_t_t *t)
{
	mu_sim_result_t r;
	CHECK(t, make_result(&r, 2000, 100) == 0);
	FILE *f = fopen("/dev/full", "w");
	if (f) {
		CHECK_EQ_INT(t, mu_sim_write_json(&r, f), MU_EIO);
		fclose(f);
		f = fopen("/dev/full", "w");
		CHECK_EQ_INT(t, mu_sim_write_html(&r, "x", f), MU_EIO);
		fclose(f);
	}
	f = fopen("/dev/null", "r");
	CHECK(t, f != NULL);
	if (f) {
		CHECK_EQ_INT(t, mu_sim_write_json(&r, f), MU_EIO);
		CHECK_EQ_INT(t, mu_sim_write_html(&r, "x", f), MU_EIO);
		fclose(f);
	}
	result_free(&r);
}

/* --- HTML tests --------------------------------------------------------- */

static void test_html_full(mu_t_t *t)
{
	mu_sim_result_t r;
	int rc = -1;
	CHECK(t, make_result(&r, 3000, 600) == 0);
	char *h = run_html(&r, "Demo <run> & \"friends\"", &rc);
	CHECK_EQ_INT(t, rc, MU_OK);
	check_page(t, h);
	if (!h) {
		result_free(&r);
		return;
	}
	CHECK(t, count_of(h, "<svg") >= 5);
	CHECK(t, strstr(h, "<title>Demo &lt;run&gt; &amp; &quot;friends&quot;</title>"));
	CHECK(t, strstr(h, "a&lt;b&gt;&amp;&quot;c&#39;") != NULL);
	CHECK(t, !strstr(h, "a<b>"));
	CHECK(t, strstr(h, "x&lt;script&gt;y") != NULL);
	CHECK(t, strstr(h, "87.3%") != NULL);      /* utilization */
	CHECK(t, strstr(h, "1d 2h") != NULL);      /* makespan 97000 s */
	CHECK(t, strstr(h, "20m 35s") != NULL);    /* mean wait 1234.5 s */
	CHECK(t, strstr(h, "5,012") != NULL);      /* cycles */
	CHECK(t, strstr(h, "p95 1h 30m") != NULL); /* wait marker */
	CHECK(t, strstr(h, ">interactive<") && strstr(h, ">inference<"));
	CHECK(t, strstr(h, "Longest waits") != NULL);
	CHECK(t, strstr(h, "class=\"cut\"") != NULL); /* the tall "<1s" bin */
	CHECK(t, strstr(h, ") within 1s.") != NULL);
	CHECK(t, strstr(h, ">pending<") && strstr(h, ">running<"));

	int rc2 = -1;
	char *h2 = run_html(&r, "Demo <run> & \"friends\"", &rc2);
	CHECK(t, h2 && !strcmp(h, h2)); /* deterministic */
	free(h2);

	const char *out = getenv("MU_REPORT_HTML");
	if (out) {
		FILE *f = fopen(out, "w");
		CHECK(t, f && mu_sim_write_html(&r, "muster demo: one simulated day", f) == MU_OK);
		if (f)
			fclose(f);
	}
	free(h);
	result_free(&r);
}

static void test_html_empty(mu_t_t *t)
{
	mu_sim_result_t r = {0};
	int rc = -1;
	char *h = run_html(&r, NULL, &rc);
	CHECK_EQ_INT(t, rc, MU_OK);
	check_page(t, h);
	if (!h)
		return;
	CHECK(t, strstr(h, "<title>muster simulation report</title>") != NULL);
	CHECK(t, strstr(h, "No samples were recorded.") != NULL);
	CHECK(t, strstr(h, "No job started.") != NULL);
	CHECK(t, strstr(h, "No queues.") != NULL);
	CHECK(t, strstr(h, "No jobs.") != NULL);
	CHECK(t, !strstr(h, "Longest waits"));
	free(h);
	CHECK_EQ_INT(t, mu_sim_write_html(NULL, "x", stdout), MU_EINVAL);
}

/* The y of the <text> element just before label in h, or -1. */
static double label_y(const char *h, const char *label)
{
	const char *at = strstr(h, label), *y = NULL;
	for (const char *p = h; at && (p = strstr(p, "<text x=\"")) && p < at; p++)
		y = p;
	if (!y || !(y = strstr(y, " y=\"")) || y > at)
		return -1;
	return atof(y + 4);
}

/* One sample, all waits zero, NaN figures and a zero-GPU cluster. */
static void test_html_degenerate(mu_t_t *t)
{
	mu_sim_job_t jobs[3] = {
		{"j1", "q", MU_JOB_INTERACTIVE, 10, 10, 20, 1000, 1, 0, 0},
		{"j2", "q", MU_JOB_INTERACTIVE, 10, 10, -1, 500, 1, 0, 0},
		{"j3", "q", (mu_job_type_t)7, 10, 10, 10, 0, 1, 0, 0},
	};
	mu_sim_sample_t smp[1] = {{10, 0.5, 0, 2}};
	mu_sim_queue_t q[2] = {{"q", NAN, NAN, 3, 0, NAN}, {"org", 0, 0, 0, 16, 0}};
	mu_sim_result_t r = {0};
	int rc = -1;
	r.jobs = jobs;
	r.njobs = 3;
	r.samples = smp;
	r.nsamples = 1;
	r.queues = q;
	r.nqueues = 2;
	r.summary.jobs = 3;
	r.summary.gpu_utilization = NAN;
	r.summary.p99_wait_s = INFINITY;
	r.summary.engine_s = NAN;
	r.summary.cycles = 4;
	char *h = run_html(&r, "", &rc);
	CHECK_EQ_INT(t, rc, MU_OK);
	check_page(t, h);
	if (!h)
		return;
	CHECK(t, strstr(h, "<circle") != NULL); /* the single sample */
	CHECK(t, strstr(h, "p50 0s") && strstr(h, "p95 0s"));
	/* percentiles at one x: their labels sit in different rows, above the
	 * bars rather than on them */
	double y50 = label_y(h, ">p50 0s</text>"), y95 = label_y(h, ">p95 0s</text>");
	CHECK(t, y50 > 0 && y95 > 0 && y50 != y95);
	CHECK(t, y50 <= 50 && y95 <= 50); /* above the bars (the plot starts at y 56) */
	CHECK(t, strstr(h, "<th>Deserved GPUs</th>") != NULL);
	CHECK(t, strstr(h, "<td>16.0</td>") != NULL); /* org's deserved quota */
	CHECK(t, strstr(h, "under 1s: 3 jobs (100.0%)") != NULL);
	CHECK(t, strstr(h, ">other<") != NULL);
	CHECK_EQ_INT(t, count_of(h, ">org<"), 1); /* in the table, not a bar */
	CHECK(t, !strstr(h, "class=\"cut\""));   /* nothing to cut off */
	CHECK(t, strstr(h, "not finished") != NULL); /* j2 is listed */
	free(h);
}

/* Many queues are cut to bars and table rows; a huge run stays small. */
static void test_html_large(mu_t_t *t)
{
	mu_sim_result_t r;
	int rc = -1;
	CHECK(t, make_result(&r, 200000, 1000000) == 0);
	mu_sim_queue_t *qs = calloc(300, sizeof *qs);
	char (*names)[24] = calloc(300, sizeof *names);
	CHECK(t, qs && names);
	if (!qs || !names) {
		free(qs);
		free(names);
		result_free(&r);
		return;
	}
	for (int i = 0; i < 300; i++) {
		snprintf(names[i], sizeof names[i], "team-%03d", i);
		qs[i] = (mu_sim_queue_t){names[i], 100.0 * (i + 1), (i + 1) / 45150.0, i, i, 50.0 * i};
	}
	free(r.queues);
	r.queues = qs;
	r.nqueues = 300;
	char *h = run_html(&r, "large", &rc);
	CHECK_EQ_INT(t, rc, MU_OK);
	check_page(t, h);
	if (h) {
		CHECK(t, strlen(h) < 600000);
		CHECK(t, strstr(h, "(276 other queues)") != NULL);
		CHECK(t, strstr(h, "100 smaller queues are not listed.") != NULL);
		CHECK(t, strstr(h, ">team-299<") && !strstr(h, ">team-099<"));
		/* every path has at most MU__SVG_MAX_POINTS points */
		for (const char *p = h; (p = strstr(p, " d=\"")); p++) {
			const char *e = strchr(p + 4, '"');
			size_t pts = 0;
			for (const char *c = p + 4; c < e; c++)
				pts += *c == 'L' || *c == 'M';
			CHECK(t, pts <= MU__SVG_MAX_POINTS + 2);
		}
	}
	free(h);
	r.queues = NULL;
	free(qs);
	free(names);
	result_free(&r);
}

/* --- SVG and text helpers ----------------------------------------------- */

static char *capture_text(const char *s, size_t max)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	mu__html_text(f, s, max);
	fclose(f);
	return buf;
}

static void test_text(mu_t_t *t)
{
	char b[64], *s;
	CHECK_EQ_INT(t, mu__utf8_seq("a"), 1);
	CHECK_EQ_INT(t, mu__utf8_seq("\xC3\xA9"), 2);
	CHECK_EQ_INT(t, mu__utf8_seq("\xE2\x82\xAC"), 3);
	CHECK_EQ_INT(t, mu__utf8_seq("\xF0\x9F\x9A\x80"), 4);
	CHECK_EQ_INT(t, mu__utf8_seq(""), 0);
	CHECK_EQ_INT(t, mu__utf8_seq("\xC0\xAF"), 0);         /* overlong */
	CHECK_EQ_INT(t, mu__utf8_seq("\xE0\x80\xAF"), 0);     /* overlong */
	CHECK_EQ_INT(t, mu__utf8_seq("\xED\xA0\x80"), 0);     /* surrogate */
	CHECK_EQ_INT(t, mu__utf8_seq("\xF4\x90\x80\x80"), 0); /* > U+10FFFF */
	CHECK_EQ_INT(t, mu__utf8_seq("\xE2\x82"), 0);         /* cut short */
	CHECK_EQ_INT(t, mu__utf8_seq("\x80"), 0);

	s = capture_text("<a href='x'>&\"\x01\xFF", 0);
	CHECK_STR(t, s, "&lt;a href=&#39;x&#39;&gt;&amp;&quot;\xEF\xBF\xBD\xEF\xBF\xBD");
	free(s);
	s = capture_text("abcdef", 4);
	CHECK_STR(t, s, "abc\xE2\x80\xA6");
	free(s);
	s = capture_text("abcd", 4);
	CHECK_STR(t, s, "abcd");
	free(s);
	s = capture_text("h\xC3\xA9llo", 3);
	CHECK_STR(t, s, "h\xC3\xA9\xE2\x80\xA6");
	free(s);
	s = capture_text("<<<<<", 3);
	CHECK_STR(t, s, "&lt;&lt;\xE2\x80\xA6");
	free(s);

	static const struct {
		double s;
		const char *want;
	} durs[] = {
		{0, "0s"}, {0.85, "850ms"}, {0.0001, "100\xC2\xB5s"}, {0.0012, "1.2ms"},
		{4.09e-6, "4.09\xC2\xB5s"}, {0.9996, "1s"}, {45.2, "45.2s"},
		{59.4, "59.4s"}, {59.7, "1m"}, {725, "12m 5s"}, {11520, "3h 12m"},
		{3599.7, "1h"}, {86399, "1d"}, {187200, "2d 4h"}, {-90, "-1m 30s"},
		{NAN, "-"}, {INFINITY, "-"},
	};
	for (size_t i = 0; i < sizeof durs / sizeof *durs; i++) {
		mu__fmt_duration(b, sizeof b, durs[i].s);
		CHECK_STR(t, b, durs[i].want);
	}
	mu__fmt_count(b, sizeof b, 1234567);
	CHECK_STR(t, b, "1,234,567");
	mu__fmt_count(b, sizeof b, -1000);
	CHECK_STR(t, b, "-1,000");
	mu__fmt_count(b, sizeof b, 999);
	CHECK_STR(t, b, "999");
	mu__fmt_count(b, sizeof b, INT64_MIN);
	CHECK_STR(t, b, "-9,223,372,036,854,775,808");
	mu__fmt_pct(b, sizeof b, 0.8734, 1);
	CHECK_STR(t, b, "87.3%");
	mu__fmt_pct(b, sizeof b, NAN, 1);
	CHECK_STR(t, b, "-");
}

static void test_ticks(mu_t_t *t)
{
	char b[64];
	double hi = 87;
	CHECK(t, mu__svg_nice_step(100, 5) == 20);
	CHECK(t, fabs(mu__svg_nice_step(1, 5) - 0.2) < 1e-12);
	CHECK(t, mu__svg_nice_step(7000, 6) == 1000);
	CHECK(t, mu__svg_nice_step(0, 5) == 1 && mu__svg_nice_step(NAN, 5) == 1);
	CHECK(t, mu__svg_nice_dur_step(86400, 8) == 10800);
	CHECK(t, mu__svg_nice_dur_step(600, 6) == 120);
	CHECK(t, mu__svg_nice_dur_step(60 * 86400, 8) == 604800);
	CHECK(t, mu__svg_nice_dur_step(3650 * 86400.0, 8) == 500 * 86400.0);
	CHECK(t, mu__svg_nice_ceil(0, &hi, 5) == 20 && hi == 100);
	hi = 0;
	mu__svg_nice_ceil(0, &hi, 5);
	CHECK(t, hi == 1);
	mu__svg_fmt(b, sizeof b, MU__SVG_PCT, 0.4, 0.2);
	CHECK_STR(t, b, "40%");
	mu__svg_fmt(b, sizeof b, MU__SVG_PCT, 0.025, 0.005);
	CHECK_STR(t, b, "2.5%");
	mu__svg_fmt(b, sizeof b, MU__SVG_NUM, 12000, 2000);
	CHECK_STR(t, b, "12,000");
	mu__svg_fmt(b, sizeof b, MU__SVG_NUM, 0.30000000004, 0.1);
	CHECK_STR(t, b, "0.3");
	mu__svg_fmt(b, sizeof b, MU__SVG_NUM, -1e-17, 0.1);
	CHECK_STR(t, b, "0.0");
	mu__svg_fmt(b, sizeof b, MU__SVG_DUR, 0, 3600);
	CHECK_STR(t, b, "0");
	mu__svg_fmt(b, sizeof b, MU__SVG_DUR, 5400, 1800);
	CHECK_STR(t, b, "1h 30m");
	mu__svg_fmt(b, sizeof b, MU__SVG_LOGDUR, 2, 1);
	CHECK_STR(t, b, "1m 40s");
}

/* A million points with one spike: at most MU__SVG_MAX_POINTS go out and
 * the spike survives. */
static void pt_spike(const void *ctx, size_t i, double *x, double *y)
{
	(void)ctx;
	*x = (double)i;
	*y = i == 777777 ? 1.0 : 0.1 * (double)(i % 3);
}

static void pt_gaps(const void *ctx, size_t i, double *x, double *y)
{
	(void)ctx;
	*x = (double)i;
	*y = i % 2 ? NAN : 0.5;
}

static void test_series(mu_t_t *t)
{
	char *buf = NULL;
	size_t len = 0;
	mu__svg_plot_t p;
	FILE *f = open_memstream(&buf, &len);
	CHECK(t, f != NULL);
	if (!f)
		return;
	mu__svg_plot_init(&p, 1000, 300, 0, 1e6, 0, 1);
	CHECK(t, p.px > 0 && p.pw > 0 && p.ph > 0);
	CHECK(t, mu__svg_x(&p, -5) == p.px && mu__svg_x(&p, 2e6) == p.px + p.pw);
	CHECK(t, mu__svg_y(&p, NAN) == p.py + p.ph);
	mu__svg_series(f, &p, pt_spike, NULL, 1000000, "s0", false);
	fclose(f);
	CHECK(t, buf && count_of(buf, "L") + count_of(buf, "M") <= MU__SVG_MAX_POINTS);
	char top[32];
	snprintf(top, sizeof top, " %.1fL", p.py);
	CHECK(t, buf && strstr(buf, top) != NULL);
	free(buf);

	buf = NULL;
	f = open_memstream(&buf, &len);
	if (!f)
		return;
	mu__svg_plot_init(&p, 1000, 300, 0, 10, 0, 1);
	mu__svg_series(f, &p, pt_gaps, NULL, 10, "s1", true);
	mu__svg_series(f, &p, pt_gaps, NULL, 1, "s1", false);
	mu__svg_plot_init(&p, 0, 0, NAN, NAN, 5, 5); /* degenerate window */
	CHECK(t, p.x1 > p.x0 && p.y1 > p.y0 && p.pw >= 10 && p.ph >= 10);
	fclose(f);
	CHECK(t, buf && strstr(buf, "Z\"/>") != NULL);       /* closed area */
	CHECK(t, buf && strstr(buf, "<circle class=\"dot s1\"") != NULL);
	CHECK(t, buf && !has_nonfinite(buf));
	free(buf);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_json_structure);
	MU_RUN(&t, test_json_nulls_and_numbers);
	MU_RUN(&t, test_json_escaping);
	MU_RUN(&t, test_json_empty);
	MU_RUN(&t, test_write_errors);
	MU_RUN(&t, test_html_full);
	MU_RUN(&t, test_html_empty);
	MU_RUN(&t, test_html_degenerate);
	MU_RUN(&t, test_html_large);
	MU_RUN(&t, test_text);
	MU_RUN(&t, test_ticks);
	MU_RUN(&t, test_series);
	return mu_t_done(&t);
}

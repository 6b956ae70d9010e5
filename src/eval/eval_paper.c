/*
 * eval_paper.c - the FGD paper's published curves, for comparison.
 *
 * The artifact's fgd_analysis_allo_discrete.csv and
 * fgd_analysis_frag_ratio_discrete.csv hold one row per (trace, policy,
 * seed): the columns workload and sc_policy name the row, the columns
 * named 0, 1, 2, ... hold the curve (other columns are ignored).  Rows are
 * plain comma-separated values, wider than the general CSV reader allows,
 * so this file splits them itself and refuses quotes.  Rows of one
 * (workload, policy) are averaged point by point over the rows that have
 * a value there.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "muster/eval.h"
#include "muster/util.h"

#define PAPER_MAX_COLS 1024 /* columns of one row */
#define PAPER_MAX_BYTES (64L << 20)

static const struct {
	const char *ours, *paper;
} paper_names[] = {
	{"random", "01-Random"},      {"dotprod", "02-DotProd"},
	{"clustering", "03-GpuClustering"}, {"packing", "04-GpuPacking"},
	{"bestfit", "05-BestFit"},    {"fgd", "06-FGD"},
};

const char *mu_eval_paper_policy(const char *policy)
{
	for (size_t i = 0; i < sizeof paper_names / sizeof *paper_names; i++)
		if (strcmp(paper_names[i].ours, policy) == 0)
			return paper_names[i].paper;
	return NULL;
}

void mu_eval_paper_release(mu_eval_paper_t *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->ncurves; i++) {
		free(p->curves[i].workload);
		free(p->curves[i].policy);
		free(p->curves[i].mean);
	}
	free(p->curves);
	memset(p, 0, sizeof *p);
}

const mu_eval_paper_curve_t *mu_eval_paper_find(const mu_eval_paper_t *p,
						const char *workload,
						const char *policy)
{
	const char *name = mu_eval_paper_policy(policy);
	if (!p || !name || !workload)
		return NULL;
	for (size_t i = 0; i < p->ncurves; i++)
		if (!strcmp(p->curves[i].workload, workload) &&
		    !strcmp(p->curves[i].policy, name))
			return &p->curves[i];
	return NULL;
}

/* Reads the whole file into a NUL-terminated buffer. */
static int read_all(const char *path, char **out, mu_diag_t *diag)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return mu__diag(diag, MU_EIO, path, 0, 0, "cannot open");
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	while (buf) {
		n += fread(buf + n, 1, cap - n - 1, f);
		if (n < cap - 1 || (long)cap > PAPER_MAX_BYTES)
			break;
		char *nb = realloc(buf, cap * 2);
		if (!nb) {
			free(buf);
			buf = NULL;
		} else {
			buf = nb;
			cap *= 2;
		}
	}
	bool bad = !buf || ferror(f) || (long)cap > PAPER_MAX_BYTES;
	fclose(f);
	if (bad) {
		free(buf);
		return mu__diag(diag, buf ? MU_EIO : MU_ENOMEM, path, 0, 0,
				"cannot read (or larger than %ld MiB)",
				PAPER_MAX_BYTES >> 20);
	}
	buf[n] = '\0';
	*out = buf;
	return MU_OK;
}

/* Splits line (modified in place) at commas into f; returns the count or
 * -1 for too many fields or a quote. */
static int split(char *line, char **f)
{
	int n = 0;
	for (char *p = line;; p++) {
		if (n == PAPER_MAX_COLS || *p == '"')
			return -1;
		f[n++] = p;
		p += strcspn(p, ",\"");
		if (*p == '"')
			return -1;
		if (!*p)
			return n;
		*p = '\0';
	}
}

/* The header's layout: the workload and policy columns, and the first of
 * npoints consecutive columns named 0, 1, ... */
typedef struct paper_cols {
	int workload, policy, x0, npoints;
} paper_cols_t;

static int header_cols(char **f, int n, paper_cols_t *c)
{
	c->workload = c->policy = c->x0 = -1;
	c->npoints = 0;
	for (int i = 0; i < n; i++) {
		if (!strcmp(f[i], "workload"))
			c->workload = i;
		else if (!strcmp(f[i], "sc_policy"))
			c->policy = i;
		else if (!strcmp(f[i], "0") && c->x0 < 0)
			c->x0 = i;
	}
	if (c->workload < 0 || c->policy < 0 || c->x0 < 0)
		return MU_EPARSE;
	char want[16];
	for (int i = c->x0; i < n; i++) {
		snprintf(want, sizeof want, "%d", i - c->x0);
		if (strcmp(f[i], want))
			break;
		c->npoints++;
	}
	return MU_OK;
}

/* Sums and counts of one (workload, policy) while reading. */
typedef struct paper_acc {
	double *sum;
	int32_t *cnt;
} paper_acc_t;

/* The curve (and accumulator) of (w, pol), created when new. */
static int curve_get(mu_eval_paper_t *p, paper_acc_t **acc, size_t *cap,
		     const char *w, const char *pol, int32_t npoints,
		     size_t *idx)
{
	for (size_t i = 0; i < p->ncurves; i++)
		if (!strcmp(p->curves[i].workload, w) &&
		    !strcmp(p->curves[i].policy, pol)) {
			*idx = i;
			return MU_OK;
		}
	if (p->ncurves == *cap) {
		size_t nc = *cap ? *cap * 2 : 16;
		mu_eval_paper_curve_t *v = realloc(p->curves, nc * sizeof *v);
		if (!v)
			return MU_ENOMEM;
		p->curves = v;
		paper_acc_t *a = realloc(*acc, nc * sizeof *a);
		if (!a)
			return MU_ENOMEM;
		*acc = a;
		*cap = nc;
	}
	mu_eval_paper_curve_t *c = &p->curves[p->ncurves];
	paper_acc_t *a = &(*acc)[p->ncurves];
	memset(c, 0, sizeof *c);
	memset(a, 0, sizeof *a);
	p->ncurves++;
	c->workload = malloc(strlen(w) + 1);
	c->policy = malloc(strlen(pol) + 1);
	c->mean = calloc((size_t)npoints, sizeof *c->mean);
	a->sum = calloc((size_t)npoints, sizeof *a->sum);
	a->cnt = calloc((size_t)npoints, sizeof *a->cnt);
	if (!c->workload || !c->policy || !c->mean || !a->sum || !a->cnt)
		return MU_ENOMEM;
	strcpy(c->workload, w);
	strcpy(c->policy, pol);
	c->npoints = npoints;
	*idx = p->ncurves - 1;
	return MU_OK;
}

/* Adds one data row. */
static int add_row(mu_eval_paper_t *p, paper_acc_t **acc, size_t *cap,
		   char **f, int n, const paper_cols_t *c)
{
	size_t i;
	int rc = curve_get(p, acc, cap, f[c->workload], f[c->policy],
			   c->npoints, &i);
	if (rc)
		return rc;
	p->curves[i].seeds++;
	for (int x = 0; x < c->npoints && c->x0 + x < n; x++) {
		const char *v = f[c->x0 + x];
		double d;
		if (!*v)
			continue;
		if (mu__parse_num(v, -1e9, 1e9, &d) != MU_OK)
			return MU_EPARSE;
		(*acc)[i].sum[x] += d;
		(*acc)[i].cnt[x]++;
	}
	return MU_OK;
}

/* Turns sums into means (NAN where no row had a value) and frees the
 * accumulators. */
static void finish(mu_eval_paper_t *p, paper_acc_t *acc)
{
	for (size_t i = 0; i < p->ncurves; i++) {
		for (int32_t x = 0; acc[i].sum && acc[i].cnt && p->curves[i].mean &&
				    x < p->curves[i].npoints; x++)
			p->curves[i].mean[x] = acc[i].cnt[x] ?
				acc[i].sum[x] / acc[i].cnt[x] : NAN;
		free(acc[i].sum);
		free(acc[i].cnt);
	}
	free(acc);
}

int mu_eval_paper_load(const char *path, mu_eval_paper_t *p, mu_diag_t *diag)
{
	memset(p, 0, sizeof *p);
	char *buf = NULL, **f = malloc(PAPER_MAX_COLS * sizeof *f);
	if (!f)
		return mu__diag(diag, MU_ENOMEM, path, 0, 0, "out of memory");
	int rc = read_all(path, &buf, diag);
	if (rc) {
		free(f);
		return rc;
	}
	paper_cols_t cols = {0};
	paper_acc_t *acc = NULL;
	size_t cap = 0;
	long line = 0;
	char *save = buf;
	for (char *l = buf; rc == MU_OK && l && *l; l = save) {
		save = strchr(l, '\n');
		if (save)
			*save++ = '\0';
		line++;
		l[strcspn(l, "\r")] = '\0';
		if (!*l)
			continue;
		int n = split(l, f);
		if (n < 0)
			rc = mu__diag(diag, MU_EPARSE, path, line, 0,
				      "more than %d fields, or a quote", PAPER_MAX_COLS);
		else if (line == 1 && header_cols(f, n, &cols) != MU_OK)
			rc = mu__diag(diag, MU_EPARSE, path, line, 0,
				      "expected a header with workload, sc_policy "
				      "and columns 0, 1, 2...");
		else if (line > 1 && (n <= cols.policy || n <= cols.workload))
			rc = mu__diag(diag, MU_EPARSE, path, line, 0,
				      "too few fields");
		else if (line > 1 && (rc = add_row(p, &acc, &cap, f, n, &cols)))
			rc = mu__diag(diag, rc, path, line, 0, "%s",
				      rc == MU_EPARSE ? "a value is not a number" :
				      mu_strerror(rc));
	}
	finish(p, acc);
	free(buf);
	free(f);
	if (rc == MU_OK && line == 0)
		rc = mu__diag(diag, MU_EPARSE, path, 0, 0, "empty file");
	return rc;
}

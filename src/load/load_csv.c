/*
 * load_csv.c - mu_load_csv(): muster's compact trace, the openb node and pod
 * lists and the Philly trace, told apart by their header (docs/formats.md).
 *
 * Every row is read once through the strict reader of csv.c and every field
 * is checked against a range; errors name the file, the row's line, the
 * column and what was expected.  Specs go into the caller's mu_specs_t (its
 * arena owns every string); on error the set is cut back to what it held
 * before the call.  Queues that a trace names implicitly ("default" for
 * openb, "vc-<cluster>" for Philly) are created when missing and marked
 * auto_created, so that a file loaded later may define them (load.c merges).
 * Work is O(rows) (Philly: O(rows log rows) for the sort by submit time).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "muster/csv.h"
#include "load/load_util.h"

const char mu__csv_headers[] =
	"a muster trace (columns name, queue, submit_s, pods, and optionally "
	"duration_s, min_member, cpu_milli, memory_mib, gpu, gpu_milli, "
	"priority, type, preemptible, gpu_models, in any order); "
	"\"sn,cpu_milli,memory_mib,gpu,model\" (openb nodes); "
	"\"name,cpu_milli,memory_mib,num_gpu,gpu_milli\" optionally followed by "
	"\",gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\" "
	"(openb pods); \"timestamp,duration,num_gpus,gpu_time,cluster\" (Philly)";

#define LC_MAX_SECS (100.0 * 365 * 86400) /* times: at most 100 years */
#define LC_MAX_MIB ((int64_t)1 << 34)      /* memory: 16 PiB in MiB */
#define LC_MAX_CPU 1000000000              /* millicores */
#define LC_MAX_PODS 1000000
#define LC_MAX_MODELS 64                   /* GPU models in one field */
#define LC_NODE_PODS 1024                  /* pods per openb node */

typedef struct lc {
	mu__csv_t csv;
	mu_specs_t *s;
	mu_diag_t *diag;
	mu_load_opts_t opts;
	mu__namemap_t queues; /* every queue name in s, once need_queue() ran */
	bool queues_indexed;
	const char *main;     /* "main" and "rest" in s's arena, shared by */
	const char *rest;     /* the podsets of every job */
} lc_t;

static int row_err(lc_t *c, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Fills the diag with "FILE:LINE: message" for the current row. */
static int row_err(lc_t *c, int err, const char *fmt, ...)
{
	char m[900];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m, sizeof m, fmt, ap);
	va_end(ap);
	mu__diag(c->diag, err, c->csv.file, c->csv.row_line, 0, "%s", m);
	return err;
}

static int oom(lc_t *c)
{
	return row_err(c, MU_ENOMEM, "out of memory");
}

static int get_int(lc_t *c, const char *col, const char *v, int64_t min,
		   int64_t max, int64_t *out)
{
	int rc = mu__parse_int(v, min, max, out);
	if (rc == MU_OK)
		return MU_OK;
	char q[80];
	return row_err(c, rc, "column \"%s\": expected an integer from %lld to "
		       "%lld, got %s", col, (long long)min, (long long)max,
		       mu__quote(v, q, sizeof q));
}

/* A number of seconds (0 to 100 years) as milliseconds. */
static int get_secs(lc_t *c, const char *col, const char *v, mu_time_t *ms)
{
	double x;
	int rc = mu__parse_num(v, 0, LC_MAX_SECS, &x);
	if (rc != MU_OK) {
		char q[80];
		return row_err(c, rc, "column \"%s\": expected a number of "
			       "seconds from 0 to %.0f, got %s", col,
			       LC_MAX_SECS, mu__quote(v, q, sizeof q));
	}
	*ms = (mu_time_t)llround(x * 1000.0);
	return MU_OK;
}

/* A valid name, copied into the arena. */
static int get_name(lc_t *c, const char *col, const char *v, const char **out)
{
	if (!mu__valid_name(v)) {
		char q[80];
		row_err(c, MU_EPARSE, "column \"%s\": expected a name of 1 to 253 "
			"characters from A-Z a-z 0-9 . _ - starting with a letter "
			"or digit, got %s", col, mu__quote(v, q, sizeof q));
		return MU_EPARSE;
	}
	char *copy = mu_arena_strdup(&c->s->arena, v);
	if (!copy) {
		oom(c);
		return MU_ENOMEM;
	}
	*out = copy;
	return MU_OK;
}

/* Splits v (a field in the reader's scratch, modified in place) on '|' into
 * ps->gpu_models, dropping repeats.  At most LC_MAX_MODELS models, so the
 * repeat check is bounded. */
static int get_models(lc_t *c, const char *col, char *v, mu_podset_spec_t *ps)
{
	if (!*v)
		return MU_OK;
	size_t n = 1;
	for (const char *p = v; *p; p++)
		n += *p == '|';
	if (n > LC_MAX_MODELS)
		return row_err(c, MU_ELIMIT, "column \"%s\": more than %d GPU "
			       "models", col, LC_MAX_MODELS);
	const char **m = mu_arena_alloc(&c->s->arena, n * sizeof *m);
	if (!m)
		return oom(c);
	size_t k = 0;
	for (char *p = v; p; ) {
		char *bar = strchr(p, '|');
		if (bar)
			*bar = '\0';
		const char *name = NULL;
		int rc = get_name(c, col, p, &name);
		if (rc != MU_OK)
			return rc;
		bool dup = false;
		for (size_t i = 0; i < k && !dup; i++)
			dup = strcmp(m[i], name) == 0;
		if (!dup)
			m[k++] = name;
		p = bar ? bar + 1 : NULL;
	}
	ps->gpu_models = m;
	ps->ngpu_models = k;
	return MU_OK;
}

/* Sets *out to the name of queue `name` in c->s, creating the queue (with
 * defaults, marked auto_created) when none of that name is loaded.  The
 * first call indexes the queues loaded so far, O(queues); later calls are
 * O(1).  The name returned lives in the specs' arena. */
static int need_queue(lc_t *c, const char *name, const char **out)
{
	mu_specs_t *s = c->s;
	if (!c->queues_indexed) {
		for (size_t i = 0; i < s->nqueues; i++)
			if (s->queues[i].name &&
			    mu__namemap_put(&c->queues, s->queues[i].name, i,
					    NULL) == MU_ENOMEM)
				return oom(c);
		c->queues_indexed = true;
	}
	size_t i;
	if (mu__namemap_get(&c->queues, name, &i) == MU_OK) {
		*out = s->queues[i].name;
		return MU_OK;
	}
	char *copy = mu_arena_strdup(&s->arena, name);
	mu_queue_spec_t *q = copy ? mu_specs_add_queue(s) : NULL;
	if (!q)
		return oom(c);
	q->name = copy;
	q->auto_created = true;
	if (mu__namemap_put(&c->queues, copy, s->nqueues - 1, NULL) == MU_ENOMEM)
		return oom(c);
	*out = copy;
	return MU_OK;
}

/* Appends a job with one podset `name` (copied from *job and *ps). */
static int add_job(lc_t *c, const mu_job_spec_t *job, const mu_podset_spec_t *ps,
		   size_t nps)
{
	mu_podset_spec_t *p = mu_arena_alloc(&c->s->arena, nps * sizeof *p);
	mu_job_spec_t *j = p ? mu_specs_add_job(c->s) : NULL;
	if (!j)
		return oom(c);
	memcpy(p, ps, nps * sizeof *p);
	*j = *job;
	j->podsets = p;
	j->npodsets = nps;
	return MU_OK;
}

/* --- muster compact trace ------------------------------------------------ */

enum {
	C_NAME, C_QUEUE, C_SUBMIT, C_PODS, /* required */
	C_DURATION, C_MIN_MEMBER, C_CPU, C_MEM, C_GPU, C_GPU_MILLI, C_PRIORITY,
	C_TYPE, C_PREEMPTIBLE, C_GPU_MODELS, C_NCOLS,
	C_NREQUIRED = C_DURATION,
};

static const char *const compact_cols[C_NCOLS] = {
	"name", "queue", "submit_s", "pods", "duration_s", "min_member",
	"cpu_milli", "memory_mib", "gpu", "gpu_milli", "priority", "type",
	"preemptible", "gpu_models",
};

/* Maps the header's fields to columns: pos[col] = field index or -1. */
static int compact_header(lc_t *c, int pos[C_NCOLS])
{
	char q[80];
	for (int k = 0; k < C_NCOLS; k++)
		pos[k] = -1;
	for (size_t i = 0; i < c->csv.nf; i++) {
		const char *h = c->csv.f[i];
		int k = 0;
		while (k < C_NCOLS && strcmp(compact_cols[k], h) != 0)
			k++;
		if (k == C_NCOLS)
			return row_err(c, MU_EPARSE, "unknown column %s in a muster "
				       "trace; columns are name, queue, submit_s, "
				       "pods, duration_s, min_member, cpu_milli, "
				       "memory_mib, gpu, gpu_milli, priority, type, "
				       "preemptible, gpu_models",
				       mu__quote(h, q, sizeof q));
		if (pos[k] >= 0)
			return row_err(c, MU_EPARSE, "column \"%s\" appears twice",
				       compact_cols[k]);
		pos[k] = (int)i;
	}
	for (int k = 0; k < C_NREQUIRED; k++)
		if (pos[k] < 0)
			return row_err(c, MU_EPARSE, "missing column \"%s\" (a muster "
				       "trace needs name, queue, submit_s and pods)",
				       compact_cols[k]);
	return MU_OK;
}

static int parse_type(lc_t *c, const char *v, mu_job_type_t *t)
{
	for (int k = MU_JOB_TRAIN; k <= MU_JOB_BATCH; k++) {
		if (strcmp(v, mu_job_type_name((mu_job_type_t)k)) == 0) {
			*t = (mu_job_type_t)k;
			return MU_OK;
		}
	}
	char q[80];
	return row_err(c, MU_EPARSE, "column \"type\": expected train, inference, "
		       "interactive or batch, got %s", mu__quote(v, q, sizeof q));
}

/* The GPU columns and the rest of the optional ones that set ps. */
static int compact_pod(lc_t *c, char *v[C_NCOLS], mu_podset_spec_t *ps)
{
	int64_t cpu = 0, mib = 0, gpu = 0, milli = 0;
	int rc = MU_OK;
	if (v[C_CPU])
		rc = get_int(c, "cpu_milli", v[C_CPU], 0, LC_MAX_CPU, &cpu);
	if (rc == MU_OK && v[C_MEM])
		rc = get_int(c, "memory_mib", v[C_MEM], 0, LC_MAX_MIB, &mib);
	if (rc == MU_OK && v[C_GPU])
		rc = get_int(c, "gpu", v[C_GPU], 0, MU_MAX_GPUS, &gpu);
	if (rc == MU_OK && v[C_GPU_MILLI])
		rc = get_int(c, "gpu_milli", v[C_GPU_MILLI], 0, 999, &milli);
	if (rc == MU_OK && v[C_GPU_MODELS])
		rc = get_models(c, "gpu_models", v[C_GPU_MODELS], ps);
	if (rc != MU_OK)
		return rc;
	if (gpu > 0 && milli > 0)
		return row_err(c, MU_EINVAL, "column \"gpu_milli\": a share of one "
			       "GPU needs gpu = 0, got gpu = %lld and gpu_milli = "
			       "%lld", (long long)gpu, (long long)milli);
	ps->req.v[MU_RES_CPU] = cpu;
	ps->req.v[MU_RES_MEM] = mib << 20;
	ps->req.v[MU_RES_GPU] = gpu;
	ps->req.v[MU_RES_GPU_MILLI] = milli;
	ps->req.v[MU_RES_PODS] = 1;
	return MU_OK;
}

/* The job-level columns of one row of a muster trace. */
static int compact_job(lc_t *c, char *v[C_NCOLS], mu_job_spec_t *j,
		       int64_t *pods)
{
	int64_t mm = 0, prio = 0;
	int rc = get_name(c, "name", v[C_NAME], &j->name);
	if (rc == MU_OK)
		rc = get_name(c, "queue", v[C_QUEUE], &j->queue);
	if (rc == MU_OK)
		rc = get_secs(c, "submit_s", v[C_SUBMIT], &j->submit);
	if (rc == MU_OK)
		rc = get_int(c, "pods", v[C_PODS], 1, LC_MAX_PODS, pods);
	if (rc == MU_OK && v[C_DURATION])
		rc = get_secs(c, "duration_s", v[C_DURATION], &j->duration);
	if (rc == MU_OK && v[C_MIN_MEMBER])
		rc = get_int(c, "min_member", v[C_MIN_MEMBER], 0, *pods, &mm);
	if (rc == MU_OK && v[C_PRIORITY])
		rc = get_int(c, "priority", v[C_PRIORITY], INT32_MIN, INT32_MAX,
			     &prio);
	j->type = MU_JOB_TRAIN;
	if (rc == MU_OK && v[C_TYPE])
		rc = parse_type(c, v[C_TYPE], &j->type);
	if (rc != MU_OK)
		return rc;
	j->min_member = (int32_t)mm;
	j->priority = v[C_PRIORITY] ? (int32_t)prio : mu__type_priority(j->type);
	j->preemptible = j->type == MU_JOB_TRAIN || j->type == MU_JOB_BATCH;
	if (v[C_PREEMPTIBLE] && mu__parse_bool(v[C_PREEMPTIBLE],
					       &j->preemptible) != MU_OK) {
		char q[80];
		return row_err(c, MU_EPARSE, "column \"preemptible\": expected "
			       "true or false, got %s",
			       mu__quote(v[C_PREEMPTIBLE], q, sizeof q));
	}
	return MU_OK;
}

/* Rows of a muster trace: one job with one podset "main" each.  An empty
 * field in an optional column takes the column's default. */
static int load_compact(lc_t *c)
{
	int pos[C_NCOLS];
	int rc = compact_header(c, pos);
	while (rc == MU_OK && (rc = mu__csv_next(&c->csv, c->diag)) == 1) {
		char *v[C_NCOLS];
		for (int k = 0; k < C_NCOLS; k++) {
			v[k] = pos[k] >= 0 ? c->csv.f[pos[k]] : NULL;
			if (k >= C_NREQUIRED && v[k] && !*v[k])
				v[k] = NULL;
		}
		mu_job_spec_t j = {0};
		mu_podset_spec_t ps = {0};
		int64_t pods = 0;
		rc = compact_job(c, v, &j, &pods);
		if (rc == MU_OK)
			rc = compact_pod(c, v, &ps);
		if (rc != MU_OK)
			break;
		ps.name = c->main;
		ps.replicas = (int32_t)pods;
		rc = add_job(c, &j, &ps, 1);
	}
	return rc;
}

/* --- openb node and pod lists -------------------------------------------- */

/* The memory of one GPU of an openb model, in MiB as the label
 * nvidia.com/gpu.memory carries it, or NULL when unknown.  The figures are
 * those of the FGD paper's simulator (hkust-adsl/kubernetes-scheduler-
 * simulator, its MapGpuTypeMemoryMiB table); G2 and G3 are anonymized in
 * the trace and have no size there, so they get no label. */
static const char *openb_gpu_mib(const char *model)
{
	static const char *const map[][2] = {
		{"T4", "15109"}, {"V100M16", "16160"}, {"P100", "16280"},
		{"A10", "22731"}, {"V100M32", "32510"},
	};
	for (size_t i = 0; model && i < sizeof map / sizeof *map; i++)
		if (!strcmp(map[i][0], model))
			return map[i][1];
	return NULL;
}

/* One node per row: sn,cpu_milli,memory_mib,gpu,model.  A node with GPUs
 * is labelled with its model (nvidia.com/gpu.product) and, when known, its
 * GPU memory (nvidia.com/gpu.memory, openb_gpu_mib()). */
static int load_openb_nodes(lc_t *c)
{
	const char *memkey = mu_arena_strdup(&c->s->arena, "nvidia.com/gpu.memory");
	const char *key = mu_arena_strdup(&c->s->arena, "nvidia.com/gpu.product");
	if (!key || !memkey)
		return oom(c);
	int rc;
	while ((rc = mu__csv_next(&c->csv, c->diag)) == 1) {
		char **f = c->csv.f;
		mu_node_spec_t n = {0};
		int64_t cpu, mib, gpu;
		if ((rc = get_name(c, "sn", f[0], &n.name)) != MU_OK ||
		    (rc = get_int(c, "cpu_milli", f[1], 0, LC_MAX_CPU, &cpu)) ||
		    (rc = get_int(c, "memory_mib", f[2], 0, LC_MAX_MIB, &mib)) ||
		    (rc = get_int(c, "gpu", f[3], 0, MU_MAX_GPUS, &gpu)))
			return rc;
		if (*f[4] && (rc = get_name(c, "model", f[4], &n.gpu_model)))
			return rc;
		if (gpu == 0)
			n.gpu_model = NULL;
		n.alloc.v[MU_RES_CPU] = cpu;
		n.alloc.v[MU_RES_MEM] = mib << 20;
		n.alloc.v[MU_RES_GPU] = gpu;
		n.alloc.v[MU_RES_PODS] = LC_NODE_PODS;
		if (n.gpu_model) {
			const char *gm = openb_gpu_mib(n.gpu_model);
			n.labels = mu_arena_alloc(&c->s->arena, 2 * sizeof *n.labels);
			if (!n.labels)
				return oom(c);
			n.labels[0].key = key;
			n.labels[0].value = n.gpu_model;
			n.labels[1].key = memkey;
			n.labels[1].value = gm;
			n.nlabels = gm ? 2 : 1;
		}
		mu_node_spec_t *slot = mu_specs_add_node(c->s);
		if (!slot)
			return oom(c);
		*slot = n;
	}
	return rc;
}

/* The times of an 11-column openb pod row: submit = creation_time, duration
 * = deletion_time - creation_time when both are there and it is positive. */
static int openb_times(lc_t *c, char **f, mu_job_spec_t *j)
{
	mu_time_t t[3] = {0, 0, 0};
	static const char *const names[3] = {
		"creation_time", "deletion_time", "scheduled_time",
	};
	for (int i = 0; i < 3; i++) {
		int rc = *f[8 + i] ? get_secs(c, names[i], f[8 + i], &t[i]) : MU_OK;
		if (rc != MU_OK)
			return rc;
	}
	j->submit = t[0];
	if (*f[8] && *f[9] && t[1] > t[0])
		j->duration = t[1] - t[0];
	return MU_OK;
}

/* The request of an openb pod: name,cpu_milli,memory_mib,num_gpu,gpu_milli.
 * num_gpu 1 with gpu_milli below 1000 is a share of one GPU. */
static int openb_request(lc_t *c, char **f, mu_res_t *req)
{
	int64_t cpu, mib, gpu, milli;
	int rc;
	if ((rc = get_int(c, "cpu_milli", f[1], 0, LC_MAX_CPU, &cpu)) ||
	    (rc = get_int(c, "memory_mib", f[2], 0, LC_MAX_MIB, &mib)) ||
	    (rc = get_int(c, "num_gpu", f[3], 0, MU_MAX_GPUS, &gpu)) ||
	    (rc = get_int(c, "gpu_milli", f[4], 0, 1000, &milli)))
		return rc;
	if (gpu == 1 && milli == 0)
		return row_err(c, MU_EINVAL, "column \"gpu_milli\": expected 1 to "
			       "1000 (the share of the GPU) when num_gpu is 1, "
			       "got 0");
	req->v[MU_RES_CPU] = cpu;
	req->v[MU_RES_MEM] = mib << 20;
	req->v[MU_RES_PODS] = 1;
	if (gpu == 1 && milli < 1000)
		req->v[MU_RES_GPU_MILLI] = milli;
	else
		req->v[MU_RES_GPU] = gpu;
	return MU_OK;
}

/* One one-pod job per row, in the queue "default". */
static int load_openb_pods(lc_t *c)
{
	const char *queue;
	int rc = need_queue(c, "default", &queue);
	while (rc == MU_OK && (rc = mu__csv_next(&c->csv, c->diag)) == 1) {
		char **f = c->csv.f;
		mu_job_spec_t j = {.queue = queue, .type = MU_JOB_BATCH,
				   .preemptible = true};
		mu_podset_spec_t ps = {.name = c->main, .replicas = 1};
		if ((rc = get_name(c, "name", f[0], &j.name)) != MU_OK ||
		    (rc = openb_request(c, f, &ps.req)) != MU_OK)
			break;
		if (c->csv.ncols == 11 &&
		    ((rc = get_models(c, "gpu_spec", f[5], &ps)) != MU_OK ||
		     (rc = openb_times(c, f, &j)) != MU_OK))
			break;
		rc = add_job(c, &j, &ps, 1);
	}
	return rc;
}

/* --- Philly trace --------------------------------------------------------- */

typedef struct philly_row {
	int64_t ts;        /* UTC seconds */
	int64_t rel;       /* seconds after the earliest row */
	mu_time_t dur;     /* ms */
	int64_t gpus;      /* > 0 */
	int64_t row;       /* data row number, from 1 */
	long line;         /* for messages */
	const char *queue; /* "vc-<cluster>" in the specs' arena */
} philly_row_t;

typedef struct philly {
	philly_row_t *rows;
	size_t n, cap;
	int64_t min_ts;    /* over every row, also those with 0 GPUs */
	mu__namemap_t vcs; /* queue name -> unused, interns the names */
} philly_t;

/* Interns "vc-<cluster>" (arena) so that rows share one string per VC. */
static int philly_vc(lc_t *c, philly_t *ph, const char *cluster,
		     const char **out)
{
	char name[MU__CSV_MAX_FIELD + 8];
	snprintf(name, sizeof name, "vc-%s", cluster);
	if (!*cluster || !mu__valid_name(name)) {
		char q[80];
		return row_err(c, MU_EPARSE, "column \"cluster\": expected a "
			       "virtual cluster id of 1 to 250 characters from "
			       "A-Z a-z 0-9 . _ -, got %s",
			       mu__quote(cluster, q, sizeof q));
	}
	if ((*out = mu__namemap_key(&ph->vcs, name)) != NULL)
		return MU_OK;
	char *copy = mu_arena_strdup(&c->s->arena, name);
	if (!copy || mu__namemap_put(&ph->vcs, copy, 0, NULL) == MU_ENOMEM)
		return oom(c);
	*out = copy;
	return MU_OK;
}

/* Parses one row into r; returns 1 to keep it, 0 for a 0-GPU row. */
static int philly_row(lc_t *c, philly_t *ph, philly_row_t *r)
{
	char **f = c->csv.f;
	double gpu_time;
	char q[80];
	int rc;
	if (mu__parse_utc(f[0], &r->ts) != MU_OK)
		return row_err(c, MU_EPARSE, "column \"timestamp\": expected "
			       "\"YYYY-MM-DD HH:MM:SS\", got %s",
			       mu__quote(f[0], q, sizeof q));
	if ((rc = get_secs(c, "duration", f[1], &r->dur)) != MU_OK ||
	    (rc = get_int(c, "num_gpus", f[2], 0, LC_MAX_PODS, &r->gpus)))
		return rc;
	if (mu__parse_num(f[3], 0, 1e18, &gpu_time) != MU_OK)
		return row_err(c, MU_EPARSE, "column \"gpu_time\": expected a "
			       "number from 0 to 1e18, got %s",
			       mu__quote(f[3], q, sizeof q));
	if ((rc = philly_vc(c, ph, f[4], &r->queue)) != MU_OK)
		return rc;
	if (r->row == 1 || r->ts < ph->min_ts)
		ph->min_ts = r->ts;
	return r->gpus > 0;
}

/* Pass 1: every row into ph->rows (0-GPU rows only count for min_ts). */
static int philly_read(lc_t *c, philly_t *ph)
{
	int rc;
	int64_t row = 0;
	while ((rc = mu__csv_next(&c->csv, c->diag)) == 1) {
		philly_row_t r = {.row = ++row, .line = c->csv.row_line};
		rc = philly_row(c, ph, &r);
		if (rc < 0)
			return rc;
		if (rc == 0)
			continue;
		if (ph->n == ph->cap) {
			size_t ncap = ph->cap ? ph->cap * 2 : 1024;
			philly_row_t *nr = realloc(ph->rows, ncap * sizeof *nr);
			if (!nr)
				return oom(c);
			ph->rows = nr;
			ph->cap = ncap;
		}
		ph->rows[ph->n++] = r;
	}
	return rc;
}

static int philly_cmp(const void *a, const void *b)
{
	const philly_row_t *x = a, *y = b;
	if (x->rel != y->rel)
		return x->rel < y->rel ? -1 : 1;
	return x->row < y->row ? -1 : x->row > y->row;
}

/* One job from a kept row: a gang of whole nodes of gpus_per_node GPUs, and
 * one more pod for the remainder, so that the job asks for exactly its
 * num_gpus.  4 CPUs and 24 GiB per GPU. */
static int philly_job(lc_t *c, const philly_row_t *r)
{
	int64_t gpn = c->opts.gpus_per_node;
	int64_t full = r->gpus / gpn, rest = r->gpus % gpn;
	mu_podset_spec_t ps[2] = {{0}};
	size_t nps = 0;
	char name[40];
	for (int k = 0; k < 2; k++) {
		int64_t g = k == 0 ? gpn : rest;
		int64_t pods = k == 0 ? full : (rest > 0);
		if (pods == 0)
			continue;
		ps[nps].name = nps == 0 ? c->main : c->rest;
		ps[nps].replicas = (int32_t)pods;
		ps[nps].req.v[MU_RES_CPU] = 4000 * g;
		ps[nps].req.v[MU_RES_MEM] = g * ((int64_t)24 << 30);
		ps[nps].req.v[MU_RES_GPU] = g;
		ps[nps].req.v[MU_RES_PODS] = 1;
		nps++;
	}
	snprintf(name, sizeof name, "philly-%lld", (long long)r->row);
	mu_job_spec_t j = {.type = MU_JOB_TRAIN, .preemptible = true};
	j.submit = (r->rel - c->opts.from_s) * 1000;
	j.duration = r->dur;
	j.name = mu_arena_strdup(&c->s->arena, name);
	if (!j.name)
		return oom(c);
	int rc = need_queue(c, r->queue, &j.queue);
	return rc == MU_OK ? add_job(c, &j, ps, nps) : rc;
}

/* Pass 2: times relative to the earliest row, the [from_s, to_s) window,
 * sort by submit (ties in file order), the first max_jobs, then the jobs. */
static int philly_emit(lc_t *c, philly_t *ph)
{
	const mu_load_opts_t *o = &c->opts;
	size_t kept = 0;
	for (size_t i = 0; i < ph->n; i++) {
		philly_row_t r = ph->rows[i];
		r.rel = r.ts - ph->min_ts;
		if (r.rel > LC_MAX_SECS) {
			c->csv.row_line = r.line;
			return row_err(c, MU_ERANGE, "column \"timestamp\": more "
				       "than 100 years after the earliest row");
		}
		if (r.rel >= o->from_s && (o->to_s <= 0 || r.rel < o->to_s))
			ph->rows[kept++] = r;
	}
	if (kept > 1)
		qsort(ph->rows, kept, sizeof *ph->rows, philly_cmp);
	if (o->max_jobs > 0 && (uint64_t)o->max_jobs < kept)
		kept = (size_t)o->max_jobs;
	for (size_t i = 0; i < kept; i++) {
		c->csv.row_line = 0;
		int rc = philly_job(c, &ph->rows[i]);
		if (rc != MU_OK)
			return rc;
	}
	return MU_OK;
}

static int load_philly(lc_t *c)
{
	const mu_load_opts_t *o = &c->opts;
	if (o->gpus_per_node < 1 || o->gpus_per_node > MU_MAX_GPUS ||
	    o->from_s < 0 || o->max_jobs < 0 || o->from_s > LC_MAX_SECS)
		return mu__diag(c->diag, MU_EINVAL, c->csv.file, 0, 0,
				"bad trace options: gpus_per_node must be 1 to "
				"%d (got %d), from_s and max_jobs must not be "
				"negative", MU_MAX_GPUS, (int)o->gpus_per_node);
	philly_t ph = {0};
	int rc = philly_read(c, &ph);
	if (rc == MU_OK)
		rc = philly_emit(c, &ph);
	free(ph.rows);
	mu__namemap_release(&ph.vcs);
	return rc;
}

/* --- the entry point ------------------------------------------------------ */

typedef enum lc_kind {
	LC_UNKNOWN, LC_COMPACT, LC_OPENB_NODES, LC_OPENB_PODS, LC_PHILLY,
} lc_kind_t;

/* Tells the format from the header row in c->csv. */
static lc_kind_t detect(const mu__csv_t *csv, char *joined, size_t len)
{
	static const char openb_pods[] = "name,cpu_milli,memory_mib,num_gpu,"
		"gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,"
		"scheduled_time";
	size_t o = 0;
	joined[0] = '\0';
	for (size_t i = 0; i < csv->nf && o + 1 < len; i++)
		o += (size_t)snprintf(joined + o, len - o, "%s%s", i ? "," : "",
				      csv->f[i]);
	if (strcmp(joined, "sn,cpu_milli,memory_mib,gpu,model") == 0)
		return LC_OPENB_NODES;
	if (strcmp(joined, openb_pods) == 0 ||
	    strcmp(joined, "name,cpu_milli,memory_mib,num_gpu,gpu_milli") == 0)
		return LC_OPENB_PODS;
	if (strcmp(joined, "timestamp,duration,num_gpus,gpu_time,cluster") == 0)
		return LC_PHILLY;
	for (size_t i = 0; i < csv->nf; i++)
		if (strcmp(csv->f[i], "queue") == 0 ||
		    strcmp(csv->f[i], "submit_s") == 0 ||
		    strcmp(csv->f[i], "pods") == 0)
			return LC_COMPACT;
	return LC_UNKNOWN;
}

/* Reads the header and runs the loader of its format. */
static int load_rows(lc_t *c)
{
	int rc = mu__csv_next(&c->csv, c->diag);
	if (rc < 0)
		return rc;
	if (rc == 0)
		return mu__diag(c->diag, MU_EPARSE, c->csv.file, 0, 0,
				"empty file: expected a CSV header line, one of: "
				"%s", mu__csv_headers);
	char joined[4 * MU__CSV_MAX_FIELD], q[120];
	switch (detect(&c->csv, joined, sizeof joined)) {
	case LC_COMPACT: return load_compact(c);
	case LC_OPENB_NODES: return load_openb_nodes(c);
	case LC_OPENB_PODS: return load_openb_pods(c);
	case LC_PHILLY: return load_philly(c);
	case LC_UNKNOWN: break;
	}
	return row_err(c, MU_EPARSE, "unknown CSV header %s; expected one of: %s",
		       mu__quote(joined, q, sizeof q), mu__csv_headers);
}

int mu_load_csv(const char *name, const char *buf, size_t len,
		const mu_load_opts_t *opts, mu_specs_t *into, mu_diag_t *diag)
{
	lc_t c = {.s = into, .diag = diag};
	if (opts)
		c.opts = *opts;
	else
		mu_load_opts_defaults(&c.opts);
	size_t nn = into->nnodes, nq = into->nqueues, nj = into->njobs;
	int rc = mu__csv_open(&c.csv, name, buf, len, diag);
	if (rc != MU_OK)
		return rc;
	c.main = mu_arena_strdup(&into->arena, "main");
	c.rest = mu_arena_strdup(&into->arena, "rest");
	rc = c.main && c.rest ? load_rows(&c) : oom(&c);
	if (rc > 0)
		rc = MU_OK;
	mu__namemap_release(&c.queues);
	mu__csv_release(&c.csv);
	if (rc != MU_OK) {
		into->nnodes = nn;
		into->nqueues = nq;
		into->njobs = nj;
	}
	return rc;
}

void mu_load_opts_defaults(mu_load_opts_t *o)
{
	memset(o, 0, sizeof *o);
	o->gpus_per_node = 8;
}

/*
 * api.c - the UI's JSON endpoints, answered from one published snapshot.
 *
 *   summary            counts for the header
 *   queues?res=&points= the queue tree, and each queue's usage of one
 *                      resource (gpu, cpu, mem) over the history ring, in
 *                      at most `points` means (360: 4 min at 1 a minute)
 *   jobs?queue=&state=&ns=&type=&q=&sort=&order=&offset=&limit=
 *                      one page of jobs (limit 1..500) and the facets
 *   job?key=           one job: pods with devices, events, preemptions
 *   nodes?rack=&offset=&limit=   one page of nodes
 *   node?name=         one node and its pods
 *   heatmap            every node's GPUs, one digit each, by rack
 *   cluster?points=    totals and utilisation/fragmentation history
 *   events?job=&limit= recent events, newest first
 *   fleet              clusters and placements (a dispatcher), or why not
 *
 * Arguments are checked strictly: an unknown value, a number out of range
 * or an unknown job answers 400 or 404 with a message naming the argument
 * and what was expected.  Work per request is bounded by the snapshot's
 * size (a sort of the jobs for /jobs, a scan of the pods for /node).
 */
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "web/web_int.h"

#define MAX_PAGE 500

void mu__api_error(mu_web_resp_t *r, int status, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	json_t *o = json_pack("{s:s}", "error", msg);
	r->status = status;
	r->ctype = "application/json";
	r->body = o ? json_dumps(o, JSON_COMPACT) : NULL;
	r->len = r->body ? strlen(r->body) : 0;
	r->is_static = false;
	json_decref(o);
}

/* Sends o (taking it). */
static void send_json(mu_web_resp_t *r, json_t *o)
{
	if (!o) {
		mu__api_error(r, 500, "out of memory");
		return;
	}
	r->status = 200;
	r->ctype = "application/json";
	r->body = json_dumps(o, JSON_COMPACT);
	r->len = r->body ? strlen(r->body) : 0;
	json_decref(o);
	if (!r->body)
		mu__api_error(r, 500, "out of memory");
}

/* An integer argument in [min, max], def when absent; false (and r set to
 * a 400) when it is not one. */
static bool int_arg(mu_web_arg_fn arg, void *ctx, const char *key, long def, long min, long max,
		    long *out, mu_web_resp_t *r)
{
	const char *v = arg ? arg(ctx, key) : NULL;
	if (!v) {
		*out = def;
		return true;
	}
	char *end;
	errno = 0;
	long x = strtol(v, &end, 10);
	if (errno || end == v || *end || x < min || x > max) {
		mu__api_error(r, 400, "%s: expected an integer from %ld to %ld, got \"%.40s\"", key, min,
			      max, v);
		return false;
	}
	*out = x;
	return true;
}

/* The index of an argument's value among names (n of them), def when
 * absent; -1 (r set) when it is none of them. */
static int enum_arg(mu_web_arg_fn arg, void *ctx, const char *key, const char *const *names, int n,
		    int def, mu_web_resp_t *r)
{
	const char *v = arg ? arg(ctx, key) : NULL;
	if (!v || !*v)
		return def;
	char list[256] = "";
	for (int i = 0; i < n; i++) {
		if (!strcmp(v, names[i]))
			return i;
		size_t at = strlen(list);
		snprintf(list + at, sizeof list - at, "%s%s", i ? ", " : "", names[i]);
	}
	mu__api_error(r, 400, "%s: expected one of %s, got \"%.40s\"", key, list, v);
	return -1;
}

static const char *const state_names[] = {"pending", "running", "finished"};
static const char *const res_names[] = {"gpu", "cpu", "mem"};

static json_t *res_array(const double *v)
{
	return json_pack("[f,f,f]", v[0], v[1], v[2]);
}

static json_t *job_json(const mu_web_job_t *j)
{
	json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:i,s:i,s:i,s:i,s:b,s:i,s:f,s:I,s:I,s:I}",
			      "key", j->key, "name", j->name, "ns", j->ns, "queue", j->queue, "type",
			      j->type, "kind", j->kind, "state", state_names[j->state % 3], "pods",
			      (int)j->pods, "bound", (int)j->bound, "minMember", (int)j->min_member,
			      "priority", (int)j->priority, "preemptible", j->preemptible,
			      "preemptions", (int)j->preemptions, "gpus", j->gpus, "submitted",
			      (json_int_t)j->submitted_ms, "started", (json_int_t)j->started_ms,
			      "expected", (json_int_t)j->expected_ms);
	if (o && j->expected_from)
		json_object_set_new(o, "expectedFrom", json_string(j->expected_from));
	if (o && j->why)
		json_object_set_new(o, "why", json_string(j->why));
	if (o && j->reason)
		json_object_set_new(o, "reason", json_string(j->reason));
	return o;
}

static json_t *pod_json(const mu_web_pod_t *p)
{
	json_t *g = json_array();
	for (int i = 0; i < 64; i++)
		if (p->gpus >> i & 1)
			json_array_append_new(g, json_integer(i));
	json_t *o = json_pack("{s:s,s:s,s:s,s:s?,s:s,s:o,s:i,s:i,s:i,s:s?}", "job", p->job_key, "name",
			      p->name, "ns", p->ns, "node", p->node, "phase", p->phase, "gpus", g,
			      "gpuMilli", (int)p->gpu_milli, "numa", (int)p->numa, "nic", (int)p->nic,
			      "cpus", p->cpus);
	return o;
}

static json_t *node_json(const mu_web_node_t *n)
{
	char cells[MU_WEB_MAX_GPUS + 1];
	for (int32_t i = 0; i < n->ngpu; i++)
		cells[i] = (char)('0' + (n->gpu[i] < 5 ? n->gpu[i] : 4));
	cells[n->ngpu] = '\0';
	return json_pack("{s:s,s:s?,s:s?,s:s?,s:b,s:s,s:f,s:f,s:f,s:f,s:i}", "name", n->name, "rack",
			 n->rack, "levels", n->levels, "gpuModel", n->gpu_model, "ready", n->ready,
			 "gpus", cells, "cpuAlloc", n->cpu_alloc, "cpuUsed", n->cpu_used, "memAlloc",
			 n->mem_alloc, "memUsed", n->mem_used, "pods", (int)n->pods);
}

static void ep_summary(mu_web_t *w, const mu_web_snap_t *s, mu_web_resp_t *r)
{
	json_t *o = json_pack("{s:s,s:I,s:I,s:i,s:i,s:i,s:i,s:i,s:b,s:i,s:[I,I,I,I,I]}", "title",
			      s->title ? s->title : "muster", "seq", (json_int_t)s->seq, "at",
			      (json_int_t)s->at_ms, "queues", (int)s->nq, "jobs", (int)s->nj,
			      "pending", (int)s->pending, "running", (int)s->running, "nodes",
			      (int)s->nn, "fleet", s->has_fleet, "histMs", w->o.hist_ms, "gpus",
			      (json_int_t)s->gpu_state[0], (json_int_t)s->gpu_state[1],
			      (json_int_t)s->gpu_state[2], (json_int_t)s->gpu_state[3],
			      (json_int_t)s->gpu_state[4]);
	send_json(r, o);
}

/* The history as at most `points` buckets of `*per` consecutive points
 * (the last bucket may be shorter), oldest first: the time of each
 * bucket's last point.  *first and *n give the points kept (under w->mu). */
static json_t *hist_times(mu_web_t *w, long points, uint64_t *first, uint64_t *n, uint64_t *per)
{
	uint64_t cap = (uint64_t)w->o.hist_points;
	*n = w->nhist < cap ? w->nhist : cap;
	*first = w->nhist - *n;
	*per = (*n + (uint64_t)points - 1) / (uint64_t)points;
	if (*per < 1)
		*per = 1;
	json_t *t = json_array();
	for (uint64_t i = 0; i < *n; i += *per) {
		uint64_t last = i + *per < *n ? i + *per - 1 : *n - 1;
		json_array_append_new(t, json_integer(w->hist[(*first + last) % cap].at_ms));
	}
	return t;
}

/* The mean of get(point) over each bucket of hist_times(). */
static json_t *hist_series(mu_web_t *w, uint64_t first, uint64_t n, uint64_t per,
			   double (*get)(const mu__whist_t *h, const void *ctx), const void *ctx)
{
	uint64_t cap = (uint64_t)w->o.hist_points;
	json_t *a = json_array();
	for (uint64_t i = 0; i < n; i += per) {
		double sum = 0;
		uint64_t k = 0;
		for (; k < per && i + k < n; k++)
			sum += get(&w->hist[(first + i + k) % cap], ctx);
		json_array_append_new(a, json_real(sum / (double)k));
	}
	return a;
}

typedef struct qget {
	int32_t id;
	int res;
} qget_t;

static double get_queue(const mu__whist_t *h, const void *ctx)
{
	const qget_t *q = ctx;
	for (int32_t k = 0; k < h->nq && q->id >= 0; k++)
		if (h->qid[k] == q->id)
			return h->qused[k][q->res];
	return 0;
}

static double get_total(const mu__whist_t *h, const void *ctx)
{
	(void)ctx;
	return h->gpu_total;
}

static double get_used(const mu__whist_t *h, const void *ctx)
{
	(void)ctx;
	return h->gpu_used;
}

static double get_frag(const mu__whist_t *h, const void *ctx)
{
	(void)ctx;
	return h->gpu_frag;
}

static double get_resv(const mu__whist_t *h, const void *ctx)
{
	(void)ctx;
	return h->gpu_reserved;
}

static void ep_queues(mu_web_t *w, const mu_web_snap_t *s, mu_web_arg_fn arg, void *ctx,
		      mu_web_resp_t *r)
{
	int res = enum_arg(arg, ctx, "res", res_names, 3, 0, r);
	long points;
	if (res < 0 || !int_arg(arg, ctx, "points", 360, 2, 100000, &points, r))
		return;
	json_t *qs = json_array();
	for (size_t i = 0; i < s->nq; i++) {
		const mu_web_queue_t *q = &s->q[i];
		json_array_append_new(qs, json_pack("{s:s,s:s?,s:i,s:o,s:o,s:o,s:o,s:i,s:i}", "name",
						    q->name, "parent", q->parent, "priority",
						    (int)q->priority, "deserved", res_array(q->deserved),
						    "limit", res_array(q->limit), "fair",
						    res_array(q->fair), "used", res_array(q->used),
						    "pending", (int)q->pending, "running",
						    (int)q->running));
	}
	json_t *pools = json_array();
	for (size_t i = 0; i < s->npo; i++) {
		const mu_web_pool_t *p = &s->po[i];
		json_t *o = json_pack("{s:s,s:s?,s:f,s:f,s:f,s:f}", "pool", p->pool, "queue",
				      p->queue, "used", p->used, "deserved", p->deserved,
				      "fair", p->fair, "limit", p->limit);
		if (!p->queue) {
			json_object_set_new(o, "nodes", json_integer(p->nodes));
			json_object_set_new(o, "gpus", json_real(p->gpus));
		}
		json_array_append_new(pools, o);
	}
	json_t *series = json_object();
	pthread_mutex_lock(&w->mu);
	uint64_t first, n, per;
	json_t *t = hist_times(w, points, &first, &n, &per);
	for (size_t i = 0; i < s->nq; i++) {
		qget_t g = {-1, res};
		for (int32_t k = 0; k < w->nqnames; k++)
			if (!strcmp(w->qnames[k], s->q[i].name))
				g.id = k;
		json_object_set_new(series, s->q[i].name, hist_series(w, first, n, per, get_queue, &g));
	}
	pthread_mutex_unlock(&w->mu);
	send_json(r, json_pack("{s:s,s:o,s:o,s:{s:o,s:o}}", "resource", res_names[res], "queues",
			       qs, "pools", pools, "history", "t", t, "series", series));
}

/* Sorting jobs without qsort_r: a key per job. */
typedef struct jkey {
	double num;
	const char *str;
	const mu_web_job_t *j;
} jkey_t;

static int cmp_jkey(const void *a, const void *b)
{
	const jkey_t *x = a, *y = b;
	if (x->num != y->num)
		return x->num < y->num ? -1 : 1;
	int c = strcmp(x->str, y->str);
	return c ? c : strcmp(x->j->key, y->j->key);
}

static const char *const sort_names[] = {"submitted", "name", "queue", "state", "gpus",
					 "pods", "priority", "expected", "ns"};

static jkey_t key_of(const mu_web_job_t *j, int sort)
{
	jkey_t k = {0, "", j};
	switch (sort) {
	case 0: k.num = (double)j->submitted_ms; break;
	case 1: k.str = j->name; break;
	case 2: k.str = j->queue; break;
	case 3: k.num = j->state; break;
	case 4: k.num = j->gpus; break;
	case 5: k.num = j->pods; break;
	case 6: k.num = j->priority; break;
	case 7: k.num = j->expected_ms ? (double)j->expected_ms : 9e18; break;
	default: k.str = j->ns; break;
	}
	return k;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The distinct values of one string field of the jobs (at most 500). */
static json_t *facet(const mu_web_snap_t *s, size_t off)
{
	json_t *a = json_array();
	const char **v = malloc((s->nj ? s->nj : 1) * sizeof *v);
	if (!v)
		return a;
	for (size_t i = 0; i < s->nj; i++)
		v[i] = *(const char *const *)((const char *)&s->j[i] + off);
	qsort(v, s->nj, sizeof *v, cmp_str);
	for (size_t i = 0; i < s->nj && json_array_size(a) < 500; i++)
		if (!i || strcmp(v[i], v[i - 1]))
			json_array_append_new(a, json_string(v[i]));
	free(v);
	return a;
}

static void ep_jobs(const mu_web_snap_t *s, mu_web_arg_fn arg, void *ctx, mu_web_resp_t *r)
{
	static const char *const orders[] = {"asc", "desc"};
	long off, lim;
	int state = enum_arg(arg, ctx, "state", state_names, 3, -2, r);
	if (state == -1)
		return;
	int sort = enum_arg(arg, ctx, "sort", sort_names, 9, 0, r);
	if (sort < 0)
		return;
	int order = enum_arg(arg, ctx, "order", orders, 2, sort == 0 ? 1 : 0, r);
	if (order < 0 || !int_arg(arg, ctx, "offset", 0, 0, 100000000, &off, r) ||
	    !int_arg(arg, ctx, "limit", 50, 1, MAX_PAGE, &lim, r))
		return;
	const char *queue = arg(ctx, "queue"), *ns = arg(ctx, "ns"), *type = arg(ctx, "type");
	const char *q = arg(ctx, "q");
	if ((queue && strlen(queue) > 253) || (ns && strlen(ns) > 253) || (type && strlen(type) > 64) ||
	    (q && strlen(q) > 253)) {
		mu__api_error(r, 400, "queue, ns, type, q: at most 253 characters");
		return;
	}
	jkey_t *k = malloc((s->nj ? s->nj : 1) * sizeof *k);
	if (!k) {
		mu__api_error(r, 500, "out of memory");
		return;
	}
	size_t n = 0;
	for (size_t i = 0; i < s->nj; i++) {
		const mu_web_job_t *j = &s->j[i];
		if ((state >= 0 && (int)j->state != state) || (queue && *queue && strcmp(j->queue, queue)) ||
		    (ns && *ns && strcmp(j->ns, ns)) || (type && *type && strcmp(j->type, type)) ||
		    (q && *q && !strstr(j->name, q)))
			continue;
		k[n++] = key_of(j, sort);
	}
	qsort(k, n, sizeof *k, cmp_jkey);
	json_t *items = json_array();
	for (long i = off; i < (long)n && i < off + lim; i++)
		json_array_append_new(items, job_json(k[order ? (long)n - 1 - i : i].j));
	free(k);
	json_t *facets = json_pack("{s:o,s:o,s:o}", "queues", facet(s, offsetof(mu_web_job_t, queue)),
				   "namespaces", facet(s, offsetof(mu_web_job_t, ns)), "types",
				   facet(s, offsetof(mu_web_job_t, type)));
	send_json(r, json_pack("{s:i,s:i,s:i,s:o,s:o}", "total", (int)n, "offset", (int)off, "limit",
			       (int)lim, "items", items, "facets", facets));
}

/* The events about job key (or every one when key is NULL), newest
 * first, at most lim; only kind when not NULL. */
static json_t *events(mu_web_t *w, const char *key, const char *kind, long lim)
{
	json_t *a = json_array();
	pthread_mutex_lock(&w->mu);
	uint64_t n = w->nev < MU__WEV_CAP ? w->nev : MU__WEV_CAP;
	for (uint64_t i = 0; i < n && (long)json_array_size(a) < lim; i++) {
		const mu__wevent_t *e = &w->ev[(w->nev - 1 - i) % MU__WEV_CAP];
		if ((key && strcmp(e->job_key, key)) || (kind && strcmp(e->kind, kind)))
			continue;
		json_array_append_new(a, json_pack("{s:I,s:s,s:s,s:s?}", "at", (json_int_t)e->at_ms,
						   "kind", e->kind, "job", e->job_key, "msg", e->msg));
	}
	pthread_mutex_unlock(&w->mu);
	return a;
}

static void ep_job(mu_web_t *w, const mu_web_snap_t *s, mu_web_arg_fn arg, void *ctx,
		   mu_web_resp_t *r)
{
	const char *key = arg(ctx, "key");
	if (!key || !*key || strlen(key) > 600) {
		mu__api_error(r, 400, "key: expected a job key, as /ui/api/jobs lists them");
		return;
	}
	const mu_web_job_t *j = mu__snap_job(s, key);
	if (!j) {
		mu__api_error(r, 404, "no job %.300s: not known to the scheduler (finished, or never seen)",
			      key);
		return;
	}
	size_t first, np = mu__snap_pods(s, key, &first);
	json_t *pods = json_array();
	for (size_t i = 0; i < np && i < 2000; i++)
		json_array_append_new(pods, pod_json(&s->p[first + i]));
	send_json(r, json_pack("{s:o,s:o,s:i,s:o,s:o}", "job", job_json(j), "pods", pods, "npods",
			       (int)np, "events", events(w, key, NULL, 200), "preemptions",
			       events(w, key, "Preempted", 200)));
}

static void ep_nodes(const mu_web_snap_t *s, mu_web_arg_fn arg, void *ctx, mu_web_resp_t *r)
{
	long off, lim;
	if (!int_arg(arg, ctx, "offset", 0, 0, 100000000, &off, r) ||
	    !int_arg(arg, ctx, "limit", 100, 1, MAX_PAGE, &lim, r))
		return;
	const char *rack = arg(ctx, "rack");
	json_t *items = json_array();
	long n = 0;
	for (size_t i = 0; i < s->nn; i++) {
		if (rack && *rack && strcmp(s->n[i].rack ? s->n[i].rack : "", rack))
			continue;
		if (n >= off && n < off + lim)
			json_array_append_new(items, node_json(&s->n[i]));
		n++;
	}
	send_json(r, json_pack("{s:i,s:i,s:i,s:o}", "total", (int)n, "offset", (int)off, "limit",
			       (int)lim, "items", items));
}

static void ep_node(const mu_web_snap_t *s, mu_web_arg_fn arg, void *ctx, mu_web_resp_t *r)
{
	const char *name = arg(ctx, "name");
	if (!name || !*name || strlen(name) > 253) {
		mu__api_error(r, 400, "name: expected a node name");
		return;
	}
	const mu_web_node_t *n = NULL;
	for (size_t i = 0; i < s->nn && !n; i++)
		if (!strcmp(s->n[i].name, name))
			n = &s->n[i];
	if (!n) {
		mu__api_error(r, 404, "no node %.253s", name);
		return;
	}
	json_t *pods = json_array();
	for (size_t i = 0; i < s->np && json_array_size(pods) < 1000; i++)
		if (s->p[i].node && !strcmp(s->p[i].node, name))
			json_array_append_new(pods, pod_json(&s->p[i]));
	send_json(r, json_pack("{s:o,s:o}", "node", node_json(n), "pods", pods));
}

static void ep_heatmap(const mu_web_snap_t *s, mu_web_resp_t *r)
{
	json_t *racks = json_array(), *nodes = json_array();
	const char *last = NULL;
	int rk = -1;
	for (size_t i = 0; i < s->nn; i++) {
		const mu_web_node_t *n = &s->n[i];
		const char *rack = n->rack ? n->rack : "";
		if (!last || strcmp(rack, last)) {
			json_array_append_new(racks, json_string(rack));
			rk++;
			last = rack;
		}
		char cells[MU_WEB_MAX_GPUS + 1];
		for (int32_t g = 0; g < n->ngpu; g++)
			cells[g] = (char)('0' + (n->gpu[g] < 5 ? n->gpu[g] : 4));
		cells[n->ngpu] = '\0';
		json_array_append_new(nodes, json_pack("[s,i,s,i]", n->name, rk, cells, (int)n->pods));
	}
	send_json(r, json_pack("{s:[s,s,s,s,s],s:o,s:o,s:I}", "states", "free", "used", "fragmented",
			       "reserved", "down", "racks", racks, "nodes", nodes, "at",
			       (json_int_t)s->at_ms));
}

static void ep_cluster(mu_web_t *w, const mu_web_snap_t *s, mu_web_arg_fn arg, void *ctx,
		       mu_web_resp_t *r)
{
	long points;
	if (!int_arg(arg, ctx, "points", 360, 2, 100000, &points, r))
		return;
	json_t *levels = json_array();
	if (s->nn && s->n[0].levels)
		json_array_append_new(levels, json_string(s->n[0].levels));
	double cpu = 0, cpu_used = 0, mem = 0, mem_used = 0;
	for (size_t i = 0; i < s->nn; i++) {
		cpu += s->n[i].cpu_alloc, cpu_used += s->n[i].cpu_used;
		mem += s->n[i].mem_alloc, mem_used += s->n[i].mem_used;
	}
	pthread_mutex_lock(&w->mu);
	uint64_t first, n, per;
	json_t *t = hist_times(w, points, &first, &n, &per);
	json_t *tot = hist_series(w, first, n, per, get_total, NULL);
	json_t *used = hist_series(w, first, n, per, get_used, NULL);
	json_t *frag = hist_series(w, first, n, per, get_frag, NULL);
	json_t *resv = hist_series(w, first, n, per, get_resv, NULL);
	pthread_mutex_unlock(&w->mu);
	send_json(r, json_pack("{s:i,s:[I,I,I,I,I],s:f,s:f,s:f,s:f,s:o,s:{s:o,s:o,s:o,s:o,s:o}}",
			       "nodes", (int)s->nn, "gpus", (json_int_t)s->gpu_state[0],
			       (json_int_t)s->gpu_state[1], (json_int_t)s->gpu_state[2],
			       (json_int_t)s->gpu_state[3], (json_int_t)s->gpu_state[4], "cpu", cpu,
			       "cpuUsed", cpu_used, "mem", mem, "memUsed", mem_used, "levels", levels,
			       "history", "t", t, "total", tot, "used", used, "fragmented", frag,
			       "reserved", resv));
}

static void ep_events(mu_web_t *w, mu_web_arg_fn arg, void *ctx, mu_web_resp_t *r)
{
	long lim;
	if (!int_arg(arg, ctx, "limit", 100, 1, 1000, &lim, r))
		return;
	const char *job = arg(ctx, "job");
	if (job && strlen(job) > 600) {
		mu__api_error(r, 400, "job: at most 600 characters");
		return;
	}
	send_json(r, json_pack("{s:o}", "items", events(w, job && *job ? job : NULL, NULL, lim)));
}

static void ep_fleet(const mu_web_snap_t *s, mu_web_arg_fn arg, void *ctx, mu_web_resp_t *r)
{
	if (!s->has_fleet) {
		send_json(r, json_pack("{s:b,s:s}", "fleet", 0, "message",
				       "No fleet here: this UI is served by muster scheduler, which runs one "
				       "cluster. The Fleet view is served by a multi-cluster dispatcher."));
		return;
	}
	long off, lim;
	if (!int_arg(arg, ctx, "offset", 0, 0, 100000000, &off, r) ||
	    !int_arg(arg, ctx, "limit", 100, 1, MAX_PAGE, &lim, r))
		return;
	json_t *cl = json_array(), *pl = json_array();
	for (size_t i = 0; i < s->nc; i++)
		json_array_append_new(cl, json_pack("{s:s,s:s,s:f,s:f,s:i,s:i}", "name", s->c[i].name,
						    "state", s->c[i].state, "gpus", s->c[i].gpus,
						    "gpusUsed", s->c[i].gpus_used, "pending",
						    (int)s->c[i].pending, "running", (int)s->c[i].running));
	for (long i = off; i < (long)s->npl && i < off + lim; i++)
		json_array_append_new(pl, json_pack("{s:s,s:s}", "job", s->pl[i].job_key, "cluster",
						    s->pl[i].cluster));
	send_json(r, json_pack("{s:b,s:o,s:{s:i,s:o}}", "fleet", 1, "clusters", cl, "placements",
			       "total", (int)s->npl, "items", pl));
}

/* A lookup that never finds anything, for requests without arguments. */
static const char *no_arg(void *ctx, const char *key)
{
	(void)ctx, (void)key;
	return NULL;
}

void mu__api_get(mu_web_t *w, mu_web_snap_t *s, const char *path, mu_web_arg_fn arg, void *ctx,
		 mu_web_resp_t *r)
{
	if (!arg)
		arg = no_arg;
	if (!s) {
		mu__api_error(r, 503, "no snapshot yet: the scheduler has not listed the cluster");
		return;
	}
	if (!strcmp(path, "summary"))
		ep_summary(w, s, r);
	else if (!strcmp(path, "queues"))
		ep_queues(w, s, arg, ctx, r);
	else if (!strcmp(path, "jobs"))
		ep_jobs(s, arg, ctx, r);
	else if (!strcmp(path, "job"))
		ep_job(w, s, arg, ctx, r);
	else if (!strcmp(path, "nodes"))
		ep_nodes(s, arg, ctx, r);
	else if (!strcmp(path, "node"))
		ep_node(s, arg, ctx, r);
	else if (!strcmp(path, "heatmap"))
		ep_heatmap(s, r);
	else if (!strcmp(path, "cluster"))
		ep_cluster(w, s, arg, ctx, r);
	else if (!strcmp(path, "events"))
		ep_events(w, arg, ctx, r);
	else if (!strcmp(path, "fleet"))
		ep_fleet(s, arg, ctx, r);
	else
		mu__api_error(r, 404, "no such endpoint: /ui/api/%.100s", path);
}

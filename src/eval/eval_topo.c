/*
 * eval_topo.c - the network, cluster and workload of `muster eval topology`
 * (include/muster/eval_topo.h; protocol in docs/evaluation.md).
 *
 * The topology CSV is read with the strict reader of csv.h into hosts with
 * a dense domain id per switch level; a domain is a value path (DSW, then
 * PSW within it, then ASW within that), which is how the engine builds
 * topology domains from node labels.  From it come the cluster (one node
 * per host, shuffled, labelled with its switches) and the two pure
 * functions the metrics rest on: a gang's tightest feasible tier and the
 * span of a placement.  The workload keeps the multi-GPU jobs of a loaded
 * Philly trace and compresses their arrivals to a target offered load
 * (arrival rate x mean GPU-work over the GPUs).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "muster/eval_topo.h"
#include "muster/csv.h"
#include "muster/util.h"

#define GIB (1LL << 30)
#define ETOPO_MAX_FILE ((size_t)256 << 20) /* topology CSVs are small */

const char *const mu_etopo_label_keys[MU_ETOPO_LEVELS] = {
	"lingjun/dsw", "lingjun/psw", "lingjun/asw",
};

static const char *const etopo_columns[1 + MU_ETOPO_LEVELS] = {
	"ip", "DSW", "PSW", "ASW",
};

const char *mu_etopo_tier_name(mu_etopo_tier_t t)
{
	static const char *const n[MU_ETOPO_NTIERS] = {"host", "tor", "psw", "dsw", "any"};
	return t >= 0 && t < MU_ETOPO_NTIERS ? n[t] : "?";
}

double mu_etopo_slowdown(mu_etopo_tier_t t)
{
	static const double f[MU_ETOPO_NTIERS] = {1.0, 1.0, 1.1, 1.25, 1.5};
	return t >= 0 && t < MU_ETOPO_NTIERS ? f[t] : 1.5;
}

/* --- Parsing ------------------------------------------------------------------ */

void mu_etopo_net_release(mu_etopo_net_t *net)
{
	free(net->hosts);
	mu_arena_release(&net->arena);
	memset(net, 0, sizeof *net);
}

/* The dense id of the domain (parent, name) at level l, created when new;
 * keys "parent/name" live in net's arena.  Returns the id or MU_ENOMEM. */
static int32_t net_domain(mu_etopo_net_t *net, mu__namemap_t *ids, int32_t l,
			  int32_t parent, const char *name)
{
	char key[MU__CSV_MAX_FIELD + 32];
	snprintf(key, sizeof key, "%d/%d/%s", (int)l, (int)parent, name);
	size_t v;
	if (mu__namemap_get(ids, key, &v) == MU_OK)
		return (int32_t)v;
	char *k = mu_arena_strdup(&net->arena, key);
	if (!k || mu__namemap_put(ids, k, (size_t)net->ndoms[l], NULL) != MU_OK)
		return MU_ENOMEM;
	return net->ndoms[l]++;
}

/* Checks the header row: exactly the four columns, in order. */
static int net_header(const mu__csv_t *c, mu_diag_t *diag)
{
	bool ok = c->nf == 1 + MU_ETOPO_LEVELS;
	for (size_t i = 0; ok && i < c->nf; i++)
		ok = !strcmp(c->f[i], etopo_columns[i]);
	return ok ? MU_OK : mu__diag(diag, MU_EPARSE, c->file, c->row_line, 0,
				     "expected the header \"ip,DSW,PSW,ASW\"");
}

/* Adds the current row as a host (names into the arena, domain ids);
 * hosts_cap grows by doubling. */
static int net_row(mu_etopo_net_t *net, const mu__csv_t *c, mu__namemap_t *names,
		   mu__namemap_t *ids, size_t *cap, mu_diag_t *diag)
{
	char q[80];
	for (size_t i = 0; i < c->nf; i++)
		if (!mu__valid_name(c->f[i]))
			return mu__diag(diag, MU_EPARSE, c->file, c->row_line, 0,
					"column \"%s\": expected a name of 1 to 253 "
					"characters from A-Z a-z 0-9 . _ -, got %s",
					etopo_columns[i], mu__quote(c->f[i], q, sizeof q));
	if (net->nhosts >= MU_ETOPO_MAX_HOSTS)
		return mu__diag(diag, MU_ELIMIT, c->file, c->row_line, 0,
				"more than %d hosts", MU_ETOPO_MAX_HOSTS);
	if ((size_t)net->nhosts == *cap) {
		size_t ncap = *cap ? *cap * 2 : 256;
		mu_etopo_host_t *nh = realloc(net->hosts, ncap * sizeof *nh);
		if (!nh)
			return MU_ENOMEM;
		net->hosts = nh;
		*cap = ncap;
	}
	mu_etopo_host_t *h = &net->hosts[net->nhosts];
	if (!(h->name = mu_arena_strdup(&net->arena, c->f[0])))
		return MU_ENOMEM;
	int rc = mu__namemap_put(names, h->name, (size_t)net->nhosts, NULL);
	if (rc == MU_EEXIST)
		return mu__diag(diag, MU_EPARSE, c->file, c->row_line, 0,
				"host %s appears twice", mu__quote(h->name, q, sizeof q));
	if (rc)
		return rc;
	int32_t parent = -1;
	for (int l = 0; l < MU_ETOPO_LEVELS; l++) {
		if (!(h->sw[l] = mu_arena_strdup(&net->arena, c->f[1 + l])))
			return MU_ENOMEM;
		if ((parent = net_domain(net, ids, l, parent, h->sw[l])) < 0)
			return parent;
		h->dom[l] = parent;
	}
	net->nhosts++;
	return MU_OK;
}

/* Fills net->max_hosts from the hosts' domain ids.  O(hosts x levels). */
static int net_sizes(mu_etopo_net_t *net)
{
	for (int l = 0; l < MU_ETOPO_LEVELS; l++) {
		int32_t *cnt = calloc((size_t)net->ndoms[l] + 1, sizeof *cnt);
		if (!cnt)
			return MU_ENOMEM;
		for (int32_t i = 0; i < net->nhosts; i++) {
			int32_t c = ++cnt[net->hosts[i].dom[l]];
			net->max_hosts[l] = c > net->max_hosts[l] ? c : net->max_hosts[l];
		}
		free(cnt);
	}
	return MU_OK;
}

int mu_etopo_net_parse(const char *file, const char *buf, size_t len,
		       int32_t gpus_per_host, mu_etopo_net_t *net, mu_diag_t *diag)
{
	memset(net, 0, sizeof *net);
	mu_arena_init(&net->arena);
	if (gpus_per_host < 1 || gpus_per_host > MU_MAX_GPUS)
		return mu__diag(diag, MU_EINVAL, file, 0, 0, "GPUs per host must be "
				"1 to %d", MU_MAX_GPUS);
	net->gpus_per_host = gpus_per_host;
	mu__csv_t c;
	int rc = mu__csv_open(&c, file, buf, len, diag);
	if (rc)
		return rc;
	mu__namemap_t names, ids;
	mu__namemap_init(&names);
	mu__namemap_init(&ids);
	size_t cap = 0;
	rc = mu__csv_next(&c, diag);
	if (rc == 0)
		rc = mu__diag(diag, MU_EPARSE, file, 1, 0, "empty file: expected the "
			      "header \"ip,DSW,PSW,ASW\"");
	else if (rc == 1)
		rc = net_header(&c, diag);
	while (rc == MU_OK && (rc = mu__csv_next(&c, diag)) == 1)
		rc = net_row(net, &c, &names, &ids, &cap, diag);
	if (rc == MU_OK && net->nhosts == 0)
		rc = mu__diag(diag, MU_EINVAL, file, 0, 0, "no hosts");
	if (rc == MU_OK)
		rc = net_sizes(net);
	if (rc == MU_ENOMEM)
		mu__diag(diag, rc, file, 0, 0, "out of memory");
	mu__namemap_release(&names);
	mu__namemap_release(&ids);
	mu__csv_release(&c);
	return rc;
}

/* Reads all of f into a malloc'ed buffer (*buf, *len; the caller frees
 * it), growing it by doubling up to ETOPO_MAX_FILE. */
static int read_all(FILE *f, char **buf, size_t *len)
{
	size_t cap = 0;
	*buf = NULL;
	*len = 0;
	for (;;) {
		if (*len == cap) {
			if (cap >= ETOPO_MAX_FILE)
				return MU_ELIMIT;
			cap = cap ? cap * 2 : 65536;
			char *nb = realloc(*buf, cap);
			if (!nb)
				return MU_ENOMEM;
			*buf = nb;
		}
		size_t n = fread(*buf + *len, 1, cap - *len, f);
		*len += n;
		if (n == 0)
			return ferror(f) ? MU_EIO : MU_OK;
	}
}

int mu_etopo_net_load(const char *path, int32_t gpus_per_host,
		      mu_etopo_net_t *net, mu_diag_t *diag)
{
	memset(net, 0, sizeof *net);
	mu_arena_init(&net->arena);
	FILE *f = fopen(path, "rb");
	if (!f) {
		int err = errno;
		return mu__diag(diag, err == ENOENT ? MU_ENOENT : MU_EIO, path, 0, 0,
				"cannot open: %s", strerror(err));
	}
	char *buf;
	size_t n;
	int rc = read_all(f, &buf, &n);
	fclose(f);
	if (rc == MU_OK)
		rc = mu_etopo_net_parse(path, buf, n, gpus_per_host, net, diag);
	else
		mu__diag(diag, rc, path, 0, 0, "%s", rc == MU_ELIMIT ?
			 "larger than 256 MiB" : mu_strerror(rc));
	free(buf);
	return rc;
}

/* --- Tiers and spans ------------------------------------------------------------- */

mu_etopo_tier_t mu_etopo_tightest(const mu_etopo_net_t *net, int64_t gpus)
{
	int64_t g = net->gpus_per_host;
	if (gpus <= g)
		return MU_ETOPO_HOST;
	/* Tier TOR is level 2 (ASW), PSW level 1, DSW level 0. */
	for (int t = MU_ETOPO_TOR; t <= MU_ETOPO_DSW; t++)
		if (gpus <= g * net->max_hosts[MU_ETOPO_LEVELS - t])
			return (mu_etopo_tier_t)t;
	return MU_ETOPO_ANY;
}

int mu_etopo_span(const mu_etopo_net_t *net, const int32_t *hosts, int32_t n,
		  mu_etopo_span_t *out)
{
	*out = (mu_etopo_span_t){0, 0, MU_ETOPO_HOST};
	for (int32_t i = 0; i < n; i++)
		if (hosts[i] < 0 || hosts[i] >= net->nhosts)
			return MU_EINVAL;
	bool same[MU_ETOPO_LEVELS] = {true, true, true};
	for (int32_t i = 0; i < n; i++) {
		const mu_etopo_host_t *h = &net->hosts[hosts[i]];
		bool new_host = true, new_tor = true;
		for (int32_t k = 0; k < i; k++) {
			const mu_etopo_host_t *o = &net->hosts[hosts[k]];
			new_host = new_host && hosts[k] != hosts[i];
			new_tor = new_tor && o->dom[2] != h->dom[2];
		}
		out->hosts += new_host;
		out->tors += new_tor;
		for (int l = 0; l < MU_ETOPO_LEVELS; l++)
			same[l] = same[l] && h->dom[l] == net->hosts[hosts[0]].dom[l];
	}
	if (out->hosts > 1)
		out->tier = same[2] ? MU_ETOPO_TOR : same[1] ? MU_ETOPO_PSW :
			    same[0] ? MU_ETOPO_DSW : MU_ETOPO_ANY;
	return MU_OK;
}

/* --- Cluster ------------------------------------------------------------------------ */

/* Appends host h as a node of sp (strings into sp's arena). */
static int cluster_node(const mu_etopo_net_t *net, const mu_etopo_host_t *h,
			mu_specs_t *sp)
{
	mu_label_t *lab = mu_arena_alloc(&sp->arena, MU_ETOPO_LEVELS * sizeof *lab);
	char *name = mu_arena_strdup(&sp->arena, h->name);
	mu_node_spec_t *n = lab && name ? mu_specs_add_node(sp) : NULL;
	if (!n)
		return MU_ENOMEM;
	for (int l = 0; l < MU_ETOPO_LEVELS; l++) {
		lab[l].key = mu_etopo_label_keys[l];
		if (!(lab[l].value = mu_arena_strdup(&sp->arena, h->sw[l])))
			return MU_ENOMEM;
	}
	n->name = name;
	n->labels = lab;
	n->nlabels = MU_ETOPO_LEVELS;
	n->alloc.v[MU_RES_CPU] = 128000;
	n->alloc.v[MU_RES_MEM] = 1024 * GIB;
	n->alloc.v[MU_RES_GPU] = net->gpus_per_host;
	n->alloc.v[MU_RES_PODS] = 110;
	return MU_OK;
}

int mu_etopo_cluster(const mu_etopo_net_t *net, uint64_t seed, mu_specs_t *sp)
{
	int32_t *order = malloc((size_t)(net->nhosts ? net->nhosts : 1) * sizeof *order);
	mu_topology_spec_t *t = mu_specs_add_topology(sp);
	if (!order || !t) {
		free(order);
		return MU_ENOMEM;
	}
	uint64_t s = seed ^ 0x5eed70b0c0ffee11ULL;
	for (int32_t i = 0; i < net->nhosts; i++)
		order[i] = i;
	for (int32_t i = net->nhosts - 1; i > 0; i--) {
		int32_t k = (int32_t)(mu__splitmix64(&s) % (uint64_t)(i + 1));
		int32_t tmp = order[i];
		order[i] = order[k];
		order[k] = tmp;
	}
	int rc = MU_OK;
	for (int32_t i = 0; rc == MU_OK && i < net->nhosts; i++)
		rc = cluster_node(net, &net->hosts[order[i]], sp);
	free(order);
	const char **levels = mu_arena_alloc(&sp->arena, MU_ETOPO_LEVELS * sizeof *levels);
	if (rc == MU_OK && !(t->name = mu_arena_strdup(&sp->arena, "lingjun")))
		rc = MU_ENOMEM;
	if (rc == MU_OK && !levels)
		rc = MU_ENOMEM;
	for (int l = 0; rc == MU_OK && l < MU_ETOPO_LEVELS; l++)
		levels[l] = mu_etopo_label_keys[l];
	if (rc == MU_OK) {
		t->levels = levels;
		t->nlevels = MU_ETOPO_LEVELS;
	}
	return rc;
}

/* --- Workload -------------------------------------------------------------------- */

void mu_etopo_opts_defaults(mu_etopo_opts_t *o)
{
	*o = (mu_etopo_opts_t){.load = 0.8, .seed = 1, .min_gpus = 2,
			       .gpus_per_host = 8};
}

/* GPUs (whole devices) of all pods of j. */
static int64_t job_gpus(const mu_job_spec_t *j)
{
	int64_t g = 0;
	for (size_t p = 0; p < j->npodsets; p++)
		g += j->podsets[p].req.v[MU_RES_GPU] * j->podsets[p].replicas;
	return g;
}

/* Keeps the jobs of sp of at least min_gpus GPUs, the first max_jobs in
 * sp's order (the Philly loader's is by submit time), in that order; fills
 * the counts and GPU-seconds of w.  O(jobs). */
static void work_filter(mu_specs_t *sp, const mu_etopo_opts_t *o,
			mu_etopo_workload_t *w)
{
	size_t kept = 0;
	w->trace_jobs = (int64_t)sp->njobs;
	for (size_t i = 0; i < sp->njobs; i++) {
		const mu_job_spec_t *j = &sp->jobs[i];
		int64_t g = job_gpus(j);
		if (g < o->min_gpus || (o->max_jobs > 0 && (int64_t)kept >= o->max_jobs))
			continue;
		double gs = (double)g * (double)j->duration / 1000.0;
		w->gpu_s += gs;
		if (mu_job_spec_pods(j) >= 2) {
			w->gangs++;
			w->gang_gpu_s += gs;
		}
		w->gang_gpus_max = g > w->gang_gpus_max ? g : w->gang_gpus_max;
		w->max_duration_s = fmax(w->max_duration_s, (double)j->duration / 1000.0);
		sp->jobs[kept++] = *j;
	}
	sp->njobs = kept;
	w->jobs = (int64_t)kept;
}

/* The earliest and latest submit of sp's jobs (at least one). */
static void submit_range(const mu_specs_t *sp, mu_time_t *t0, mu_time_t *t1)
{
	*t0 = *t1 = sp->jobs[0].submit;
	for (size_t i = 1; i < sp->njobs; i++) {
		*t0 = sp->jobs[i].submit < *t0 ? sp->jobs[i].submit : *t0;
		*t1 = sp->jobs[i].submit > *t1 ? sp->jobs[i].submit : *t1;
	}
}

/* The share of `gpus` that sp's jobs, submits compressed c times from t0,
 * would hold on average over the window of submits (span_ms / c) if each
 * started on arrival.  O(jobs). */
static double window_load(const mu_specs_t *sp, mu_time_t t0, double span_ms,
			  double gpus, double c)
{
	double held = 0;
	for (size_t i = 0; i < sp->njobs; i++) {
		const mu_job_spec_t *j = &sp->jobs[i];
		double at = (double)(j->submit - t0) / span_ms;
		held += (double)job_gpus(j) * fmin((double)j->duration * c / span_ms, 1 - at);
	}
	return held / gpus;
}

/* Compresses sp's submits c times from t0, moves every job to queue, and
 * clears topology requests. */
static void work_scale(mu_specs_t *sp, mu_time_t t0, double c, const char *queue)
{
	for (size_t i = 0; i < sp->njobs; i++) {
		mu_job_spec_t *j = &sp->jobs[i];
		j->submit = (mu_time_t)llround((double)(j->submit - t0) / c);
		j->queue = queue;
		j->topo = (mu_topo_req_t){0};
	}
}

int mu_etopo_workload(mu_specs_t *sp, const mu_etopo_net_t *net,
		      const mu_etopo_opts_t *o, mu_etopo_workload_t *w,
		      mu_diag_t *diag)
{
	memset(w, 0, sizeof *w);
	if (!(o->load > 0) || o->load > 100)
		return mu__diag(diag, MU_EINVAL, "eval topology", 0, 0,
				"the load must be above 0 and at most 100");
	work_filter(sp, o, w);
	mu_time_t t0 = 0, t1 = 0;
	if (w->jobs)
		submit_range(sp, &t0, &t1);
	double gpus = (double)net->nhosts * net->gpus_per_host;
	if (w->jobs < 2 || t1 <= t0 || !(w->gpu_s > 0))
		return mu__diag(diag, MU_EINVAL, "eval topology", 0, 0, "the trace has "
				"%lld jobs of %d GPUs or more over %.0f s: too few to "
				"set a load", (long long)w->jobs, (int)o->min_gpus,
				(double)(t1 - t0) / 1000.0);
	/* load = gpu_s / (gpus x window), window = span / compress. */
	double span_ms = (double)(t1 - t0);
	w->trace_span_s = span_ms / 1000.0;
	w->compress = o->load * gpus * w->trace_span_s / w->gpu_s;
	w->window_load = window_load(sp, t0, span_ms, gpus, w->compress);
	char *queue = mu_arena_strdup(&sp->arena, "philly");
	if (!queue)
		return MU_ENOMEM;
	work_scale(sp, t0, w->compress, queue);
	w->window_s = (double)llround(span_ms / w->compress) / 1000.0;
	w->load = w->gpu_s / (gpus * w->window_s);
	sp->nqueues = 0;
	mu_queue_spec_t *q = mu_specs_add_queue(sp);
	if (!q)
		return MU_ENOMEM;
	q->name = queue;
	return MU_OK;
}

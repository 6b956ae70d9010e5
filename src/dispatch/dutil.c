/*
 * dutil.c - what every file of the hub daemon shares: the clocks, logs,
 * one JSON request, and reading labels, annotations and "k=v,k=v" lists;
 * and the condition Preempted of a reclaim's victim (reclaim.c sets it,
 * hub.c writes it).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dispatch/dispatch_int.h"
#include "muster/jpath.h"

int64_t mu__d_mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t mu__d_wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t mu__d_mono_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* The bucket of a time in us: 0.1 ms steps to 100 ms, then 10 ms. */
static int lat_bucket(int64_t us)
{
	int64_t b = us < 100000 ? us / 100 : 1000 + (us - 100000) / 10000;
	return b < 0 ? 0 : b >= MU__DLAT_BUCKETS ? MU__DLAT_BUCKETS - 1 : (int)b;
}

/* The lower bound in us of bucket b (lat_bucket's inverse). */
static int64_t lat_floor(int b)
{
	return b < 1000 ? (int64_t)b * 100 : 100000 + (int64_t)(b - 1000) * 10000;
}

void mu__dlat_add(mu__dlat_t *h, const int64_t t_us[4])
{
	for (int l = 0; l < 3; l++)
		if (t_us[l] <= 0 || t_us[l + 1] < t_us[l])
			return;
	for (int l = 0; l < MU__DLAT_LEGS; l++) {
		int64_t us = l < 3 ? t_us[l + 1] - t_us[l] : t_us[3] - t_us[0];
		h->n[l][lat_bucket(us)]++;
		h->count[l]++;
		if (us > h->max_us[l])
			h->max_us[l] = us;
	}
}

int64_t mu__dlat_pct(const mu__dlat_t *h, int l, int pct)
{
	if (l < 0 || l >= MU__DLAT_LEGS || !h->count[l])
		return -1;
	if (pct >= 100)
		return h->max_us[l];
	/* the smallest bucket at which pct% of the jobs are counted */
	uint64_t want = (h->count[l] * (uint64_t)(pct < 0 ? 0 : pct) + 99) / 100, seen = 0;
	for (int b = 0; b < MU__DLAT_BUCKETS; b++)
		if ((seen += h->n[l][b]) >= want && seen)
			return lat_floor(b);
	return h->max_us[l];
}

void mu__dlat_format(const mu__dlat_t *h, char *buf, size_t len)
{
	static const char *const leg[MU__DLAT_LEGS] = {
		"decided->recorded", "recorded->created", "created->seen bound", "decided->seen bound"};
	size_t o = (size_t)snprintf(buf, len, "%llu jobs", (unsigned long long)h->count[3]);
	for (int l = 0; l < MU__DLAT_LEGS && o < len; l++)
		o += (size_t)snprintf(buf + o, len - o, "%s %s p50 %.1f p90 %.1f max %.1f ms",
				      l ? "," : ":", leg[l], (double)mu__dlat_pct(h, l, 50) / 1000,
				      (double)mu__dlat_pct(h, l, 90) / 1000,
				      (double)mu__dlat_pct(h, l, 100) / 1000);
}

mu_time_t mu__d_now(const mu__dd_t *d)
{
	return mu__d_mono_ms() - d->t0;
}

void mu__dlog(const mu__dd_t *d, int level, const char *fmt, ...)
{
	if (level > 0 && d->o->quiet)
		return;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	char line[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	struct tm tm;
	gmtime_r(&ts.tv_sec, &tm);
	fprintf(stderr, "%02d:%02d:%02d.%03ld %s %s\n", tm.tm_hour, tm.tm_min, tm.tm_sec,
		ts.tv_nsec / 1000000, level ? "info " : "error", line);
}

/* mu__dreq and mu__dreq_err: with errors_only, a 2xx answer is not
 * parsed (*out NULL). */
static long dreq(const mu__dd_t *d, mu_kube_client_t *c, const char *method, const char *path,
		 const char *ctype, const json_t *body, json_t **out, bool errors_only);

long mu__dreq(const mu__dd_t *d, mu_kube_client_t *c, const char *method,
	      const char *path, const char *ctype, const json_t *body,
	      json_t **out)
{
	return dreq(d, c, method, path, ctype, body, out, false);
}

long mu__dreq_err(const mu__dd_t *d, mu_kube_client_t *c, const char *method, const char *path,
		  const char *ctype, const json_t *body, json_t **out)
{
	return dreq(d, c, method, path, ctype, body, out, true);
}

static long dreq(const mu__dd_t *d, mu_kube_client_t *c, const char *method, const char *path,
		 const char *ctype, const json_t *body, json_t **out, bool errors_only)
{
	if (!c) { /* no connection (none could be made): no answer */
		if (out)
			*out = NULL;
		return 0;
	}
	char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	char *ans = NULL;
	long st = 0;
	if (d->nreq)
		__atomic_add_fetch(d->nreq, 1, __ATOMIC_RELAXED);
	mu_kube_client_do(c, method, path, body ? (ctype ? ctype : "application/json") : NULL,
			  text, d->o->request_timeout_ms, &st, &ans);
	free(text);
	if (out && errors_only && st >= 200 && st < 300) {
		*out = NULL;
	} else if (out) {
		/* one pass over the text (jparse.c: the tree json_loads
		 * gives; a created copy's answer is its whole object) */
		*out = ans && *ans ? mu__json_loadb(ans, strlen(ans)) : NULL;
		if (!*out && st == 0 && ans)
			*out = json_pack("{s:s}", "message", ans);
	}
	free(ans);
	return st;
}

mu__djob_t *mu__djob_current(const mu__dd_t *d, const char *uid, const char *gen, int32_t ci)
{
	json_t *v = uid && gen ? json_object_get(d->by_uid, uid) : NULL;
	mu__djob_t *j = v ? d->jobs[json_integer_value(v)] : NULL;
	char g[16];
	if (!j || j->state < MU__DJ_DISPATCHED || j->cl != ci)
		return NULL;
	snprintf(g, sizeof g, "%u", j->gen);
	return strcmp(gen, g) ? NULL : j;
}

const char *mu__dmeta(const json_t *o, const char *map, const char *key)
{
	const json_t *m = json_object_get(json_object_get(o, "metadata"), map);
	return json_string_value(json_object_get(m, key));
}

int mu__dlabels(const char *s, mu_arena_t *a, mu_label_t **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (!s || !*s)
		return MU_OK;
	size_t cap = 1;
	for (const char *p = s; *p; p++)
		cap += *p == ',';
	mu_label_t *v = mu_arena_alloc(a, cap * sizeof *v);
	if (!v)
		return MU_ENOMEM;
	const char *p = s;
	while (*p) {
		size_t len = strcspn(p, ",");
		char term[512];
		snprintf(term, sizeof term, "%.*s", (int)(len < 511 ? len : 511), p);
		char *eq = strchr(term, '=');
		if (!eq || eq == term)
			return MU_EINVAL;
		*eq = '\0';
		v[*n].key = mu_arena_strdup(a, term);
		v[*n].value = mu_arena_strdup(a, eq + 1);
		if (!v[*n].key || !v[*n].value)
			return MU_ENOMEM;
		(*n)++;
		p += len;
		if (*p == ',')
			p++;
	}
	*out = v;
	return MU_OK;
}


/* Labels the pod template tm (a Job's, or a part's) with the hub uid and
 * generation, without what the hub's Job controller added. */
static void tmpl_label(json_t *tm, const char *uid, const char *gen)
{
	json_t *md = json_object_get(tm, "metadata");
	if (!md) {
		md = json_object();
		json_object_set_new(tm, "metadata", md);
	}
	json_t *tl = json_object_get(md, "labels");
	if (!tl) {
		tl = json_object();
		json_object_set_new(md, "labels", tl);
	}
	static const char *const drop[] = {"controller-uid", "job-name",
		"batch.kubernetes.io/controller-uid", "batch.kubernetes.io/job-name", NULL};
	for (int i = 0; drop[i]; i++)
		json_object_del(tl, drop[i]);
	json_object_set_new(tl, MU__D_HUBUID, json_string(uid));
	json_object_set_new(tl, MU__D_GEN, json_string(gen));
}

json_t *mu__dcopy(const json_t *hub, mu__dkind_t k, const char *uid, const char *key, uint32_t g)
{
	char gen[16];
	snprintf(gen, sizeof gen, "%u", g);
	json_t *labels = json_deep_copy(mu__jget(hub, "metadata.labels"));
	if (!labels)
		labels = json_object();
	json_object_del(labels, MU__D_CLUSTER);
	json_t *ann = json_object();
	const char *ak;
	json_t *v;
	json_object_foreach(mu__jget(hub, "metadata.annotations"), ak, v)
		if (strncmp(ak, "muster.io/dispatch-", 19) && strcmp(ak, MU__D_CLUSTER) &&
		    strcmp(ak, MU__D_SEL) && strcmp(ak, MU__D_LOC) && strcmp(ak, MU__D_TERM) &&
		    strcmp(ak, "kubectl.kubernetes.io/last-applied-configuration"))
			json_object_set(ann, ak, v);
	json_object_set_new(labels, MU__D_HUBUID, json_string(uid));
	json_object_set_new(ann, MU__D_GEN, json_string(gen));
	json_object_set_new(ann, MU__D_HUBJOB, json_string(key));
	json_object_set_new(ann, "muster.io/admitted", json_string("true"));
	json_t *spec = json_deep_copy(json_object_get(hub, "spec"));
	if (!spec)
		spec = json_object();
	/* unsuspended; the worker's own controller runs the copy (as
	 * MultiKueue drops managedBy from its workers' copies) */
	json_t *ctl = mu__dkind_ctl(spec, k, true); /* NULL: a kind without suspend */
	if (ctl) {
		json_object_set_new(ctl, "suspend", json_false());
		json_object_del(ctl, "managedBy");
	}
	if (k == MU__DK_JOB) {
		json_object_del(spec, "selector");
		json_object_del(spec, "manualSelector");
		if (!json_object_get(spec, "template"))
			json_object_set_new(spec, "template", json_object());
		tmpl_label(json_object_get(spec, "template"), uid, gen);
	} else {
		mu__dtmpl_t t[16];
		int n = mu__dkind_templates(spec, k, t, 16);
		for (int i = 0; i < n; i++)
			tmpl_label(t[i].tmpl, uid, gen);
	}
	const char *ns = mu__jstr(hub, "metadata.namespace");
	return json_pack("{s:s,s:s,s:{s:s,s:s,s:o,s:o},s:o}", "apiVersion", mu__dkind_api(k),
			 "kind", mu__dkind_kind(k), "metadata", "name",
			 mu__jstr(hub, "metadata.name"), "namespace", ns ? ns : "default",
			 "labels", labels, "annotations", ann, "spec", spec);
}


json_t *mu__dnode_min(const json_t *n)
{
	json_t *conds = json_array();
	size_t i;
	json_t *cd;
	json_array_foreach(mu__jget(n, "status.conditions"), i, cd) {
		const char *t = json_string_value(json_object_get(cd, "type"));
		if (t && !strcmp(t, "Ready"))
			json_array_append_new(conds, json_pack("{s:s,s:O}", "type", "Ready", "status",
						  json_object_get(cd, "status")));
	}
	json_t *o = json_pack("{s:{s:s*},s:{},s:{s:o}}", "metadata", "name",
			      mu__jstr(n, "metadata.name"), "spec", "status", "conditions", conds);
	if (!o)
		return NULL;
	const json_t *v;
	if ((v = mu__jget(n, "metadata.labels")))
		json_object_set(json_object_get(o, "metadata"), "labels", (json_t *)v);
	if ((v = mu__jget(n, "spec.taints")))
		json_object_set(json_object_get(o, "spec"), "taints", (json_t *)v);
	if ((v = mu__jget(n, "spec.unschedulable")))
		json_object_set(json_object_get(o, "spec"), "unschedulable", (json_t *)v);
	if ((v = mu__jget(n, "status.allocatable")))
		json_object_set(json_object_get(o, "status"), "allocatable", (json_t *)v);
	return o;
}

/* The watches of a push-mode worker: its Nodes, its copies (objects of
 * each kind it serves labelled with a hub uid) and their pods, and the
 * pods beside them (podcap.c); its disruption budgets only when budgets
 * is set (they order reclaim's victims: without --reclaim nothing reads
 * them). */
int mu__dcl_connect(mu__dcl_t *c, bool budgets)
{
	int rc = mu_kube_client_new(c->cfg, &c->kc);
	const char *sel = MU__D_COPY_SEL;
	if (rc == MU_OK)
		rc = mu_kube_watch_start(c->cfg, "/api/v1/nodes", NULL, &c->wnodes);
	if (rc == MU_OK)
		rc = mu_kube_watch_start(c->cfg, "/api/v1/pods", sel, &c->wpods);
	if (rc == MU_OK)
		rc = mu_kube_watch_start(c->cfg, "/api/v1/pods", MU__D_USED_QUERY, &c->wused);
	if (rc == MU_OK)
		rc = mu_kube_watch_start(c->cfg, "/api/v1/events", MU__D_FAIL_QUERY, &c->wfail);
	/* its disruption budgets (pdbs.c; a server without policy/v1 only
	 * leaves the watch unanswered: no budget is then known) */
	if (rc == MU_OK && budgets)
		rc = mu_kube_watch_start(c->cfg, "/apis/policy/v1/poddisruptionbudgets", NULL,
					 &c->wpdbs);
	c->pdbs_seq = c->pdbs_pods = 0;
	c->pdbs_any = false;
	/* its Job copies; the other kinds' once its discovery says it serves
	 * them (served.c, from the caller: those it served before start at
	 * once, and it is asked again at its next poll) */
	char jpath[200];
	mu__dkind_path(MU__DK_JOB, NULL, NULL, "", jpath, sizeof jpath);
	if (rc == MU_OK)
		rc = mu_kube_watch_start(c->cfg, jpath, sel, &c->wcopies[MU__DK_JOB]);
	c->disc_at = c->probe_at = 0;
	c->apis = 0;
	c->nodes_seq = c->used_seq = c->fail_seq = 0;
	if (rc != MU_OK)
		mu__dcl_disconnect(c);
	return rc;
}

/* (declared with worker.c's creates; here, below hdra.c, which uses it too) */
bool mu__dwork_refused(long st)
{
	return st >= 400 && st < 500 && st != 408 && st != 409 && st != 429;
}

void mu__dcl_signal(mu__dcl_t *c)
{
	mu_kube_watch_signal(c->wnodes);
	mu_kube_watch_signal(c->wpods);
	mu_kube_watch_signal(c->wused);
	mu_kube_watch_signal(c->wfail);
	mu_kube_watch_signal(c->wpdbs);
	for (int k = 0; k < MU__DK_COUNT; k++)
		mu_kube_watch_signal(c->wcopies[k]);
	for (int k = 0; k < MU__DDRA_N; k++)
		mu_kube_watch_signal(c->wdra[k]);
	mu_kube_watch_signal(c->wdtpl);
}

void mu__dcl_disconnect(mu__dcl_t *c)
{
	mu__dcl_signal(c);
	mu_kube_watch_stop(c->wnodes);
	mu_kube_watch_stop(c->wpods);
	mu_kube_watch_stop(c->wused);
	c->wnodes = c->wpods = c->wused = NULL;
	json_decref(c->used);
	c->used = NULL;
	mu_kube_watch_stop(c->wfail);
	c->wfail = NULL;
	json_decref(c->fails);
	c->fails = NULL;
	mu_kube_watch_stop(c->wpdbs);
	c->wpdbs = NULL;
	for (int k = 0; k < MU__DK_COUNT; k++) {
		mu_kube_watch_stop(c->wcopies[k]);
		c->wcopies[k] = NULL;
	}
	/* its DRA watches (wdra.c): started again by the next discovery,
	 * and the fleet given their objects again once they list */
	for (int k = 0; k < MU__DDRA_N; k++) {
		mu_kube_watch_stop(c->wdra[k]);
		c->wdra[k] = NULL;
		c->dra_seq[k] = 0;
	}
	mu_kube_watch_stop(c->wdtpl);
	c->wdtpl = NULL;
	c->dtpl_seq[0] = c->dtpl_seq[1] = 0;
	c->dheld_seq[0] = c->dheld_seq[1] = 0;
	c->dcopies = 0;
	c->dra_on = 0;
	json_decref(c->dra_nodes);
	c->dra_nodes = NULL;
	/* what a poll of its changes keeps: read again from new watches */
	c->polled = false;
	json_decref(c->pinfo);
	json_decref(c->pcount);
	c->pinfo = c->pcount = NULL;
	mu_kube_client_free(c->kc);
	c->kc = NULL;
	for (int t = 0; t < MU__D_SENDERS; t++) {
		mu_kube_client_free(c->pool[t]);
		c->pool[t] = NULL;
	}
	if (c->cfg)
		mu_kube_config_release(c->cfg);
	free(c->cfg);
	c->cfg = NULL;
}

int32_t mu__drec_count(const mu__djob_t *j, const char *rec, char end)
{
	if (!rec)
		return 0;
	char *e;
	unsigned long g = strtoul(rec, &e, 10);
	if (*e != '\t' || g != j->gen)
		return 0;
	long n = strtol(e + 1, &e, 10);
	return *e == end && n > 0 && n < 1000000 ? (int32_t)n : 0;
}

const char *mu__drec_field(const char *rec, int k)
{
	for (; rec && k > 0; k--) {
		rec = strchr(rec, '\t');
		rec = rec ? rec + 1 : NULL;
	}
	return rec;
}

char *mu__drec_make(const mu__djob_t *j, int32_t n, const char *reason, int rlen,
		    const char *msg)
{
	size_t len = strlen(reason) + strlen(msg) + 40;
	char *rec = malloc(len);
	if (rec)
		snprintf(rec, len, "%u\t%d\t%.*s\t%s", j->gen, (int)n,
			 rlen < 0 ? (int)strlen(reason) : rlen, reason, msg);
	return rec;
}

int32_t mu__dreclaim_shrunk(const mu__djob_t *j) { return mu__drec_count(j, j->shrunk, '\t'); }

void mu__dreclaim_cond(const mu__djob_t *j, json_t *cs, bool on)
{
	/* an elastic victim shrunk (round 17): Shrunk, True while this
	 * dispatch runs with its pods taken off */
	const char *sm = mu__drec_field(j->shrunk, 2), *st = mu__drec_field(j->shrunk, 3);
	if (st && mu__dreclaim_shrunk(j) > 0 && j->state == MU__DJ_DISPATCHED) {
		char reason[32];
		snprintf(reason, sizeof reason, "%.*s", (int)(st - sm - 1 < 31 ? st - sm - 1 : 31),
			 sm);
		json_array_append_new(cs, json_pack("{s:s,s:s,s:s,s:s}", "type", "Shrunk", "status",
						    "True", "reason", reason, "message", st));
	}
	if (!j->preempted)
		return;
	const char *tab = strchr(j->preempted, '\t');
	char reason[32];
	size_t n = tab ? (size_t)(tab - j->preempted) : 0;
	snprintf(reason, sizeof reason, "%.*s", (int)(n < sizeof reason ? n : sizeof reason - 1),
		 j->preempted);
	json_array_append_new(cs, json_pack("{s:s,s:s,s:s,s:s}", "type", "Preempted", "status",
					    on ? "False" : "True", "reason", reason, "message",
					    tab ? tab + 1 : ""));
}

void mu__dreclaim_kind_cond(const mu__djob_t *j, json_t *st, bool on, const char *now)
{
	if (!j->preempted || !json_is_object(st) || !mu__dkind_conds(j->kind))
		return;
	json_t *old = json_object_get(st, "conditions"), *cs = json_array();
	size_t i;
	json_t *c;
	json_array_foreach(json_is_array(old) ? old : NULL, i, c)
		if (!json_is_object(c) || !json_is_string(json_object_get(c, "type")) ||
		    strcmp(json_string_value(json_object_get(c, "type")), "Preempted"))
			json_array_append(cs, c); /* the copy's own, kept */
	mu__dreclaim_cond(j, cs, on);
	if (now)
		json_object_set_new(json_array_get(cs, json_array_size(cs) - 1), "lastTransitionTime",
				    json_string(now));
	json_object_set_new(st, "conditions", cs);
}

/*
 * dra.c - DRA resource claims in the fleet's model of each cluster (issue
 * 18, round 14): which clusters can give a job's pods the devices their
 * ResourceClaims ask for, node by node.
 *
 * The engine knows nothing of devices.  So a job with claims (its spec's
 * dra) is placed in a cluster's model as any job is (its CPU, memory and
 * GPU requests, node by node), and then, before the placement is kept,
 * every placed pod's claims are allocated on the node the model put the pod
 * on by the load allocator (load/dra.c: the same structured allocator, CEL
 * subset and refusals as muster scheduler's), over the worker's
 * ResourceSlices and DeviceClasses: the devices its ResourceClaims hold are
 * in use, and so are those the fleet allocated for the jobs it sent there
 * before (kept per job until it finishes, is taken back, or, since round
 * 20, its copy's first pod is bound, when the worker's own allocation,
 * in its ResourceClaims, takes over: mu_fleet_job_started) and those of
 * the job's earlier pods, so two pods of a gang never share a device.  A
 * claim made from a template is allocated once per pod; a named claim once
 * for the job, every pod using that allocation (its node selector must
 * select the pod's node, as kube's allocator requires).  When any pod's
 * claims do not fit, the placement is taken back (place.c) and the
 * allocator's reason is kept for that cluster, for the condition and
 * explain.  A job without claims never reaches this file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet/fleet_int.h"
#include "muster/dra.h"
#include "muster/error.h"

/* The label pods are steered with, as muster scheduler steers them
 * (kube/dra.c): kubelet sets it to the node's name. */
#define MU__DRA_HOSTNAME "kubernetes.io/hostname"
/* The label a spread gang's pods carry (mu__fleet_dra_steer, spread). */
#define MU__DRA_GANG "muster.io/fleet-dra"

int mu_fleet_cluster_dra(mu_fleet_t *f, int32_t c, json_t *slices, json_t *classes,
			 json_t *claims, json_t *nodes)
{
	if (!f || c < 0 || c >= f->nclusters)
		return MU_ENOENT;
	mu__cluster_t *k = &f->clusters[c];
	json_t *mine = k->dra_mine;
	k->dra_mine = NULL;
	mu__fleet_dra_release(k);
	k->dra_mine = mine;
	k->dra_slices = slices ? json_incref(slices) : NULL;
	k->dra_classes = classes ? json_incref(classes) : NULL;
	k->dra_claims = claims ? json_incref(claims) : NULL;
	k->dra_nodes = nodes ? json_incref(nodes) : NULL;
	f->epoch++; /* devices may have appeared */
	return MU_OK;
}

void mu__fleet_dra_release(mu__cluster_t *k)
{
	json_decref(k->dra_slices);
	json_decref(k->dra_classes);
	json_decref(k->dra_claims);
	json_decref(k->dra_nodes);
	json_decref(k->dra_mine);
	k->dra_slices = k->dra_classes = k->dra_claims = k->dra_nodes = k->dra_mine = NULL;
}

/* The claims in use on k: the worker's and the fleet's own jobs', in a new
 * array (borrowed entries).  NULL on OOM.  O(claims). */
static json_t *in_use(const mu__cluster_t *k)
{
	json_t *all = json_array();
	if (!all)
		return NULL;
	if (k->dra_claims && json_array_extend(all, k->dra_claims))
		goto oom;
	const char *key;
	json_t *v;
	json_object_foreach(k->dra_mine, key, v)
		if (json_array_extend(all, v))
			goto oom;
	return all;
oom:
	json_decref(all);
	return NULL;
}

/* Keeps why job fj's claims did not fit on cluster k. */
static void note_why(mu__fjob_t *fj, const mu__cluster_t *k, const char *why)
{
	if (!fj->dra_why)
		fj->dra_why = json_object();
	json_object_set_new(fj->dra_why, k->name, json_string(why));
}

/* The claims of one pod (pod set ps, pod p): each template's a copy named
 * for the pod, a named claim's its allocation when an earlier pod made it
 * (in shared) or a copy.  made[i] is owned (NULL for a borrowed one).
 * Returns how many, or -1 (OOM, or more than MU_DRA_MAX_CLAIMS with why). */
static int pod_claims(const json_t *list, const char *job, int32_t ps, int32_t p,
		      const json_t *shared, const json_t **cl, json_t **made, char *why, size_t len)
{
	size_t i;
	json_t *e;
	int n = 0;
	json_array_foreach(list, i, e) {
		if (n == MU_DRA_MAX_CLAIMS) {
			snprintf(why, len, "more than %d resource claims in one pod", MU_DRA_MAX_CLAIMS);
			return -1;
		}
		const char *name = json_string_value(json_object_get(e, "name"));
		bool sh = json_is_true(json_object_get(e, "shared"));
		const json_t *done = sh && name ? json_object_get(shared, name) : NULL;
		made[n] = done ? NULL : json_deep_copy(json_object_get(e, "claim"));
		if (!done && !json_is_object(made[n])) {
			json_decref(made[n]);
			snprintf(why, len, "resource claim %s: no ResourceClaim to allocate",
				 name ? name : "?");
			return -1;
		}
		if (made[n] && !sh) { /* one per pod, named apart from every other */
			char nm[400];
			snprintf(nm, sizeof nm, "%.200s.s%d.p%d.%.100s", job, ps, p, name ? name : "?");
			json_t *md = json_object_get(made[n], "metadata");
			if (!json_is_object(md))
				json_object_set_new(made[n], "metadata", md = json_object());
			json_object_set_new(md, "name", json_string(nm));
			json_object_set_new(md, "namespace", json_string("~fleet"));
		}
		cl[n] = done ? done : made[n];
		n++;
	}
	return n;
}

/* Allocates one pod's claims on node and adds what it got to taken, got
 * and (named claims) shared.  MU_OK, MU_ENOENT / MU_EINVAL with why, or
 * MU_ENOMEM.  O(allocator). */
static int pod_take(const mu_dra_view_t *v, const json_t *list, const char *job, int32_t ps,
		    int32_t p, const char *node, json_t *taken, json_t *got, json_t *shared,
		    char *why, size_t len)
{
	const json_t *cl[MU_DRA_MAX_CLAIMS];
	json_t *made[MU_DRA_MAX_CLAIMS];
	int n = pod_claims(list, job, ps, p, shared, cl, made, why, len);
	if (n < 0)
		return MU_EINVAL;
	json_t *plan = NULL;
	int rc = n ? mu_dra_allocate(v, cl, (size_t)n, node, &plan, why, len) : MU_OK;
	for (int i = 0; i < n; i++) {
		if (rc == MU_OK && made[i]) {
			json_t *st = json_object();
			json_object_set(st, "allocation",
					json_object_get(json_array_get(plan, (size_t)i), "allocation"));
			json_object_set_new(made[i], "status", st);
			json_array_append(taken, made[i]);
			json_array_append(got, made[i]);
			const json_t *e = json_array_get(list, (size_t)i); /* one entry per claim */
			const char *nm = json_string_value(json_object_get(e, "name"));
			if (nm && json_is_true(json_object_get(e, "shared")))
				json_object_set(shared, nm, made[i]);
		}
		json_decref(made[i]);
	}
	json_decref(plan);
	return rc;
}

/* What mu__fleet_dra_steer() made: the pod sets with their terms (one
 * block), and each set's node list. */
typedef struct steer {
	mu_podset_spec_t *blk;
	const char *gang[1];    /* spread: the label value, the job's name */
	size_t nlists;
	void *lists[];          /* node lists, and spread's arrays */
} steer_t;

/* Spreads pod set p's pods over the nodes it may use (spread): its pods
 * get the label muster.io/fleet-dra=NAME and a topology spread constraint
 * on kubernetes.io/hostname with maxSkew 1 over it (DoNotSchedule), in
 * arrays of their own kept in st.  MU_ENOMEM.  O(labels + constraints). */
static int spread_set(steer_t *st, mu_podset_spec_t *p)
{
	mu_label_t *l = malloc((p->nlabels + 1) * sizeof *l);
	mu_spread_spec_t *sp = malloc((p->nspread + 1) * sizeof *sp);
	mu_sel_req_t *r = malloc(sizeof *r);
	st->lists[st->nlists++] = l;
	st->lists[st->nlists++] = sp;
	st->lists[st->nlists++] = r;
	if (!l || !sp || !r)
		return MU_ENOMEM;
	if (p->nlabels)
		memcpy(l, p->labels, p->nlabels * sizeof *l);
	l[p->nlabels] = (mu_label_t){MU__DRA_GANG, st->gang[0]};
	if (p->nspread)
		memcpy(sp, p->spread, p->nspread * sizeof *sp);
	*r = (mu_sel_req_t){MU__DRA_GANG, MU_SEL_IN, st->gang, 1};
	sp[p->nspread] = (mu_spread_spec_t){.max_skew = 1, .topology_key = MU__DRA_HOSTNAME,
					    .sel = {r, 1, false}};
	p->labels = l;
	p->nlabels++;
	p->spread = sp;
	p->nspread++;
	return MU_OK;
}

/* The nodes of k where one pod of a set with claims list gets them all
 * alone (its claims allocated over the devices in use, taken), as a new
 * array of names borrowed from the engine; the last refusal in why.  NULL
 * on OOM.  O(nodes x allocator). */
static const char **alone_nodes(const mu__cluster_t *k, const json_t *list, const char *job,
				int32_t ps, const mu_dra_view_t *v, size_t *n, char *why, size_t len)
{
	int32_t nn = mu_engine_nnodes(k->eng);
	const char **out = calloc((size_t)nn + 1, sizeof *out);
	json_t *scratch = json_array(), *shared = json_object();
	*n = 0;
	snprintf(why, len, "no node has a ResourceSlice");
	for (int32_t i = 0; out && scratch && shared && i < nn; i++) {
		const char *node = mu_engine_node_name(k->eng, i);
		if (!node || mu_engine_node_find(k->eng, node) != i)
			continue; /* removed */
		char m[600];
		int x = pod_take(v, list, job, ps, 0, node, scratch, scratch, shared, m, sizeof m);
		json_array_clear(scratch);
		json_object_clear(shared);
		if (x == MU_OK)
			out[(*n)++] = node;
		else
			snprintf(why, len, "%s", m);
	}
	json_decref(scratch);
	json_decref(shared);
	return out;
}

int mu__fleet_dra_steer(mu_fleet_t *f, int32_t j, int32_t c, mu_job_spec_t *s, bool spread,
			void **mem)
{
	mu__fjob_t *fj = &f->jobs[j];
	mu__cluster_t *k = &f->clusters[c];
	*mem = NULL;
	size_t np = s->npodsets, terms = 0;
	for (size_t ps = 0; ps < np; ps++)
		terms += s->podsets[ps].naffinity ? s->podsets[ps].naffinity : 1;
	/* one block: the pod sets, their terms, each term's requirements
	 * (its own and the hostname one); the node lists apart */
	size_t reqs = terms;
	for (size_t ps = 0; ps < np; ps++)
		for (size_t t = 0; t < s->podsets[ps].naffinity; t++)
			reqs += s->podsets[ps].affinity[t].nreqs;
	steer_t *st = calloc(1, sizeof *st + np * 4 * sizeof(void *));
	json_t *taken = in_use(k);
	if (st)
		st->blk = calloc(1, np * sizeof(mu_podset_spec_t) + terms * sizeof(mu_sel_term_t) +
				 reqs * sizeof(mu_sel_req_t));
	if (st)
		st->gang[0] = s->name;
	if (!st || !st->blk || !taken) {
		mu__fleet_dra_unsteer(st);
		json_decref(taken);
		return MU_ENOMEM;
	}
	mu_podset_spec_t *pss = st->blk;
	mu_sel_term_t *tt = (mu_sel_term_t *)(void *)(pss + np);
	mu_sel_req_t *rr = (mu_sel_req_t *)(void *)(tt + terms);
	memcpy(pss, s->podsets, np * sizeof *pss);
	mu_dra_view_t v = {k->dra_slices, k->dra_classes, taken, k->dra_nodes, NULL};
	int rc = MU_OK;
	if (fj->dra_why) /* this try's reason only */
		json_object_del(fj->dra_why, k->name);
	for (size_t ps = 0; rc == MU_OK && ps < np; ps++) {
		const json_t *list = json_array_get(fj->spec.dra, ps);
		if (!json_array_size(list))
			continue;
		size_t n;
		char why[600];
		const char **names = alone_nodes(k, list, s->name, (int32_t)ps, &v, &n, why, sizeof why);
		if (!names) {
			rc = MU_ENOMEM;
			break;
		}
		st->lists[st->nlists++] = names;
		if (!n) {
			char m[700];
			snprintf(m, sizeof m, "pod set %zu: no node can allocate its claims: %s", ps, why);
			note_why(fj, k, m);
		}
		mu_podset_spec_t *p = &pss[ps];
		size_t nt = p->naffinity ? p->naffinity : 1;
		for (size_t t = 0; t < nt; t++) {
			size_t own = p->naffinity ? p->affinity[t].nreqs : 0;
			if (own)
				memcpy(rr, p->affinity[t].reqs, own * sizeof *rr);
			rr[own] = (mu_sel_req_t){MU__DRA_HOSTNAME, MU_SEL_IN, names, n};
			tt[t] = (mu_sel_term_t){rr, own + 1};
			rr += own + 1;
		}
		p->affinity = tt;
		p->naffinity = nt;
		tt += nt;
		if (spread)
			rc = spread_set(st, p);
	}
	json_decref(taken);
	if (rc) {
		mu__fleet_dra_unsteer(st);
		return rc;
	}
	s->podsets = pss;
	*mem = st;
	return MU_OK;
}

void mu__fleet_dra_unsteer(void *mem)
{
	steer_t *st = mem;
	if (!st)
		return;
	for (size_t i = 0; i < st->nlists; i++)
		free(st->lists[i]);
	free(st->blk);
	free(st);
}

int mu__fleet_dra_take(mu_fleet_t *f, int32_t j, int32_t c, mu_id_t ej, bool must_run, bool *ok)
{
	mu__fjob_t *fj = &f->jobs[j];
	mu__cluster_t *k = &f->clusters[c];
	const mu_job_spec_t *s = fj->spec.job;
	json_t *taken = in_use(k), *got = json_array(), *shared = json_object();
	char why[700] = "", m[600] = "";
	int rc = taken && got && shared ? MU_OK : MU_ENOMEM;
	mu_dra_view_t v = {k->dra_slices, k->dra_classes, taken, k->dra_nodes, NULL};
	bool fits = true;
	for (int32_t ps = 0; rc == MU_OK && fits && ps < (int32_t)s->npodsets; ps++) {
		const json_t *list = json_array_get(fj->spec.dra, (size_t)ps);
		for (int32_t p = 0; fits && json_array_size(list) && p < s->podsets[ps].replicas; p++) {
			mu_id_t nd = mu_engine_pod_node(k->eng, ej, ps, p);
			const char *node = nd >= 0 ? mu_engine_node_name(k->eng, nd) : NULL;
			if (!node)
				continue; /* past the gang's minimum, not placed */
			int x = pod_take(&v, list, s->name, ps, p, node, taken, got, shared, m, sizeof m);
			if (x == MU_ENOMEM)
				rc = x;
			else if (x) {
				fits = false;
				snprintf(why, sizeof why, "pod %d of pod set %d on node %s: %s", p, ps,
					 node, m);
			}
		}
	}
	if (rc == MU_OK && fits) {
		char key[16];
		snprintf(key, sizeof key, "%d", j);
		if (!k->dra_mine)
			k->dra_mine = json_object();
		if (!k->dra_mine || json_object_set(k->dra_mine, key, got))
			rc = MU_ENOMEM;
		if (fj->dra_why)
			json_object_del(fj->dra_why, k->name);
	} else if (rc == MU_OK) {
		note_why(fj, k, why);
		if (must_run)
			*ok = false;
	}
	json_decref(taken);
	json_decref(got);
	json_decref(shared);
	return rc;
}

void mu__fleet_dra_drop(mu_fleet_t *f, int32_t j, int32_t c)
{
	if (!f->jobs[j].spec.dra || c < 0 || c >= f->nclusters || !f->clusters[c].dra_mine)
		return;
	char key[16];
	snprintf(key, sizeof key, "%d", j);
	json_object_del(f->clusters[c].dra_mine, key);
}

const char *mu__fleet_dra_why(const mu_fleet_t *f, int32_t j, int32_t c)
{
	const mu__fjob_t *fj = &f->jobs[j];
	return fj->dra_why ? json_string_value(json_object_get(fj->dra_why, f->clusters[c].name)) :
		NULL;
}

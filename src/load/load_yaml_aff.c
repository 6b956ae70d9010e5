/*
 * load_yaml_aff.c - what a pod says about other pods: pod affinity and
 * anti-affinity (required and preferred terms), topology spread
 * constraints, and preferred node affinity, read from a pod spec or a
 * Workload pod set into a mu_podset_spec_t (the engine's affinity.c
 * evaluates them).
 *
 * Fields are read as core/v1 defines them.  What muster cannot evaluate is
 * refused with the field's path, never dropped: a namespaceSelector with
 * labels (namespaces' labels are not known to the engine) and
 * matchFields.
 */
#include <stdio.h>
#include <string.h>

#include "load/load_yaml.h"

#define AFF_MAX_TERMS 16 /* terms of each kind (the engine's bound) */

/* Reads a labelSelector at n (NULL: absent, which matches no pod). */
static int pod_sel(mu__yload_t *L, const mu__ynode_t *n, mu_pod_sel_t *s)
{
	const mu__ynode_t *ml, *me;
	int rc;
	if (!n) {
		s->absent = true;
		return MU_OK;
	}
	if ((rc = mu__y_want_map(L, n)) ||
	    (rc = mu__y_map_at(L, n, "matchLabels", false, &ml)) ||
	    (rc = mu__y_seq_at(L, n, "matchExpressions", false, &me)))
		return rc;
	size_t cap = (ml ? ml->n : 0) + (me ? me->n : 0);
	if (!(s->reqs = mu__y_alloc(L, cap ? cap : 1, sizeof *s->reqs)))
		return mu__y_oom(L);
	for (const mu__ynode_t *c = ml ? ml->head : NULL; c; c = c->next) {
		mu_sel_req_t *r = &s->reqs[s->nreqs++];
		if (!*c->key)
			return mu__y_err(L, c, NULL, MU_EPARSE, "a label key must not be empty");
		if (!(r->key = mu_arena_strdup(&L->into->arena, c->key)) ||
		    !(r->values = mu__y_alloc(L, 1, sizeof *r->values)))
			return mu__y_oom(L);
		if ((rc = mu__y_str(L, c, &r->values[0])))
			return rc;
		r->nvalues = 1;
		r->op = MU_SEL_IN;
	}
	for (const mu__ynode_t *c = me ? me->head : NULL; c; c = c->next)
		if ((rc = mu__y_sel_req(L, c, false, &s->reqs[s->nreqs++])))
			return rc;
	return MU_OK;
}

/* Reads one PodAffinityTerm at n. */
static int pod_term(mu__yload_t *L, const mu__ynode_t *n, bool anti, int32_t weight,
		    mu_pod_term_t *t)
{
	const mu__ynode_t *nss;
	int rc;
	t->anti = anti;
	t->weight = weight;
	if ((rc = mu__y_want_map(L, n)) ||
	    (rc = pod_sel(L, mu__y_get(n, "labelSelector"), &t->sel)) ||
	    (rc = mu__y_strs_at(L, n, "namespaces", false, &t->namespaces, &t->nnamespaces)) ||
	    (rc = mu__y_str_at(L, n, "topologyKey", true, &t->topology_key)) ||
	    (rc = mu__y_strs_at(L, n, "matchLabelKeys", false, &t->match_keys,
				&t->nmatch_keys)) ||
	    (rc = mu__y_strs_at(L, n, "mismatchLabelKeys", false, &t->mismatch_keys,
				&t->nmismatch_keys)) ||
	    (rc = mu__y_map_at(L, n, "namespaceSelector", false, &nss)))
		return rc;
	if (!*t->topology_key)
		return mu__y_err(L, n, "topologyKey", MU_EINVAL, "must not be empty");
	if (nss && nss->n)
		return mu__y_err(L, nss, NULL, MU_EINVAL, "a namespaceSelector with "
				 "labels is not supported (muster does not know "
				 "namespaces' labels); list the namespaces, or give "
				 "{} for all");
	t->all_namespaces = nss != NULL;
	return MU_OK;
}

/* Reads the required (weighted false) or preferred terms of podAffinity
 * or podAntiAffinity at a, appending them to ps. */
static int pod_terms(mu__yload_t *L, const mu__ynode_t *a, bool anti, bool weighted,
		     mu_podset_spec_t *ps)
{
	const mu__ynode_t *seq;
	int rc = mu__y_seq_at(L, a, weighted ? "preferredDuringSchedulingIgnoredDuringExecution" :
			      "requiredDuringSchedulingIgnoredDuringExecution", false, &seq);
	if (rc || !seq)
		return rc;
	if (seq->n > AFF_MAX_TERMS)
		return mu__y_err(L, seq, NULL, MU_ELIMIT, "at most %d terms", AFF_MAX_TERMS);
	for (const mu__ynode_t *c = seq->head; c; c = c->next) {
		mu_pod_term_t *t = &ps->pod_terms[ps->npod_terms++];
		int64_t w = 0;
		const mu__ynode_t *term = c;
		if (weighted && ((rc = mu__y_want_map(L, c)) ||
				 (rc = mu__y_int_at(L, c, "weight", 1, 100, &w)) ||
				 (rc = mu__y_map_at(L, c, "podAffinityTerm", true, &term))))
			return rc;
		if (weighted && !mu__y_get(c, "weight"))
			return mu__y_err(L, c, "weight", MU_EPARSE, "required field is missing");
		if ((rc = pod_term(L, term, anti, (int32_t)w, t)))
			return rc;
	}
	return MU_OK;
}

/* Reads nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution. */
static int node_pref(mu__yload_t *L, const mu__ynode_t *na, mu_podset_spec_t *ps)
{
	const mu__ynode_t *seq;
	int rc = mu__y_seq_at(L, na, "preferredDuringSchedulingIgnoredDuringExecution",
			      false, &seq);
	if (rc || !seq)
		return rc;
	if (seq->n > AFF_MAX_TERMS)
		return mu__y_err(L, seq, NULL, MU_ELIMIT, "at most %d terms", AFF_MAX_TERMS);
	if (!(ps->node_pref = mu__y_alloc(L, seq->n ? seq->n : 1, sizeof *ps->node_pref)))
		return mu__y_oom(L);
	for (const mu__ynode_t *c = seq->head; c; c = c->next) {
		mu_pref_term_t *p = &ps->node_pref[ps->nnode_pref++];
		const mu__ynode_t *pref, *exprs;
		int64_t w = 0;
		if ((rc = mu__y_want_map(L, c)) ||
		    (rc = mu__y_int_at(L, c, "weight", 1, 100, &w)) ||
		    (rc = mu__y_map_at(L, c, "preference", true, &pref)) ||
		    (rc = mu__y_seq_at(L, pref, "matchExpressions", false, &exprs)))
			return rc;
		if (!mu__y_get(c, "weight"))
			return mu__y_err(L, c, "weight", MU_EPARSE, "required field is missing");
		if (mu__y_get(pref, "matchFields"))
			return mu__y_err(L, pref, "matchFields", MU_EINVAL, "matchFields is not "
					 "supported; use matchExpressions on node labels");
		p->weight = (int32_t)w;
		if (!exprs)
			continue; /* an empty preference matches no node */
		if (!(p->term.reqs = mu__y_alloc(L, exprs->n ? exprs->n : 1, sizeof *p->term.reqs)))
			return mu__y_oom(L);
		for (const mu__ynode_t *e = exprs->head; e; e = e->next)
			if ((rc = mu__y_sel_req(L, e, true, &p->term.reqs[p->term.nreqs++])))
				return rc;
	}
	return MU_OK;
}

/* Reads a Honor / Ignore policy at key of m into *flag (set when it is
 * `set_on`). */
static int policy(mu__yload_t *L, const mu__ynode_t *m, const char *key,
		  const char *set_on, bool *flag)
{
	const char *v = NULL;
	int rc = mu__y_str_at(L, m, key, false, &v);
	if (rc || !v)
		return rc;
	if (strcmp(v, "Honor") && strcmp(v, "Ignore"))
		return mu__y_err(L, mu__y_get(m, key), NULL, MU_EINVAL,
				 "expected Honor or Ignore, got \"%.60s\"", v);
	*flag = !strcmp(v, set_on);
	return MU_OK;
}

/* Reads one TopologySpreadConstraint. */
static int spread(mu__yload_t *L, const mu__ynode_t *c, mu_spread_spec_t *s)
{
	const char *when = NULL;
	int64_t skew = 0, md = 0;
	int rc;
	if ((rc = mu__y_want_map(L, c)) ||
	    (rc = mu__y_int_at(L, c, "maxSkew", 1, INT32_MAX, &skew)) ||
	    (rc = mu__y_str_at(L, c, "topologyKey", true, &s->topology_key)) ||
	    (rc = mu__y_str_at(L, c, "whenUnsatisfiable", true, &when)) ||
	    (rc = pod_sel(L, mu__y_get(c, "labelSelector"), &s->sel)) ||
	    (rc = mu__y_int_at(L, c, "minDomains", 1, INT32_MAX, &md)) ||
	    (rc = mu__y_strs_at(L, c, "matchLabelKeys", false, &s->match_keys,
				&s->nmatch_keys)) ||
	    (rc = policy(L, c, "nodeAffinityPolicy", "Ignore", &s->affinity_ignore)) ||
	    (rc = policy(L, c, "nodeTaintsPolicy", "Honor", &s->taints_honor)))
		return rc;
	if (!mu__y_get(c, "maxSkew"))
		return mu__y_err(L, c, "maxSkew", MU_EPARSE, "required field is missing");
	if (!*s->topology_key)
		return mu__y_err(L, c, "topologyKey", MU_EINVAL, "must not be empty");
	if (strcmp(when, "DoNotSchedule") && strcmp(when, "ScheduleAnyway"))
		return mu__y_err(L, mu__y_get(c, "whenUnsatisfiable"), NULL, MU_EINVAL,
				 "expected DoNotSchedule or ScheduleAnyway, got \"%.60s\"",
				 when);
	s->schedule_anyway = !strcmp(when, "ScheduleAnyway");
	if (md && s->schedule_anyway)
		return mu__y_err(L, mu__y_get(c, "minDomains"), NULL, MU_EINVAL,
				 "minDomains needs whenUnsatisfiable: DoNotSchedule");
	s->max_skew = (int32_t)skew;
	s->min_domains = (int32_t)md;
	return MU_OK;
}

int mu__y_pod_affinity(mu__yload_t *L, const mu__ynode_t *m, mu_podset_spec_t *ps)
{
	const mu__ynode_t *aff, *pa, *paa, *na, *tsc;
	int rc;
	if ((rc = mu__y_map_at(L, m, "affinity", false, &aff)) ||
	    (rc = mu__y_map_at(L, aff, "podAffinity", false, &pa)) ||
	    (rc = mu__y_map_at(L, aff, "podAntiAffinity", false, &paa)) ||
	    (rc = mu__y_map_at(L, aff, "nodeAffinity", false, &na)) ||
	    (rc = mu__y_seq_at(L, m, "topologySpreadConstraints", false, &tsc)))
		return rc;
	/* room for the terms only when there may be some: 4 x AFF_MAX_TERMS
	 * terms are kilobytes, which every pod shape the daemon keeps (one
	 * per gang) held for nothing */
	if ((pa || paa) && !(ps->pod_terms = mu__y_alloc(L, 4 * AFF_MAX_TERMS, sizeof *ps->pod_terms)))
		return mu__y_oom(L);
	for (int k = 0; k < 4 && (pa || paa); k++)
		if ((rc = pod_terms(L, k < 2 ? pa : paa, k >= 2, k & 1, ps)))
			return rc;
	if ((rc = node_pref(L, na, ps)) || !tsc)
		return rc;
	if (tsc->n > AFF_MAX_TERMS)
		return mu__y_err(L, tsc, NULL, MU_ELIMIT, "at most %d constraints",
				 AFF_MAX_TERMS);
	if (!(ps->spread = mu__y_alloc(L, tsc->n ? tsc->n : 1, sizeof *ps->spread)))
		return mu__y_oom(L);
	for (const mu__ynode_t *c = tsc->head; c; c = c->next)
		if ((rc = spread(L, c, &ps->spread[ps->nspread++])))
			return rc;
	return MU_OK;
}

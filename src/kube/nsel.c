/*
 * nsel.c - namespaceSelector in pod affinity terms, from the Namespaces'
 * labels.
 *
 * kube-scheduler's InterPodAffinity counts, for a term, the pods of the
 * namespaces it lists (`namespaces`) together with the namespaces whose
 * labels its `namespaceSelector` matches (an empty selector: every
 * namespace; neither: the pod's own).  The engine knows namespaces by name
 * only, so the daemon watches Namespace objects (their labels, in
 * d->nss) and rewrites a pod's terms before its shape is read: a
 * namespaceSelector with labels becomes the list of the namespaces it
 * matches now, joined to `namespaces`; a term that then names none
 * matches no pod, as in kube-scheduler (the list holds one name no
 * namespace can have, "muster.io/none").  An empty selector is left to
 * the loader (every namespace).  events.c re-reads the pods that have
 * such terms (p->nsobj) when a Namespace changes.
 *
 * Pure rewriting on the main loop: O(terms x namespaces) per pod.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/daemon_int.h"
#include "muster/jpath.h"

/* Whether selector sel has labels to match (not absent, not {}). */
static bool has_labels(const json_t *sel)
{
	return json_object_size(json_object_get(sel, "matchLabels")) > 0 ||
	       json_array_size(json_object_get(sel, "matchExpressions")) > 0;
}

/* Calls fn on each pod affinity term of pod (required and preferred, of
 * affinity and anti-affinity); stops when fn returns true. */
static bool each_term(json_t *pod, bool (*fn)(void *arg, json_t *term), void *arg)
{
	static const char *const kinds[] = {"podAffinity", "podAntiAffinity"};
	json_t *aff = mu__kj(pod, "spec.affinity");
	for (int k = 0; k < 2; k++) {
		json_t *a = json_object_get(aff, kinds[k]);
		size_t i;
		json_t *t;
		json_array_foreach(json_object_get(a, "requiredDuringSchedulingIgnoredDuringExecution"), i, t)
			if (fn(arg, t))
				return true;
		json_array_foreach(json_object_get(a, "preferredDuringSchedulingIgnoredDuringExecution"), i, t)
			if (fn(arg, json_object_get(t, "podAffinityTerm")))
				return true;
	}
	return false;
}

static bool term_wants(void *arg, json_t *term)
{
	(void)arg;
	return has_labels(json_object_get(term, "namespaceSelector"));
}

bool mu__kd_nssel_wants(const json_t *pod)
{
	return each_term((json_t *)pod, term_wants, NULL);
}

typedef struct rw {
	const mu__kd_t *d;
} rw_t;

/* Rewrites one term: its namespaceSelector (with labels) joins the
 * namespaces it matches now to `namespaces`. */
static bool term_rewrite(void *arg, json_t *term)
{
	const rw_t *c = arg;
	json_t *sel = json_object_get(term, "namespaceSelector");
	if (!has_labels(sel))
		return false;
	json_t *names = json_object_get(term, "namespaces");
	json_t *out = json_is_array(names) ? json_deep_copy(names) : json_array();
	if (!out)
		return false;
	for (size_t i = 0; i < c->d->nss.cap; i++)
		for (mu__kment_t *e = c->d->nss.tab[i]; e; e = e->next)
			if (mu_label_selector_match(sel, mu__kj(e->val, "metadata.labels")))
				json_array_append_new(out, json_string(e->key));
	if (json_array_size(out) == 0)
		json_array_append_new(out, json_string("muster.io/none"));
	json_object_set_new(term, "namespaces", out);
	json_object_del(term, "namespaceSelector");
	return false;
}

json_t *mu__kd_nssel_pin(const mu__kd_t *d, const json_t *pod)
{
	json_t *copy = json_deep_copy(pod);
	if (!copy)
		return NULL;
	rw_t c = {d};
	each_term(copy, term_rewrite, &c);
	return copy;
}

void mu__kd_ns_event(mu__kd_t *d, json_t *obj, bool deleted)
{
	const char *name = mu__kjs(obj, "metadata.name");
	if (!name)
		return;
	json_t *old = mu__kmap_del(&d->nss, name);
	json_t *labels = mu__kj(obj, "metadata.labels");
	bool same = old && !deleted && json_equal(mu__kj(old, "metadata.labels") ? mu__kj(old, "metadata.labels")
										  : json_null(),
						  labels ? labels : json_null());
	json_decref(old);
	if (!deleted) {
		/* only the name and labels; the map's key lives in the copy */
		json_t *mine = json_pack("{s:{s:s,s:O?}}", "metadata", "name", name, "labels", labels);
		if (mine && mu__kmap_put(&d->nss, mu__kjs(mine, "metadata.name"), mine))
			json_decref(mine);
	}
	if (!same)
		d->nss_gen++;
}

static void ns_free_cb(void *arg, void *val)
{
	(void)arg;
	json_decref(val);
}

void mu__kd_ns_release(mu__kd_t *d)
{
	mu__kmap_each(&d->nss, ns_free_cb, NULL);
	mu__kmap_release(&d->nss);
}

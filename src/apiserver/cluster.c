/*
 * cluster.c - the Cluster kind of the multi-cluster hub
 * (clusters.muster.io/v1alpha1, cluster-scoped; docs/dispatch.md): what
 * `muster up` accepts as one.  A Cluster names a worker cluster the hub
 * may send jobs to: its tier, how the hub reaches it (push: through the
 * kubeconfig in a Secret; pull: an agent in the worker calls the hub) and
 * its price per GPU-hour.  Its status (state, GPUs, free GPUs, running and
 * queued jobs) is the hub's to write.  The columns of `kubectl get
 * clusters` are in resources.c with the others.
 */
#include <string.h>

#include "apiserver/apiserver_int.h"

#define REQ "FieldValueRequired"
#define INV "FieldValueInvalid"
#define NOTSUP "FieldValueNotSupported"

/* Whether s is one of the NULL-terminated words. */
static bool one_of(const char *s, const char *const *words)
{
	for (; s && *words; words++)
		if (!strcmp(s, *words))
			return true;
	return false;
}

/* The Secret a push-mode Cluster names: {name, namespace?}. */
static void validate_secret_ref(const json_t *ref, mu__verr_t *e)
{
	const char *name = json_string_value(json_object_get(ref, "name"));
	const json_t *ns = json_object_get(ref, "namespace");
	if (!json_is_object(ref) || !name || !*name)
		mu__verr_add(e, "spec.kubeconfigSecret.name", REQ,
			     "Required value: push mode needs the Secret holding the "
			     "worker's kubeconfig (key \"kubeconfig\")");
	else if (strlen(name) > 253)
		mu__verr_add(e, "spec.kubeconfigSecret.name", INV, "must be no more than 253 characters");
	if (ns && !json_is_string(ns))
		mu__verr_add(e, "spec.kubeconfigSecret.namespace", INV, "must be a string");
}

void mu__validate_cluster(const json_t *obj, const json_t *old, mu__verr_t *e)
{
	(void)old;
	static const char *const tiers[] = {"private", "edge", "public", NULL};
	static const char *const modes[] = {"push", "pull", NULL};
	const json_t *spec = json_object_get(obj, "spec");
	if (!json_is_object(spec)) {
		mu__verr_add(e, "spec", REQ, "Required value: tier and mode");
		return;
	}
	const json_t *tier = json_object_get(spec, "tier");
	if (!tier)
		mu__verr_add(e, "spec.tier", REQ, "Required value: private, edge or public");
	else if (!one_of(json_string_value(tier), tiers))
		mu__verr_add(e, "spec.tier", NOTSUP,
			     "Unsupported value: supported values: \"private\", \"edge\", \"public\"");
	const json_t *mode = json_object_get(spec, "mode");
	const char *m = mode ? json_string_value(mode) : "push";
	if (!one_of(m, modes))
		mu__verr_add(e, "spec.mode", NOTSUP,
			     "Unsupported value: supported values: \"push\", \"pull\"");
	else if (!strcmp(m, "push"))
		validate_secret_ref(json_object_get(spec, "kubeconfigSecret"), e);
	const json_t *cost = json_object_get(spec, "costPerGPUHour");
	if (cost && (!json_is_number(cost) || json_number_value(cost) < 0))
		mu__verr_add(e, "spec.costPerGPUHour", INV, "must be a number >= 0");
}

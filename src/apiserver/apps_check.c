/*
 * apps_check.c - what kube-apiserver checks and defaults of apps/v1
 * Deployments, ReplicaSets and StatefulSets, and their table rows
 * (kubectl's printDeployment, printReplicaSet, printStatefulSet).  Apart
 * from apps.c (their scale subresource) so that the type registry, which
 * names these, does not call into what writes to the store.
 *
 *   - defaults (pkg/apis/apps/v1/defaults.go): spec.replicas 1; a
 *     Deployment's strategy (RollingUpdate, 25% / 25%),
 *     revisionHistoryLimit 10 and progressDeadlineSeconds 600; a
 *     StatefulSet's podManagementPolicy OrderedReady, updateStrategy
 *     RollingUpdate with partition 0, revisionHistoryLimit 10 and
 *     persistentVolumeClaimRetentionPolicy Retain / Retain; the pod
 *     template's spec as a pod's (SetObjectDefaults_Deployment... call
 *     SetDefaults_PodSpec: restartPolicy Always, dnsPolicy, schedulerName,
 *     terminationGracePeriodSeconds, each container's imagePullPolicy and
 *     terminationMessagePath);
 *   - validation (pkg/apis/apps/validation): replicas not negative, a
 *     selector that is present, not empty, matched by the template's labels,
 *     and (apps/v1) immutable; the template as ValidatePodTemplateSpec
 *     (containers, names, images, quantities...) with restartPolicy Always
 *     only and no activeDeadlineSeconds (mu__validate_pod_template).
 * Each function's work is bounded by the object's size.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/api_int.h"
#include "muster/jpath.h"

static const char *nz(const char *s)
{
	return s ? s : "";
}

/* --- defaults and validation ------------------------------------------- */

static void set_default(json_t *o, const char *path, json_t *v)
{
	if (!mu__jget(o, path))
		mu__jset(o, path, v);
	else
		json_decref(v);
}

void mu__defaults_apps(json_t *o)
{
	const char *kind = nz(mu__jstr(o, "kind"));
	set_default(o, "spec.replicas", json_integer(1));
	mu__defaults_pod_spec(mu__jget(o, "spec.template.spec"));
	if (!strcmp(kind, "Deployment")) {
		set_default(o, "spec.strategy.type", json_string("RollingUpdate"));
		if (!strcmp(nz(mu__jstr(o, "spec.strategy.type")), "RollingUpdate")) {
			set_default(o, "spec.strategy.rollingUpdate.maxUnavailable", json_string("25%"));
			set_default(o, "spec.strategy.rollingUpdate.maxSurge", json_string("25%"));
		}
		set_default(o, "spec.revisionHistoryLimit", json_integer(10));
		set_default(o, "spec.progressDeadlineSeconds", json_integer(600));
	} else if (!strcmp(kind, "StatefulSet")) {
		set_default(o, "spec.podManagementPolicy", json_string("OrderedReady"));
		set_default(o, "spec.updateStrategy.type", json_string("RollingUpdate"));
		if (!strcmp(nz(mu__jstr(o, "spec.updateStrategy.type")), "RollingUpdate"))
			set_default(o, "spec.updateStrategy.rollingUpdate.partition", json_integer(0));
		set_default(o, "spec.revisionHistoryLimit", json_integer(10));
		set_default(o, "spec.persistentVolumeClaimRetentionPolicy.whenDeleted", json_string("Retain"));
		set_default(o, "spec.persistentVolumeClaimRetentionPolicy.whenScaled", json_string("Retain"));
	}
}

/* Go's %#v of a map[string]string (keys sorted), as kube's messages print
 * the template's labels. */
static void go_map(const json_t *m, char *out, size_t cap)
{
	const char *keys[64];
	size_t n = 0, len = 0;
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)m, k, v)
		if (n < 64)
			keys[n++] = k;
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && strcmp(keys[j - 1], keys[j]) > 0; j--) {
			const char *t = keys[j];
			keys[j] = keys[j - 1];
			keys[j - 1] = t;
		}
	len = (size_t)snprintf(out, cap, "map[string]string{");
	for (size_t i = 0; i < n && len < cap; i++)
		len += (size_t)snprintf(out + len, cap - len, "%s\"%.100s\":\"%.100s\"", i ? ", " : "", keys[i],
					nz(json_string_value(json_object_get(m, keys[i]))));
	if (len < cap)
		snprintf(out + len, cap - len, "}");
}

void mu__validate_apps(const json_t *obj, const json_t *old, mu__verr_t *e)
{
	const json_t *r = mu__jget(obj, "spec.replicas");
	if (json_is_integer(r) && json_integer_value(r) < 0)
		mu__verr_add(e, "spec.replicas", "FieldValueInvalid",
			     "Invalid value: %lld: must be greater than or equal to 0", (long long)json_integer_value(r));
	const json_t *sel = mu__jget(obj, "spec.selector");
	const char *kind = nz(mu__jstr(obj, "kind"));
	char lower[32];
	snprintf(lower, sizeof lower, "%s", !strcmp(kind, "ReplicaSet") ? "replicaset"
					    : !strcmp(kind, "StatefulSet") ? "statefulset" : "deployment");
	if (!json_is_object(sel)) {
		mu__verr_add(e, "spec.selector", "FieldValueRequired", "Required value");
		return;
	}
	if (!json_object_size(json_object_get(sel, "matchLabels")) &&
	    !json_array_size(json_object_get(sel, "matchExpressions"))) {
		mu__verr_add(e, "spec.selector", "FieldValueInvalid", "Invalid value: \"{}\": empty selector is invalid "
			     "for %s", lower);
		return;
	}
	const json_t *labels = mu__jget(obj, "spec.template.metadata.labels");
	if (!mu_label_selector_match(sel, labels)) {
		char m[1200];
		go_map(labels, m, sizeof m);
		mu__verr_add(e, "spec.template.metadata.labels", "FieldValueInvalid",
			     "Invalid value: %s: `selector` does not match template `labels`", m);
	}
	mu__validate_pod_template(obj, !strcmp(kind, "StatefulSet") ? "StatefulSet" : "ReplicaSet", e);
	const json_t *osel = old ? mu__jget(old, "spec.selector") : NULL;
	if (osel && !json_equal(osel, sel))
		mu__verr_add(e, "spec.selector", "FieldValueInvalid", "Invalid value: \"(changed)\": field is immutable");
}

/* --- table rows (kubectl's printDeployment, printReplicaSet,
 * printStatefulSet) ------------------------------------------------------ */

static void cell_i(json_t *cells, const json_t *o, const char *path)
{
	json_array_append_new(cells, json_integer(json_integer_value(mu__jget(o, path))));
}

static void cell_age(json_t *cells, const json_t *o, int64_t now)
{
	char age[32] = "<unknown>";
	int64_t t = mu__parse_rfc3339(mu__jstr(o, "metadata.creationTimestamp"));
	if (t >= 0)
		mu__age(now - t, age, sizeof age);
	json_array_append_new(cells, json_string(age));
}

static void cell_ready(json_t *cells, const json_t *o)
{
	char ready[48];
	snprintf(ready, sizeof ready, "%lld/%lld", (long long)json_integer_value(mu__jget(o, "status.readyReplicas")),
		 (long long)json_integer_value(mu__jget(o, "spec.replicas")));
	json_array_append_new(cells, json_string(ready));
}

void mu__row_deployment(const json_t *o, int64_t now, json_t *cells)
{
	json_array_append_new(cells, json_string(nz(mu__jstr(o, "metadata.name"))));
	cell_ready(cells, o);
	cell_i(cells, o, "status.updatedReplicas");
	cell_i(cells, o, "status.availableReplicas");
	cell_age(cells, o, now);
}

void mu__row_replicaset(const json_t *o, int64_t now, json_t *cells)
{
	json_array_append_new(cells, json_string(nz(mu__jstr(o, "metadata.name"))));
	cell_i(cells, o, "spec.replicas");
	cell_i(cells, o, "status.replicas");
	cell_i(cells, o, "status.readyReplicas");
	cell_age(cells, o, now);
}

void mu__row_statefulset(const json_t *o, int64_t now, json_t *cells)
{
	json_array_append_new(cells, json_string(nz(mu__jstr(o, "metadata.name"))));
	cell_ready(cells, o);
	cell_age(cells, o, now);
}

/*
 * dra.c - the resource.k8s.io kinds that Dynamic Resource Allocation
 * needs, as Kubernetes 1.32 serves them (v1beta1; kubectl 1.32 speaks
 * it): ResourceSlice and DeviceClass (cluster-scoped), ResourceClaim (with
 * its status, which the scheduler writes) and ResourceClaimTemplate; and
 * DeviceTaintRule (v1alpha3, cluster-scoped, as 1.33 serves it with the
 * DRADeviceTaints feature), whose taints the scheduler's allocator adds.
 *
 * This file holds their table rows (the columns `kubectl get` prints) and
 * the subset of kube-apiserver's validation that catches a malformed
 * object early: the required fields and their one-of rules, names of
 * requests, and an immutable claim spec.  CEL selectors are stored as
 * given (kube-apiserver compiles them; muster's scheduler says why it
 * refuses one it does not understand, docs/kubernetes.md).  A device
 * taint written without timeAdded gets it, as kube-apiserver adds it (the
 * field's documentation: "Added automatically during create or update if
 * not set"); on update an unchanged taint keeps its old time.
 */
#include <string.h>
#include <sys/time.h>

#include "apiserver/apiserver_int.h"
#include "muster/jpath.h"
#include "muster/util.h"

#define INV "FieldValueInvalid"
#define REQ "FieldValueRequired"
#define TOOMANY "FieldValueTooMany"
#define FORB "FieldValueForbidden"
#define MAX_DEVICES 128   /* devices per ResourceSlice (resource.k8s.io) */
#define MAX_REQUESTS 32   /* requests per claim */

static void cell(json_t *cells, const char *s)
{
	json_array_append_new(cells, json_string(s && *s ? s : "<none>"));
}

static void cell_age(json_t *cells, const json_t *o, int64_t now)
{
	char buf[32] = "<unknown>";
	int64_t t = mu__parse_rfc3339(mu__jstr(o, "metadata.creationTimestamp"));
	if (t >= 0)
		mu__age(now - t, buf, sizeof buf);
	json_array_append_new(cells, json_string(buf));
}

void mu__row_resourceslice(const json_t *o, int64_t now, json_t *cells)
{
	json_array_append_new(cells, json_string(mu__jstr(o, "metadata.name") ? mu__jstr(o, "metadata.name") : ""));
	cell(cells, mu__jstr(o, "spec.nodeName"));
	cell(cells, mu__jstr(o, "spec.driver"));
	cell(cells, mu__jstr(o, "spec.pool.name"));
	cell_age(cells, o, now);
}

void mu__row_dra_named(const json_t *o, int64_t now, json_t *cells)
{
	json_array_append_new(cells, json_string(mu__jstr(o, "metadata.name") ? mu__jstr(o, "metadata.name") : ""));
	cell_age(cells, o, now);
}

/* kubectl's STATE of a claim: pending, allocated, allocated,reserved;
 * deleted when it is being deleted. */
void mu__row_resourceclaim(const json_t *o, int64_t now, json_t *cells)
{
	json_array_append_new(cells, json_string(mu__jstr(o, "metadata.name") ? mu__jstr(o, "metadata.name") : ""));
	bool alloc = mu__jget(o, "status.allocation") != NULL;
	bool resv = json_array_size(mu__jget(o, "status.reservedFor")) > 0;
	const char *st = alloc && resv ? "allocated,reserved" : alloc ? "allocated" : "pending";
	if (mu__jget(o, "metadata.deletionTimestamp"))
		st = "deleted";
	json_array_append_new(cells, json_string(st));
	cell_age(cells, o, now);
}

void mu__validate_resourceslice(const json_t *o, const json_t *old, mu__verr_t *e)
{
	(void)old;
	const json_t *spec = json_object_get(o, "spec");
	if (!mu__jstr(spec, "driver") || !*mu__jstr(spec, "driver"))
		mu__verr_add(e, "spec.driver", REQ, "Required value");
	if (!mu__jstr(spec, "pool.name") || !*mu__jstr(spec, "pool.name"))
		mu__verr_add(e, "spec.pool.name", REQ, "Required value");
	const json_t *cnt = mu__jget(spec, "pool.resourceSliceCount");
	if (!json_is_integer(cnt) || json_integer_value(cnt) < 1)
		mu__verr_add(e, "spec.pool.resourceSliceCount", INV, "Invalid value: must be greater than zero");
	int where = (mu__jstr(spec, "nodeName") && *mu__jstr(spec, "nodeName")) +
		    (json_object_get(spec, "nodeSelector") != NULL) +
		    json_is_true(json_object_get(spec, "allNodes"));
	if (where != 1)
		mu__verr_add(e, "spec", where ? INV : REQ, "%s: exactly one of `nodeName`, `nodeSelector`, "
			     "`allNodes`, `perDeviceNodeSelection` is required",
			     where ? "Invalid value: {\"nodeName\",\"nodeSelector\",\"allNodes\"}" : "Required value");
	/* kube's DRA validation: one term, so that the selectors of the slices
	 * an allocation draws from merge into one */
	const json_t *sel = json_object_get(spec, "nodeSelector");
	if (sel && json_array_size(json_object_get(sel, "nodeSelectorTerms")) != 1)
		mu__verr_add(e, "spec.nodeSelector.nodeSelectorTerms", INV,
			     "Invalid value: must have exactly one node selector term");
	const json_t *devs = json_object_get(spec, "devices");
	if (json_array_size(devs) > MAX_DEVICES)
		mu__verr_add(e, "spec.devices", TOOMANY, "Too many: %zu: must have at most %d items",
			     json_array_size(devs), MAX_DEVICES);
	size_t i;
	json_t *d;
	json_array_foreach(devs, i, d) {
		const char *n = mu__jstr(d, "name");
		char f[64];
		snprintf(f, sizeof f, "spec.devices[%zu].name", i);
		if (!n || !*n)
			mu__verr_add(e, f, REQ, "Required value");
		else if (!mu__valid_dns_label(n))
			mu__verr_add(e, f, INV, "Invalid value: \"%.63s\": a lowercase RFC 1123 label", n);
	}
}

void mu__validate_deviceclass(const json_t *o, const json_t *old, mu__verr_t *e)
{
	(void)old;
	size_t i;
	json_t *s;
	json_array_foreach(mu__jget(o, "spec.selectors"), i, s) {
		const char *x = mu__jstr(s, "cel.expression");
		if (!x || !*x) {
			char f[64];
			snprintf(f, sizeof f, "spec.selectors[%zu].cel.expression", i);
			mu__verr_add(e, f, REQ, "Required value");
		}
	}
}

/* A DeviceTaintRule (v1alpha3): spec.taint with a key and the effect
 * NoSchedule or NoExecute, as kube-apiserver validates it; a selector's
 * CEL expressions must be given (the scheduler compiles them). */
void mu__validate_devicetaintrule(const json_t *o, const json_t *old, mu__verr_t *e)
{
	(void)old;
	const char *key = mu__jstr(o, "spec.taint.key"), *eff = mu__jstr(o, "spec.taint.effect");
	if (!key || !*key)
		mu__verr_add(e, "spec.taint.key", REQ, "Required value");
	if (!eff || !*eff)
		mu__verr_add(e, "spec.taint.effect", REQ, "Required value");
	else if (strcmp(eff, "NoSchedule") && strcmp(eff, "NoExecute"))
		mu__verr_add(e, "spec.taint.effect", "FieldValueNotSupported",
			     "Unsupported value: \"%s\": supported values: \"NoSchedule\", \"NoExecute\"", eff);
	size_t i;
	json_t *s;
	json_array_foreach(mu__jget(o, "spec.deviceSelector.selectors"), i, s) {
		const char *x = mu__jstr(s, "cel.expression");
		if (!x || !*x) {
			char f[80];
			snprintf(f, sizeof f, "spec.deviceSelector.selectors[%zu].cel.expression", i);
			mu__verr_add(e, f, REQ, "Required value");
		}
	}
}

/* The device requests of a claim spec at path p (spec or spec.spec). */
static void claim_spec(const json_t *spec, const char *p, mu__verr_t *e)
{
	const json_t *reqs = mu__jget(spec, "devices.requests");
	char f[96];
	if (json_array_size(reqs) > MAX_REQUESTS) {
		snprintf(f, sizeof f, "%s.devices.requests", p);
		mu__verr_add(e, f, TOOMANY, "Too many: must have at most %d items", MAX_REQUESTS);
	}
	size_t i;
	json_t *r;
	json_array_foreach(reqs, i, r) {
		const char *n = mu__jstr(r, "name"), *cls = mu__jstr(r, "deviceClassName");
		snprintf(f, sizeof f, "%s.devices.requests[%zu].name", p, i);
		if (!n || !*n)
			mu__verr_add(e, f, REQ, "Required value");
		else if (!mu__valid_dns_label(n))
			mu__verr_add(e, f, INV, "Invalid value: \"%.63s\": a lowercase RFC 1123 label", n);
		snprintf(f, sizeof f, "%s.devices.requests[%zu].deviceClassName", p, i);
		if (!json_object_get(r, "firstAvailable") && (!cls || !*cls))
			mu__verr_add(e, f, REQ, "Required value");
	}
}

void mu__validate_resourceclaim(const json_t *o, const json_t *old, mu__verr_t *e)
{
	claim_spec(json_object_get(o, "spec"), "spec", e);
	if (old && !json_equal(json_object_get(o, "spec"), json_object_get(old, "spec")))
		mu__verr_add(e, "spec", INV, "Invalid value: field is immutable");
}

void mu__validate_resourceclaimtemplate(const json_t *o, const json_t *old, mu__verr_t *e)
{
	claim_spec(mu__jget(o, "spec.spec"), "spec.spec", e);
	if (old && !json_equal(json_object_get(o, "spec"), json_object_get(old, "spec")))
		mu__verr_add(e, "spec", INV, "Invalid value: field is immutable");
}

/* The timeAdded of a taint equal to x (key, value, effect) in list old,
 * or NULL. */
static json_t *old_time(const json_t *old, const json_t *x)
{
	static const char *const f[] = {"key", "value", "effect"};
	size_t i;
	json_t *o;
	json_array_foreach(old, i, o) {
		bool same = true;
		for (int k = 0; k < 3 && same; k++) {
			const char *a = mu__jstr(o, f[k]), *b = mu__jstr(x, f[k]);
			same = (!a && !b) || (a && b && !strcmp(a, b));
		}
		if (same && json_is_string(json_object_get(o, "timeAdded")))
			return json_object_get(o, "timeAdded");
	}
	return NULL;
}

/* Stamps the taints of list taints that have no timeAdded: the time of
 * the equal taint in old, else ts. */
static void stamp(json_t *taints, const json_t *old, const char *ts)
{
	size_t i;
	json_t *x;
	json_array_foreach(taints, i, x) {
		if (!json_is_object(x) || json_object_get(x, "timeAdded"))
			continue;
		json_t *was = old_time(old, x);
		json_object_set_new(x, "timeAdded", was ? json_incref(was) : json_string(ts));
	}
}

/* The device named name in a slice's devices, or NULL. */
static const json_t *device_named(const json_t *slice, const char *name)
{
	size_t i;
	json_t *d;
	json_array_foreach(mu__jget(slice, "spec.devices"), i, d)
		if (name && mu__jstr(d, "name") && !strcmp(mu__jstr(d, "name"), name))
			return d;
	return NULL;
}

void mu__dra_taint_times(const mu__rtype_t *t, json_t *obj, const json_t *old)
{
	char ts[40];
	struct timeval tv;
	gettimeofday(&tv, NULL); /* as mu__timestamp, without a call loop through respond.c */
	mu__rfc3339_format((int64_t)tv.tv_sec * 1000000 + tv.tv_usec, false, ts, sizeof ts);
	if (!strcmp(t->kind, "DeviceTaintRule") && !strcmp(t->group, "resource.k8s.io")) {
		json_t *x = mu__jget(obj, "spec.taint");
		json_t *one = json_pack("[O]", mu__jget(old, "spec.taint") ? mu__jget(old, "spec.taint") : json_null());
		json_t *list = json_is_object(x) ? json_pack("[O]", x) : NULL;
		stamp(list, one, ts);
		json_decref(list);
		json_decref(one);
		return;
	}
	if (strcmp(t->kind, "ResourceSlice") || strcmp(t->group, "resource.k8s.io"))
		return;
	size_t i;
	json_t *d;
	json_array_foreach(mu__jget(obj, "spec.devices"), i, d)
		stamp(mu__jget(d, "basic.taints"), mu__jget(device_named(old, mu__jstr(d, "name")), "basic.taints"), ts);
}

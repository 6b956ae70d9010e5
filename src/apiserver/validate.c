/*
 * validate.c - what makes an object valid, and the defaults filled on
 * create.  Each check appends a cause (field path, StatusCause reason,
 * message) to a mu__verr_t; a request with causes is answered 422 Invalid
 * with all of them.  Rules follow Kubernetes where it matters to clients:
 * DNS names, label syntax, required fields, quantities, enumerations and
 * immutable fields.  muster Queues are checked by the same loader that
 * reads cluster files, so the rules cannot drift apart.
 *
 * Every check is bounded by the size of the object (at most the body
 * limit); nothing here allocates beyond short-lived JSON copies.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/apiserver_int.h"
#include "muster/load.h"
#include "muster/resource.h"
#include "muster/util.h"

#define REQ "FieldValueRequired"
#define INV "FieldValueInvalid"
#define DUP "FieldValueDuplicate"
#define UNS "FieldValueNotSupported"
#define FORB "FieldValueForbidden"
#define TOOLONG "FieldValueTooLong"
#define TOOMANY "FieldValueTooMany"

/* --- names and labels --------------------------------------------------- */

/* ValidatePathSegmentName: any name but "." and "..", without '/' or '%'
 * (the RBAC kinds). */
static bool valid_path_segment(const char *s)
{
	return s && *s && strcmp(s, ".") && strcmp(s, "..") && !strpbrk(s, "/%");
}

/* Checks a name (or a generateName prefix, whose trailing '-' is masked as
 * kube-apiserver's ValidateObjectMeta does) against the kind's rule. */
static void check_name(const mu__rtype_t *t, const char *field, const char *name, bool prefix, mu__verr_t *e)
{
	char buf[300];
	snprintf(buf, sizeof buf, "%s", name);
	size_t n = strlen(buf);
	if (prefix && n > 1 && buf[n - 1] == '-')
		buf[n - 1] = 'a';
	if (t->name_rule == MU__NAME_PATH) {
		if (!valid_path_segment(buf))
			mu__verr_add(e, field, INV, "Invalid value: \"%.100s\": may not be '.' or '..' and may not "
				     "contain '/' or '%%'", name);
		return;
	}
	bool label = t->name_rule == MU__NAME_LABEL;
	size_t max = label ? 63 : 253;
	if (strlen(name) > max && !prefix)
		mu__verr_add(e, field, INV, "Invalid value: \"%.100s...\": must be no more than %zu characters",
			     name, max);
	else if (label ? !mu__valid_dns_label(buf) : !mu__valid_dns_subdomain(buf))
		mu__verr_add(e, field, INV,
			     "Invalid value: \"%.100s\": a lowercase RFC 1123 %s must consist of lower case "
			     "alphanumeric characters, '-'%s, and must start and end with an alphanumeric character "
			     "(e.g. '%s', regex used for validation is '%s')",
			     name, label ? "label" : "subdomain", label ? "" : " or '.'",
			     label ? "my-name" : "example.com",
			     label ? "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
				   : "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
}

/* A label value or the name part of a key: [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?, at most 63. */
static bool valid_label_name(const char *s, size_t n, bool allow_empty)
{
	if (n == 0)
		return allow_empty;
	if (n > 63 || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
			return false;
	return true;
}

/* A qualified name: [prefix/]name with prefix a DNS subdomain. */
static bool valid_qualified(const char *k)
{
	const char *slash = strchr(k, '/');
	if (!slash)
		return valid_label_name(k, strlen(k), false);
	char prefix[254];
	size_t pl = (size_t)(slash - k);
	if (pl == 0 || pl > 253)
		return false;
	memcpy(prefix, k, pl);
	prefix[pl] = '\0';
	return mu__valid_dns_subdomain(prefix) && valid_label_name(slash + 1, strlen(slash + 1), false);
}

static void check_string_map(const json_t *m, const char *field, bool label_values, mu__verr_t *e)
{
	if (!m || json_is_null(m))
		return;
	if (!json_is_object(m)) {
		mu__verr_add(e, field, INV, "must be a map of strings");
		return;
	}
	const char *k;
	json_t *v;
	size_t total = 0;
	json_object_foreach((json_t *)m, k, v) {
		char f[128];
		snprintf(f, sizeof f, "%s[%.80s]", field, k);
		if (!valid_qualified(k))
			mu__verr_add(e, f, INV, "name part must consist of alphanumeric characters, '-', '_' or '.', "
				     "and must start and end with an alphanumeric character (with an optional DNS subdomain prefix and '/')");
		if (!json_is_string(v)) {
			mu__verr_add(e, f, INV, "must be a string");
			continue;
		}
		const char *s = json_string_value(v);
		total += strlen(k) + strlen(s);
		if (label_values && !valid_label_name(s, strlen(s), true))
			mu__verr_add(e, f, INV, "a valid label must be an empty string or consist of alphanumeric "
				     "characters, '-', '_' or '.', and must start and end with an alphanumeric character (at most 63)");
	}
	if (!label_values && total > 256 * 1024)
		mu__verr_add(e, field, TOOLONG, "may not be more than 262144 bytes");
}

void mu__validate(const mu__rtype_t *t, const json_t *obj, const json_t *old, mu__verr_t *e)
{
	const json_t *md = json_object_get(obj, "metadata");
	if (!json_is_object(md)) {
		mu__verr_add(e, "metadata", REQ, "Required value");
		return;
	}
	const char *name = json_string_value(json_object_get(md, "name"));
	const char *gen = json_string_value(json_object_get(md, "generateName"));
	if (gen && *gen)
		check_name(t, "metadata.generateName", gen, true, e);
	if (!name || !*name)
		mu__verr_add(e, "metadata.name", REQ, "Required value: name or generateName is required");
	else
		check_name(t, "metadata.name", name, false, e);
	check_string_map(json_object_get(md, "labels"), "metadata.labels", true, e);
	check_string_map(json_object_get(md, "annotations"), "metadata.annotations", false, e);
	const json_t *fin = json_object_get(md, "finalizers");
	if (fin && !json_is_null(fin) && !json_is_array(fin))
		mu__verr_add(e, "metadata.finalizers", INV, "must be a list of strings");
	size_t i;
	json_t *or;
	json_array_foreach(json_object_get(md, "ownerReferences"), i, or) {
		char f[64];
		snprintf(f, sizeof f, "metadata.ownerReferences[%zu]", i);
		if (!json_is_string(json_object_get(or, "apiVersion")) || !json_is_string(json_object_get(or, "kind")) ||
		    !json_is_string(json_object_get(or, "name")) || !json_is_string(json_object_get(or, "uid")))
			mu__verr_add(e, f, REQ, "apiVersion, kind, name and uid are required");
	}
	if (old) {
		const char *ou = mu__jstr(old, "metadata.uid"), *nu = json_string_value(json_object_get(md, "uid"));
		if (nu && ou && strcmp(nu, ou))
			mu__verr_add(e, "metadata.uid", INV, "field is immutable");
	}
	if (t->validate)
		t->validate(obj, old, e);
}

/* --- shared pieces ------------------------------------------------------ */

/* A quantity given as a string or a number; returns false if invalid. */
static bool valid_quantity(const json_t *v)
{
	int64_t q;
	char buf[64];
	if (json_is_integer(v))
		return json_integer_value(v) >= 0;
	if (json_is_real(v))
		return json_real_value(v) >= 0;
	if (!json_is_string(v))
		return false;
	snprintf(buf, sizeof buf, "%s", json_string_value(v));
	return strlen(json_string_value(v)) < sizeof buf && mu_quantity_parse(buf, 1000, &q) == MU_OK;
}

static void check_quantities(const json_t *m, const char *field, mu__verr_t *e)
{
	if (!m || json_is_null(m))
		return;
	if (!json_is_object(m)) {
		mu__verr_add(e, field, INV, "must be a map of resource names to quantities");
		return;
	}
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)m, k, v) {
		char f[160];
		snprintf(f, sizeof f, "%s[%.80s]", field, k);
		if (!valid_quantity(v))
			mu__verr_add(e, f, INV, "must be a quantity such as 500m, 2 or 64Gi, at least 0");
	}
}

/* An optional integer field in [min, max]. */
static void check_int(const json_t *o, const char *path, json_int_t min, json_int_t max, mu__verr_t *e)
{
	const json_t *v = mu__jget(o, path);
	if (!v || json_is_null(v))
		return;
	if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max)
		mu__verr_add(e, path, INV, "must be an integer from %lld to %lld", (long long)min, (long long)max);
}

static void check_containers(const json_t *ps, const char *base, bool required, mu__verr_t *e)
{
	static const char *const lists[] = {"initContainers", "containers", "ephemeralContainers"};
	const char *seen[256];
	int nseen = 0;
	for (int l = 0; l < 3; l++) {
		char field[160];
		snprintf(field, sizeof field, "%s.%s", base, lists[l]);
		const json_t *cs = json_object_get(ps, lists[l]);
		if (l == 1 && required && json_array_size(cs) == 0) {
			mu__verr_add(e, field, REQ, "Required value");
			continue;
		}
		if (cs && !json_is_null(cs) && !json_is_array(cs)) {
			mu__verr_add(e, field, INV, "must be a list");
			continue;
		}
		size_t i;
		json_t *c;
		json_array_foreach(cs, i, c) {
			char f[200];
			snprintf(f, sizeof f, "%s[%zu]", field, i);
			const char *name = json_string_value(json_object_get(c, "name"));
			char ff[220];
			snprintf(ff, sizeof ff, "%s.name", f);
			if (!name)
				mu__verr_add(e, ff, REQ, "Required value");
			else if (!mu__valid_dns_label(name))
				mu__verr_add(e, ff, INV, "Invalid value: \"%.64s\": a lowercase RFC 1123 label must "
					     "consist of lower case alphanumeric characters or '-', and must start and end "
					     "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
					     "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')", name);
			for (int k = 0; name && k < nseen; k++)
				if (!strcmp(seen[k], name))
					mu__verr_add(e, ff, DUP, "Duplicate value: \"%.64s\"", name);
			if (name && nseen < 256)
				seen[nseen++] = name;
			snprintf(ff, sizeof ff, "%s.image", f);
			const char *img = json_string_value(json_object_get(c, "image"));
			if (!img || !*img)
				mu__verr_add(e, ff, REQ, "Required value");
			snprintf(ff, sizeof ff, "%s.resources.requests", f);
			check_quantities(mu__jget(c, "resources.requests"), ff, e);
			snprintf(ff, sizeof ff, "%s.resources.limits", f);
			check_quantities(mu__jget(c, "resources.limits"), ff, e);
		}
	}
}

static bool one_of(const char *s, const char *const *set)
{
	for (; *set; set++)
		if (!strcmp(s, *set))
			return true;
	return false;
}

static void check_enum(const json_t *o, const char *path, const char *const *set, mu__verr_t *e)
{
	const json_t *v = mu__jget(o, path);
	if (!v || json_is_null(v))
		return;
	if (!json_is_string(v) || !one_of(json_string_value(v), set)) {
		char list[256] = "";
		for (const char *const *s = set; *s; s++)
			snprintf(list + strlen(list), sizeof list - strlen(list), "%s\"%s\"",
				 s == set ? "" : ", ", *s);
		if (json_is_string(v))
			mu__verr_add(e, path, UNS, "Unsupported value: \"%.100s\": supported values: %s",
				     json_string_value(v), list);
		else
			mu__verr_add(e, path, UNS, "Unsupported value: supported values: %s", list);
	}
}

static void check_tolerations(const json_t *ps, const char *base, mu__verr_t *e)
{
	static const char *const effects[] = {"NoSchedule", "PreferNoSchedule", "NoExecute", "", NULL};
	static const char *const ops[] = {"Equal", "Exists", "", NULL};
	size_t i;
	json_t *t;
	json_array_foreach(json_object_get(ps, "tolerations"), i, t) {
		char f[200];
		snprintf(f, sizeof f, "%s.tolerations[%zu].effect", base, i);
		if (json_is_string(json_object_get(t, "effect")) &&
		    !one_of(json_string_value(json_object_get(t, "effect")), effects))
			mu__verr_add(e, f, UNS, "Unsupported value: supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"");
		snprintf(f, sizeof f, "%s.tolerations[%zu].operator", base, i);
		if (json_is_string(json_object_get(t, "operator")) &&
		    !one_of(json_string_value(json_object_get(t, "operator")), ops))
			mu__verr_add(e, f, UNS, "Unsupported value: supported values: \"Equal\", \"Exists\"");
	}
}

/* --- kinds -------------------------------------------------------------- */

void mu__validate_pod(const json_t *obj, const json_t *old, mu__verr_t *e)
{
	static const char *const restart[] = {"Always", "OnFailure", "Never", NULL};
	const json_t *spec = json_object_get(obj, "spec");
	if (!json_is_object(spec)) {
		mu__verr_add(e, "spec", REQ, "Required value");
		return;
	}
	check_containers(spec, "spec", true, e);
	check_enum(obj, "spec.restartPolicy", restart, e);
	check_tolerations(spec, "spec", e);
	check_int(obj, "spec.terminationGracePeriodSeconds", 0, 1000000000, e);
	check_int(obj, "spec.activeDeadlineSeconds", 1, 1000000000, e);
	check_int(obj, "spec.priority", -2147483647 - 1, 2147483647, e);
	const char *node = mu__jstr(obj, "spec.nodeName");
	if (node && *node && !mu__valid_dns_subdomain(node))
		mu__verr_add(e, "spec.nodeName", INV, "must be a node name");
	const json_t *ann = mu__jget(obj, "metadata.annotations");
	const char *dur = json_string_value(json_object_get(ann, "muster.io/duration"));
	mu_time_t ms;
	if (dur && mu__parse_duration(dur, &ms) != MU_OK)
		mu__verr_add(e, "metadata.annotations[muster.io/duration]", INV,
			     "must be a duration such as 30s, 5m or 1h30m");
	const char *xc = json_string_value(json_object_get(ann, "muster.io/exit-code"));
	int code;
	if (xc && mu__exit_code(xc, NULL, &code) != 0)
		mu__verr_add(e, "metadata.annotations[muster.io/exit-code]", INV,
			     "must be an exit code (a 32-bit integer) or NAME=CODE pairs separated by commas");
	else if (xc && (!mu__jstr(obj, "spec.restartPolicy") || strcmp(mu__jstr(obj, "spec.restartPolicy"), "Never")))
		mu__verr_add(e, "metadata.annotations[muster.io/exit-code]", INV,
			     "needs spec.restartPolicy Never (the simulated kubelet does not restart containers)");
	mu__check_pod_spec(spec, "spec", false, e);
	if (old)
		mu__check_pod_update(spec, json_object_get(old, "spec"), e);
}

void mu__validate_node(const json_t *obj, const json_t *old, mu__verr_t *e)
{
	static const char *const effects[] = {"NoSchedule", "PreferNoSchedule", "NoExecute", NULL};
	(void)old;
	check_quantities(mu__jget(obj, "status.capacity"), "status.capacity", e);
	check_quantities(mu__jget(obj, "status.allocatable"), "status.allocatable", e);
	size_t i;
	json_t *t;
	json_array_foreach(mu__jget(obj, "spec.taints"), i, t) {
		char f[64];
		snprintf(f, sizeof f, "spec.taints[%zu].key", i);
		const char *k = json_string_value(json_object_get(t, "key"));
		if (!k || !valid_qualified(k))
			mu__verr_add(e, f, k ? INV : REQ, k ? "must be a qualified name" : "Required value");
		snprintf(f, sizeof f, "spec.taints[%zu].effect", i);
		const char *ef = json_string_value(json_object_get(t, "effect"));
		if (!ef || !one_of(ef, effects))
			mu__verr_add(e, f, ef ? UNS : REQ, "supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"");
	}
}

void mu__validate_namespace(const json_t *obj, const json_t *old, mu__verr_t *e)
{
	(void)obj;
	(void)old;
	(void)e;
}

void mu__validate_event(const json_t *obj, const json_t *old, mu__verr_t *e)
{
	static const char *const types[] = {"Normal", "Warning", NULL};
	(void)old;
	const json_t *io = json_object_get(obj, "involvedObject");
	if (!json_is_object(io)) {
		mu__verr_add(e, "involvedObject", REQ, "Required value");
		return;
	}
	const char *ins = json_string_value(json_object_get(io, "namespace"));
	const char *ns = mu__jstr(obj, "metadata.namespace");
	if (ins && *ins && ns && strcmp(ins, ns))
		mu__verr_add(e, "involvedObject.namespace", INV, "does not match event.namespace");
	check_enum(obj, "type", types, e);
	const char *r = json_string_value(json_object_get(obj, "reason"));
	if (r && strlen(r) > 128)
		mu__verr_add(e, "reason", TOOLONG, "must have at most 128 characters");
	check_int(obj, "count", 0, 2147483647, e);
}

void mu__validate_lease(const json_t *obj, const json_t *old, mu__verr_t *e)
{
	(void)old;
	check_int(obj, "spec.leaseDurationSeconds", 1, 2147483647, e);
	check_int(obj, "spec.leaseTransitions", 0, 2147483647, e);
	static const char *const times[] = {"spec.acquireTime", "spec.renewTime"};
	for (int i = 0; i < 2; i++) {
		const json_t *v = mu__jget(obj, times[i]);
		if (v && !json_is_null(v) && mu__parse_rfc3339(json_string_value(v)) < 0)
			mu__verr_add(e, times[i], INV, "must be an RFC 3339 time");
	}
}

/* What kube's ValidatePodTemplateSpec checks of spec.template (the
 * template's labels and annotations, and its pod spec as a pod's: the
 * containers with their names, images and quantities, tolerations, the
 * grace period, priority), then what the owner adds (the restart policies
 * it allows; a ReplicaSet's or StatefulSet's template may not set
 * activeDeadlineSeconds).  Causes are named from spec.template, as kube's
 * field paths are.  Bounded by the template's size. */
void mu__validate_pod_template(const json_t *obj, const char *owner, mu__verr_t *e)
{
	static const char *const always[] = {"Always", NULL};
	static const char *const job[] = {"OnFailure", "Never", NULL};
	bool is_job = !strcmp(owner, "Job");
	const json_t *md = mu__jget(obj, "spec.template.metadata");
	check_string_map(json_object_get(md, "labels"), "spec.template.metadata.labels", true, e);
	check_string_map(json_object_get(md, "annotations"), "spec.template.metadata.annotations", false, e);
	const json_t *tpl = mu__jget(obj, "spec.template.spec");
	if (!json_is_object(tpl)) {
		/* kube's template spec is a struct: absent, it has no containers */
		mu__verr_add(e, "spec.template.spec.containers", REQ, "Required value");
		return;
	}
	check_containers(tpl, "spec.template.spec", true, e);
	mu__check_pod_spec(tpl, "spec.template.spec", true, e);
	check_tolerations(tpl, "spec.template.spec", e);
	check_int(obj, "spec.template.spec.terminationGracePeriodSeconds", 0, 1000000000, e);
	check_int(obj, "spec.template.spec.priority", -2147483647 - 1, 2147483647, e);
	const char *rp = json_string_value(json_object_get(tpl, "restartPolicy"));
	if (is_job && !rp)
		mu__verr_add(e, "spec.template.spec.restartPolicy", REQ, "Required value: OnFailure or Never");
	else if (rp)
		check_enum(obj, "spec.template.spec.restartPolicy", is_job ? job : always, e);
	if (is_job) {
		check_int(obj, "spec.template.spec.activeDeadlineSeconds", 1, 1000000000, e);
	} else if (json_object_get(tpl, "activeDeadlineSeconds") &&
		   !json_is_null(json_object_get(tpl, "activeDeadlineSeconds"))) {
		/* apps/validation: ValidatePodTemplateSpecForReplicaSet (also a
		 * Deployment's) and ValidatePodTemplateSpecForStatefulSet */
		mu__verr_add(e, "spec.template.spec.activeDeadlineSeconds", INV, "Invalid value: %lld: "
			     "activeDeadlineSeconds in %s is not Supported",
			     (long long)json_integer_value(json_object_get(tpl, "activeDeadlineSeconds")),
			     !strcmp(owner, "StatefulSet") ? "StatefulSet" : "ReplicaSet");
	}
}

/* The %#v Go prints of an []int32 (kube's field.Invalid on a values
 * list: "[]int32{3, 1}"), into out.  O(the list). */
static void int32_list(const json_t *vals, char *out, size_t sz)
{
	size_t i, n = 0;
	json_t *v;
	n += (size_t)snprintf(out, sz, "[]int32{");
	json_array_foreach(vals, i, v) {
		if (n < sz)
			n += (size_t)snprintf(out + n, sz - n, "%s%lld", i ? ", " : "", (long long)json_integer_value(v));
	}
	if (n < sz)
		snprintf(out + n, sz - n, "}");
}

/* One rule's onExitCodes, as validatePodFailurePolicyRuleOnExitCodes
 * (pkg/apis/batch/validation): the operator In or NotIn, a containerName
 * of the template, 1 to 255 values, unique, ordered, no 0 with In.  path
 * is the rule's.  O(the values * log) at most (a sorted walk). */
static void check_pfp_exit_codes(const json_t *oec, const char *path, const json_t *tpl, mu__verr_t *e)
{
	static const char *const ops[] = {"In", "NotIn", NULL};
	mu__path_t f;
	const json_t *op = json_object_get(oec, "operator");
	const char *ops_s = json_string_value(op);
	mu__pathf(f, "%s.onExitCodes.operator", path);
	if (!ops_s || !*ops_s)
		mu__verr_add(e, f, REQ, "Required value: valid values: [\"In\" \"NotIn\"]");
	else if (!one_of(ops_s, ops))
		mu__verr_add(e, f, UNS, "Unsupported value: \"%.100s\": supported values: \"In\", \"NotIn\"", ops_s);
	const char *cn = json_string_value(json_object_get(oec, "containerName"));
	if (cn) {
		bool found = false;
		static const char *const lists[] = {"containers", "initContainers"};
		for (int l = 0; l < 2 && !found; l++) {
			size_t i;
			json_t *c;
			json_array_foreach(json_object_get(tpl, lists[l]), i, c) {
				const char *n = json_string_value(json_object_get(c, "name"));
				found |= n && !strcmp(n, cn);
			}
		}
		if (!found) {
			mu__pathf(f, "%s.onExitCodes.containerName", path);
			mu__verr_add(e, f, INV, "Invalid value: \"%.100s\": must be one of the container or initContainer "
				     "names in the pod template", cn);
		}
	}
	const json_t *vals = json_object_get(oec, "values");
	char list[200];
	mu__pathf(f, "%s.onExitCodes.values", path);
	if (vals && !json_is_null(vals) && !json_is_array(vals)) {
		mu__verr_add(e, f, INV, "Invalid value: must be a list of integers");
		return;
	}
	size_t n = json_array_size(vals);
	if (n == 0) {
		mu__verr_add(e, f, INV, "Invalid value: %s: at least one value is required",
			     json_is_array(vals) ? "[]int32{}" : "[]int32(nil)");
	} else if (n > 255) {
		mu__verr_add(e, f, TOOMANY, "Too many: %zu: must have at most 255 items", n);
	}
	bool ordered = true;
	for (size_t j = 0; j < n; j++) {
		const json_t *v = json_array_get(vals, j);
		mu__path_t vf;
		mu__pathf(vf, "%s.onExitCodes.values[%zu]", path, j);
		if (!json_is_integer(v) || json_integer_value(v) < -2147483647 - 1 || json_integer_value(v) > 2147483647) {
			mu__verr_add(e, vf, INV, "Invalid value: must be a 32-bit integer");
			return;
		}
		json_int_t x = json_integer_value(v);
		if (ops_s && !strcmp(ops_s, "In") && x == 0)
			mu__verr_add(e, vf, INV, "Invalid value: 0: must not be 0 for the In operator");
		for (size_t k = 0; k < j; k++)
			if (json_integer_value(json_array_get(vals, k)) == x) {
				mu__verr_add(e, vf, DUP, "Duplicate value: %lld", (long long)x);
				break;
			}
		if (j > 0 && json_integer_value(json_array_get(vals, j - 1)) > x)
			ordered = false;
	}
	if (!ordered) {
		int32_list(vals, list, sizeof list);
		mu__verr_add(e, f, INV, "Invalid value: %s: must be ordered", list);
	}
}

/* One rule's onPodConditions, as
 * validatePodFailurePolicyRuleOnPodConditions: at most 20 patterns, each
 * type a qualified name and status True, False or Unknown.  O(the
 * patterns). */
static void check_pfp_conditions(const json_t *opc, const char *path, mu__verr_t *e)
{
	static const char *const sts[] = {"False", "True", "Unknown", NULL};
	mu__path_t f;
	if (json_array_size(opc) > 20) {
		mu__pathf(f, "%s.onPodConditions", path);
		mu__verr_add(e, f, TOOMANY, "Too many: %zu: must have at most 20 items", json_array_size(opc));
	}
	size_t j;
	json_t *p;
	json_array_foreach(opc, j, p) {
		const char *ty = json_string_value(json_object_get(p, "type"));
		const char *st = json_string_value(json_object_get(p, "status"));
		mu__pathf(f, "%s.onPodConditions[%zu].type", path, j);
		if (!ty || !*ty)
			mu__verr_add(e, f, INV, "Invalid value: \"\": name part must be non-empty");
		else if (!valid_qualified(ty))
			mu__verr_add(e, f, INV, "Invalid value: \"%.100s\": name part must consist of alphanumeric "
				     "characters, '-', '_' or '.', and must start and end with an alphanumeric character "
				     "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
				     "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')", ty);
		mu__pathf(f, "%s.onPodConditions[%zu].status", path, j);
		if (!st || !*st)
			mu__verr_add(e, f, REQ, "Required value: valid values: [\"False\" \"True\" \"Unknown\"]");
		else if (!one_of(st, sts))
			mu__verr_add(e, f, UNS, "Unsupported value: \"%.100s\": supported values: \"False\", \"True\", "
				     "\"Unknown\"", st);
	}
}

/* spec.podFailurePolicy, as validatePodFailurePolicy and
 * validatePodFailurePolicyRule (pkg/apis/batch/validation, Kubernetes
 * 1.32): at most 20 rules; each an action (Count, FailJob, Ignore;
 * FailIndex only with backoffLimitPerIndex) and exactly one of
 * onExitCodes and onPodConditions; and the template's restartPolicy
 * Never.  O(the rules and their values). */
static void check_pod_failure_policy(const json_t *obj, const json_t *pfp, mu__verr_t *e)
{
	static const char *const acts[] = {"Count", "FailIndex", "FailJob", "Ignore", NULL};
	const json_t *rules = json_object_get(pfp, "rules");
	const json_t *tpl = mu__jget(obj, "spec.template.spec");
	if (!json_is_object(pfp) || (rules && !json_is_null(rules) && !json_is_array(rules))) {
		mu__verr_add(e, "spec.podFailurePolicy.rules", INV, "Invalid value: must be a list of rules");
		return;
	}
	if (json_array_size(rules) > 20)
		mu__verr_add(e, "spec.podFailurePolicy.rules", TOOMANY, "Too many: %zu: must have at most 20 items",
			     json_array_size(rules));
	size_t i;
	json_t *r;
	json_array_foreach(rules, i, r) {
		mu__path_t path, f;
		mu__pathf(path, "spec.podFailurePolicy.rules[%zu]", i);
		mu__pathf(f, "%s.action", path);
		const char *act = json_string_value(json_object_get(r, "action"));
		if (!act || !*act)
			mu__verr_add(e, f, REQ, "Required value: valid values: [\"Count\" \"FailIndex\" \"FailJob\" \"Ignore\"]");
		else if (!strcmp(act, "FailIndex")) {
			const json_t *bl = mu__jget(obj, "spec.backoffLimitPerIndex");
			if (!bl || json_is_null(bl))
				mu__verr_add(e, f, INV, "Invalid value: \"FailIndex\": requires the backoffLimitPerIndex to be set");
		} else if (!one_of(act, acts))
			mu__verr_add(e, f, UNS, "Unsupported value: \"%.100s\": supported values: \"Count\", \"FailIndex\", "
				     "\"FailJob\", \"Ignore\"", act);
		const json_t *oec = json_object_get(r, "onExitCodes");
		const json_t *opc = json_object_get(r, "onPodConditions");
		bool has_oec = oec && !json_is_null(oec), has_opc = json_array_size(opc) > 0;
		if (has_oec)
			check_pfp_exit_codes(oec, path, tpl, e);
		if (has_opc)
			check_pfp_conditions(opc, path, e);
		if (has_oec && has_opc)
			mu__verr_add(e, path, INV, "Invalid value: specifying both OnExitCodes and OnPodConditions is not supported");
		if (!has_oec && !has_opc)
			mu__verr_add(e, path, INV, "Invalid value: specifying one of OnExitCodes and OnPodConditions is required");
	}
	const char *rp = json_string_value(json_object_get(tpl, "restartPolicy"));
	if (rp && !strcmp(rp, "OnFailure"))
		mu__verr_add(e, "spec.template.spec.restartPolicy", INV,
			     "Invalid value: \"OnFailure\": only \"Never\" is supported when podFailurePolicy is specified");
}

/* A Job's optional integer field path as validateJobSpec reads it: *v
 * and true when it is set (ValidateNonnegativeField's message when it is
 * negative; not an integer: "must be an integer").  O(1). */
static bool job_int(const json_t *obj, const char *path, json_int_t *v, mu__verr_t *e)
{
	const json_t *x = mu__jget(obj, path);
	if (!x || json_is_null(x))
		return false;
	if (!json_is_integer(x) || json_integer_value(x) < -2147483647 - 1 || json_integer_value(x) > 2147483647) {
		mu__verr_add(e, path, INV, "Invalid value: must be a 32-bit integer");
		return false;
	}
	*v = json_integer_value(x);
	if (*v < 0)
		mu__verr_add(e, path, INV, "Invalid value: %lld: must be greater than or equal to 0", (long long)*v);
	return true;
}

/* spec.successPolicy of an Indexed Job of comp completions, as
 * validateSuccessPolicy and validateSuccessPolicyRule: 1 to 20 rules,
 * each with succeededIndexes (at most 64 KiB, in the intervals format,
 * below completions) or succeededCount (0 to completions, and no more
 * than the indexes it names).  O(the rules and their text). */
static void check_success_policy(const json_t *sp, json_int_t comp, mu__verr_t *e)
{
	const json_t *rules = json_object_get(sp, "rules");
	if (!json_is_object(sp) || (rules && !json_is_null(rules) && !json_is_array(rules))) {
		mu__verr_add(e, "spec.successPolicy.rules", INV, "Invalid value: must be a list of rules");
		return;
	}
	if (json_array_size(rules) == 0)
		mu__verr_add(e, "spec.successPolicy.rules", REQ,
			     "Required value: at least one rules must be specified when the successPolicy is specified");
	if (json_array_size(rules) > 20)
		mu__verr_add(e, "spec.successPolicy.rules", TOOMANY, "Too many: %zu: must have at most 20 items",
			     json_array_size(rules));
	size_t i;
	json_t *r;
	json_array_foreach(rules, i, r) {
		mu__path_t path, f;
		mu__pathf(path, "spec.successPolicy.rules[%zu]", i);
		const json_t *si = json_object_get(r, "succeededIndexes"), *sc = json_object_get(r, "succeededCount");
		bool has_si = si && !json_is_null(si), has_sc = sc && !json_is_null(sc);
		if (!has_si && !has_sc)
			mu__verr_add(e, path, REQ, "Required value: at least one of succeededCount or succeededIndexes must be specified");
		long long total = 0;
		if (has_si) {
			mu__pathf(f, "%s.succeededIndexes", path);
			const char *s = json_string_value(si);
			char why[200];
			if (!s)
				mu__verr_add(e, f, INV, "Invalid value: must be a string");
			else if (strlen(s) > 65536)
				mu__verr_add(e, f, TOOLONG, "Too long: may not be more than 65536 bytes");
			else if (mu__ivls_check(s, comp, &total, why, sizeof why) != MU_OK)
				mu__verr_add(e, f, INV, "Invalid value: \"%.100s\": error parsing succeededIndexes: %s", s, why);
		}
		if (has_sc) {
			mu__pathf(f, "%s.succeededCount", path);
			json_int_t n = json_integer_value(sc);
			if (!json_is_integer(sc))
				mu__verr_add(e, f, INV, "Invalid value: must be an integer");
			else if (n < 0)
				mu__verr_add(e, f, INV, "Invalid value: %lld: must be greater than or equal to 0", (long long)n);
			if (json_is_integer(sc)) {
				if (n > comp)
					mu__verr_add(e, f, INV, "Invalid value: %lld: must be less than or equal to %lld (the number "
						     "of specified completions)", (long long)n, (long long)comp);
				if (has_si && n > total)
					mu__verr_add(e, f, INV, "Invalid value: %lld: must be less than or equal to %lld (the number "
						     "of indexes in the specified succeededIndexes field)", (long long)n, total);
			}
		}
	}
}

/* spec.completionMode and the fields of an Indexed Job, as
 * validateJobSpec (pkg/apis/batch/validation, Kubernetes 1.32): the mode
 * NonIndexed or Indexed; backoffLimitPerIndex and maxFailedIndexes not
 * negative, maxFailedIndexes only with backoffLimitPerIndex, both only
 * for an Indexed Job; an Indexed Job's completions required, parallelism
 * and maxFailedIndexes at most 100000, maxFailedIndexes at most
 * completions, and above 100000 completions with backoffLimitPerIndex
 * maxFailedIndexes required and it and parallelism at most 10000;
 * successPolicy only for an Indexed Job, its rules checked.  O(the
 * success policy's text). */
static void check_completion_mode(const json_t *obj, mu__verr_t *e)
{
	const char *cm = mu__jstr(obj, "spec.completionMode");
	bool indexed = cm && !strcmp(cm, "Indexed");
	json_int_t bli = 0, mfi = 0, comp = 0, par = 0;
	if (cm && !indexed && strcmp(cm, "NonIndexed"))
		mu__verr_add(e, "spec.completionMode", UNS, "Unsupported value: \"%.100s\": supported values: "
			     "\"NonIndexed\", \"Indexed\"", cm);
	bool has_bli = job_int(obj, "spec.backoffLimitPerIndex", &bli, e);
	bool has_mfi = job_int(obj, "spec.maxFailedIndexes", &mfi, e);
	bool has_comp = json_is_integer(mu__jget(obj, "spec.completions"));
	bool has_par = json_is_integer(mu__jget(obj, "spec.parallelism"));
	comp = json_integer_value(mu__jget(obj, "spec.completions"));
	par = json_integer_value(mu__jget(obj, "spec.parallelism"));
	if (has_mfi && !has_bli)
		mu__verr_add(e, "spec.backoffLimitPerIndex", REQ, "Required value: when maxFailedIndexes is specified");
	if (indexed) {
		if (!has_comp)
			mu__verr_add(e, "spec.completions", REQ, "Required value: when completion mode is Indexed");
		if (has_par && par > 100000)
			mu__verr_add(e, "spec.parallelism", INV, "Invalid value: %lld: must be less than or equal to 100000 "
				     "when completion mode is Indexed", (long long)par);
		if (has_comp && has_mfi && mfi > comp)
			mu__verr_add(e, "spec.maxFailedIndexes", INV, "Invalid value: %lld: must be less than or equal to "
				     "completions", (long long)mfi);
		if (has_mfi && mfi > 100000)
			mu__verr_add(e, "spec.maxFailedIndexes", INV, "Invalid value: %lld: must be less than or equal to "
				     "100000", (long long)mfi);
		if (has_comp && comp > 100000 && has_bli) {
			if (!has_mfi)
				mu__verr_add(e, "spec.maxFailedIndexes", REQ,
					     "Required value: must be specified when completions is above 100000");
			if (has_par && par > 10000)
				mu__verr_add(e, "spec.parallelism", INV, "Invalid value: %lld: must be less than or equal to "
					     "10000 when completions are above 100000 and used with backoff limit per index",
					     (long long)par);
			if (has_mfi && mfi > 10000)
				mu__verr_add(e, "spec.maxFailedIndexes", INV, "Invalid value: %lld: must be less than or "
					     "equal to 10000 when completions are above 100000 and used with backoff limit "
					     "per index", (long long)mfi);
		}
	} else {
		if (has_bli)
			mu__verr_add(e, "spec.backoffLimitPerIndex", INV, "Invalid value: %lld: requires indexed completion mode",
				     (long long)bli);
		if (has_mfi)
			mu__verr_add(e, "spec.maxFailedIndexes", INV, "Invalid value: %lld: requires indexed completion mode",
				     (long long)mfi);
	}
	const json_t *sp = mu__jget(obj, "spec.successPolicy");
	if (sp && !json_is_null(sp) && !indexed)
		mu__verr_add(e, "spec.successPolicy", INV, "Invalid value: requires indexed completion mode");
	else if (sp && !json_is_null(sp) && has_comp)
		check_success_policy(sp, comp, e);
}

/* The fields of a Job's spec that an update may not change
 * (ValidateJobSpecUpdate): completionMode, podFailurePolicy,
 * backoffLimitPerIndex, managedBy and successPolicy; completions only for
 * an Indexed Job, and then only to the new parallelism (validateCompletions
 * with ElasticIndexedJob, on since 1.27).  O(the fields). */
static void check_job_update(const json_t *obj, const json_t *old, mu__verr_t *e)
{
	static const char *const fixed[] = {"completionMode", "podFailurePolicy", "backoffLimitPerIndex", "managedBy",
					    "successPolicy"};
	for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) {
		mu__path_t f;
		mu__pathf(f, "spec.%s", fixed[i]);
		const json_t *a = mu__jget(obj, f), *b = mu__jget(old, f);
		if (!json_equal(a ? a : json_null(), b ? b : json_null()))
			mu__verr_add(e, f, INV, "field is immutable");
	}
	const json_t *c = mu__jget(obj, "spec.completions"), *oc = mu__jget(old, "spec.completions");
	const char *cm = mu__jstr(obj, "spec.completionMode");
	if (json_equal(c ? c : json_null(), oc ? oc : json_null()))
		return;
	if (!cm || strcmp(cm, "Indexed"))
		mu__verr_add(e, "spec.completions", INV, "field is immutable");
	else if (json_is_integer(c) && !json_equal(c, mu__jget(obj, "spec.parallelism")))
		mu__verr_add(e, "spec.completions", INV, "Invalid value: %lld: can only be modified in tandem with "
			     "spec.parallelism", (long long)json_integer_value(c));
}

void mu__validate_job(const json_t *obj, const json_t *old, mu__verr_t *e)
{
	/* a write of jobs/status keeps the stored spec (mu__finish_update
	 * puts the stored tree itself back): kube's ValidateJobUpdateStatus
	 * validates the metadata and the status only, not the spec again */
	const json_t *sp = json_object_get(obj, "spec");
	if (old && sp && sp == json_object_get(old, "spec"))
		return;
	if (!json_is_object(mu__jget(obj, "spec.template.spec"))) {
		mu__verr_add(e, "spec.template.spec", REQ, "Required value");
		return;
	}
	mu__validate_pod_template(obj, "Job", e);
	check_int(obj, "spec.parallelism", 0, 1000000, e);
	check_int(obj, "spec.completions", 0, 1000000, e);
	check_int(obj, "spec.backoffLimit", 0, 2147483647, e);
	const json_t *s = mu__jget(obj, "spec.suspend");
	if (s && !json_is_null(s) && !json_is_boolean(s))
		mu__verr_add(e, "spec.suspend", INV, "must be true or false");
	/* validatePodReplacementPolicy (pkg/apis/batch/validation): with a
	 * podFailurePolicy only Failed */
	static const char *const repl[] = {"Failed", "TerminatingOrFailed", NULL};
	static const char *const repl_pfp[] = {"Failed", NULL};
	const json_t *pfp = mu__jget(obj, "spec.podFailurePolicy");
	check_completion_mode(obj, e);
	if (pfp && !json_is_null(pfp))
		check_pod_failure_policy(obj, pfp, e);
	check_enum(obj, "spec.podReplacementPolicy", pfp && !json_is_null(pfp) ? repl_pfp : repl, e);
	const json_t *sel = mu__jget(obj, "spec.selector.matchLabels");
	const json_t *labels = mu__jget(obj, "spec.template.metadata.labels");
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)sel, k, v)
		if (!json_equal(json_object_get(labels, k), v))
			mu__verr_add(e, "spec.template.metadata.labels", INV, "`selector` does not match template `labels`");
	if (old) {
		/* the stored template as decoded now (one stored before templates
		 * were defaulted compares equal to its defaulted replacement);
		 * one the same as stored is not changed, and needs neither the
		 * copy nor the defaults (every write of a Job's status or
		 * metadata: the dispatcher's two PATCHes per job) */
		const json_t *tpl = mu__jget(obj, "spec.template"), *otpl = mu__jget(old, "spec.template");
		if (!json_is_true(mu__jget(old, "spec.suspend")) && !json_equal(tpl, otpl)) {
			json_t *ot = mu__json_copy(otpl);
			mu__defaults_pod_spec(json_object_get(ot, "spec"));
			if (!json_equal(tpl, ot))
				mu__verr_add(e, "spec.template", INV, "field is immutable");
			json_decref(ot);
		}
		if (!json_equal(mu__jget(obj, "spec.selector"), mu__jget(old, "spec.selector")))
			mu__verr_add(e, "spec.selector", INV, "field is immutable");
		check_job_update(obj, old, e);
	}
}

/* Checks obj through the cluster-file loader (a JSON object is YAML): its
 * first error becomes a field error; then want() says whether the set
 * holds what the kind should make (NULL: its message). */
static void via_loader(const json_t *obj, const char *what,
		       const char *(*want)(const mu_specs_t *), mu__verr_t *e)
{
	char *text = json_dumps(obj, JSON_COMPACT);
	if (!text)
		return;
	mu_specs_t s;
	mu_diag_t d;
	mu_specs_init(&s);
	int rc = mu_load_yaml(what, text, strlen(text), &s, &d);
	const char *bad = rc == MU_OK ? want(&s) : NULL;
	if (bad)
		mu__verr_add(e, "spec", INV, "%s", bad);
	mu_specs_release(&s);
	free(text);
	if (rc == MU_OK)
		return;
	/* "what:LINE:COL: field: what" -> field and what */
	const char *p = d.msg;
	size_t wl = strlen(what);
	if (!strncmp(p, what, wl) && p[wl] == ':') {
		p += wl + 1;
		p += strspn(p, "0123456789:");
		p += *p == ' ';
	}
	const char *colon = strstr(p, ": ");
	char field[128] = "spec";
	if (colon && (size_t)(colon - p) < sizeof field && !memchr(p, ' ', (size_t)(colon - p))) {
		memcpy(field, p, (size_t)(colon - p));
		field[colon - p] = '\0';
		p = colon + 2;
	}
	mu__verr_add(e, field, INV, "%s", p);
}

static const char *want_queue(const mu_specs_t *s)
{
	return s->nqueues == 1 ? NULL : "not a queue";
}

static const char *want_pool(const mu_specs_t *s)
{
	if (s->nnodes)
		return "a NodePool here selects nodes (spec.selector.matchLabels); "
		       "spec.count makes simulated nodes only in cluster files";
	return s->npools == 1 ? NULL : "Required value: spec.selector.matchLabels";
}

void mu__validate_queue(const json_t *obj, const json_t *old, mu__verr_t *e)
{
	(void)old;
	via_loader(obj, "queue", want_queue, e);
}

void mu__validate_nodepool(const json_t *obj, const json_t *old, mu__verr_t *e)
{
	(void)old;
	via_loader(obj, "nodepool", want_pool, e);
}

void mu__validate_podgroup(const json_t *obj, const json_t *old, mu__verr_t *e)
{
	(void)old;
	check_int(obj, "spec.minMember", 0, 1000000, e);
	check_int(obj, "spec.scheduleTimeoutSeconds", 0, 2147483647, e);
	check_quantities(mu__jget(obj, "spec.minResources"), "spec.minResources", e);
	const json_t *q = mu__jget(obj, "spec.queue");
	if (q && !json_is_null(q) && !json_is_string(q))
		mu__verr_add(e, "spec.queue", INV, "must be a queue name");
}

void mu__validate_topology(const json_t *obj, const json_t *old, mu__verr_t *e)
{
	(void)old;
	const json_t *lv = mu__jget(obj, "spec.levels");
	if (!json_is_array(lv) || json_array_size(lv) == 0 || json_array_size(lv) > 16) {
		mu__verr_add(e, "spec.levels", REQ, "Required value: 1 to 16 levels of {nodeLabel: KEY}");
		return;
	}
	size_t i;
	json_t *l;
	json_array_foreach(lv, i, l) {
		char f[64];
		snprintf(f, sizeof f, "spec.levels[%zu].nodeLabel", i);
		const char *k = json_string_value(json_object_get(l, "nodeLabel"));
		if (!k || !valid_qualified(k)) {
			mu__verr_add(e, f, k ? INV : REQ, "must be a label key");
			continue;
		}
		for (size_t j = 0; j < i; j++)
			if (json_equal(json_object_get(json_array_get(lv, j), "nodeLabel"),
				       json_object_get(l, "nodeLabel")))
				mu__verr_add(e, f, DUP, "Duplicate value: \"%.64s\"", k);
	}
}

void mu__validate_nrt(const json_t *obj, const json_t *old, mu__verr_t *e)
{
	(void)old;
	const json_t *zones = json_object_get(obj, "zones");
	if (zones && !json_is_array(zones)) {
		mu__verr_add(e, "zones", INV, "must be a list");
		return;
	}
	size_t i, k;
	json_t *z, *r;
	json_array_foreach(zones, i, z) {
		char f[96];
		snprintf(f, sizeof f, "zones[%zu].name", i);
		if (!json_is_string(json_object_get(z, "name")))
			mu__verr_add(e, f, REQ, "Required value");
		json_array_foreach(json_object_get(z, "resources"), k, r) {
			static const char *const q[] = {"capacity", "allocatable", "available"};
			for (int j = 0; j < 3; j++) {
				const json_t *v = json_object_get(r, q[j]);
				snprintf(f, sizeof f, "zones[%zu].resources[%zu].%s", i, k, q[j]);
				if (v && !valid_quantity(v))
					mu__verr_add(e, f, INV, "must be a quantity");
			}
		}
	}
}

/* --- defaults ----------------------------------------------------------- */

static void set_default(json_t *o, const char *path, json_t *v)
{
	if (!mu__jget(o, path))
		mu__jset(o, path, v);
	else
		json_decref(v);
}

/* QoS class as the kubelet computes it, from requests and limits. */
static const char *qos_class(const json_t *spec)
{
	bool any = false, guaranteed = true;
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(spec, "containers"), i, c) {
		const json_t *req = mu__jget(c, "resources.requests"), *lim = mu__jget(c, "resources.limits");
		if (json_object_size(req) || json_object_size(lim))
			any = true;
		static const char *const core[] = {"cpu", "memory"};
		for (int k = 0; k < 2; k++) {
			const json_t *l = json_object_get(lim, core[k]), *r = json_object_get(req, core[k]);
			if (!l || (r && !json_equal(l, r)))
				guaranteed = false;
		}
	}
	return !any ? "BestEffort" : guaranteed ? "Guaranteed" : "Burstable";
}

/* A Pod's defaults on create: its spec's (podspec.c), what kube's
 * SetDefaults_Pod adds for Pods only, the affinity terms' matchLabelKeys
 * merged as kube's pod strategy does (podspec_sched.c), priority 0
 * (before admission sets it), and the status a new pod starts with.  o is
 * borrowed and changed in place. */
void mu__defaults_pod(json_t *o)
{
	mu__defaults_pod_spec(json_object_get(o, "spec"));
	mu__defaults_pod_only(json_object_get(o, "spec"));
	mu__pod_affinity_label_keys(o); /* the pod strategy's PrepareForCreate */
	set_default(o, "spec.priority", json_integer(0));
	set_default(o, "status.phase", json_string("Pending"));
	set_default(o, "status.qosClass", json_string(qos_class(json_object_get(o, "spec"))));
}

void mu__defaults_job(json_t *o)
{
	const char *uid = mu__jstr(o, "metadata.uid");
	const char *name = mu__jstr(o, "metadata.name");
	if (!mu__jget(o, "spec.parallelism"))
		mu__jset(o, "spec.parallelism", json_integer(1));
	if (!mu__jget(o, "spec.completions") && json_integer_value(mu__jget(o, "spec.parallelism")) == 1)
		mu__jset(o, "spec.completions", json_integer(1));
	/* with backoffLimitPerIndex the global limit is off (MaxInt32) */
	const json_t *bli = mu__jget(o, "spec.backoffLimitPerIndex");
	set_default(o, "spec.backoffLimit", json_integer(bli && !json_is_null(bli) ? 2147483647 : 6));
	set_default(o, "spec.suspend", json_false());
	set_default(o, "spec.completionMode", json_string("NonIndexed"));
	/* SetDefaults_Job with JobPodReplacementPolicy (on since 1.29) */
	const json_t *pfp = mu__jget(o, "spec.podFailurePolicy");
	/* and a pattern of onPodConditions without status matches True */
	size_t ri, k;
	json_t *r, *pat;
	json_array_foreach(json_object_get(pfp, "rules"), ri, r)
		json_array_foreach(json_object_get(r, "onPodConditions"), k, pat)
			if (json_is_object(pat) && !json_object_get(pat, "status"))
				json_object_set_new(pat, "status", json_string("True"));
	set_default(o, "spec.podReplacementPolicy",
		    json_string(pfp && !json_is_null(pfp) ? "Failed" : "TerminatingOrFailed"));
	mu__defaults_pod_spec(mu__jget(o, "spec.template.spec")); /* SetObjectDefaults_Job */
	if (!uid || !name || json_is_true(mu__jget(o, "spec.manualSelector")))
		return;
	static const char *const keys[] = {"batch.kubernetes.io/controller-uid", "controller-uid",
					   "batch.kubernetes.io/job-name", "job-name"};
	for (int i = 0; i < 4; i++) {
		char path[96];
		snprintf(path, sizeof path, "spec.template.metadata.labels");
		json_t *l = mu__jget(o, path);
		if (!json_is_object(l)) {
			mu__jset(o, path, json_object());
			l = mu__jget(o, path);
		}
		if (l)
			json_object_set_new(l, keys[i], json_string(i < 2 ? uid : name));
	}
	if (!mu__jget(o, "spec.selector")) {
		json_t *ml = json_object();
		json_object_set_new(ml, "batch.kubernetes.io/controller-uid", json_string(uid));
		mu__jset(o, "spec.selector.matchLabels", ml);
	}
	set_default(o, "spec.manualSelector", json_false());
}

json_t *mu__job_owned_on_create(const json_t *o)
{
	json_t *c = json_deep_copy(o);
	if (!c || json_is_true(mu__jget(o, "spec.manualSelector")))
		return c;
	json_t *spec = json_object_get(c, "spec");
	json_object_del(spec, "selector");
	json_object_del(spec, "manualSelector");
	json_t *l = mu__jget(c, "spec.template.metadata.labels");
	static const char *const keys[] = {"batch.kubernetes.io/controller-uid", "controller-uid",
					   "batch.kubernetes.io/job-name", "job-name"};
	for (int i = 0; i < 4; i++)
		json_object_del(l, keys[i]);
	if (json_is_object(l) && !json_object_size(l))
		json_object_del(mu__jget(c, "spec.template.metadata"), "labels");
	return c;
}

void mu__defaults_namespace(json_t *o)
{
	set_default(o, "status.phase", json_string("Active"));
	json_t *f = json_array();
	json_array_append_new(f, json_string("kubernetes"));
	set_default(o, "spec.finalizers", f);
	const char *name = mu__jstr(o, "metadata.name");
	if (name) {
		if (!json_is_object(mu__jget(o, "metadata.labels")))
			mu__jset(o, "metadata.labels", json_object());
		json_object_set_new(mu__jget(o, "metadata.labels"), "kubernetes.io/metadata.name", json_string(name));
	}
}

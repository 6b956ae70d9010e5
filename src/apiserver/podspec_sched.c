/*
 * podspec_sched.c - the pod spec checks kube-apiserver makes of what tells
 * the scheduler and the node how to place and run a pod, for Pods and pod
 * templates alike (pkg/apis/core/validation/validation.go, Kubernetes
 * 1.32), each broken rule a 422 cause with kube's field path and message:
 *
 *   - spec.nodeSelector (ValidateLabels);
 *   - spec.affinity: validateNodeAffinity (ValidateNodeSelector, its
 *     terms' matchExpressions and matchFields, preferred terms' weights
 *     1-100) and validatePodAffinity / validatePodAntiAffinity (each
 *     term's labelSelector and namespaceSelector, namespaces,
 *     matchLabelKeys and mismatchLabelKeys, a required topologyKey that is
 *     a qualified name, weights 1-100);
 *   - spec.securityContext.sysctls (validateSysctls: the name's syntax,
 *     duplicates, namespaced sysctls with hostNetwork or hostIPC);
 *   - spec.dnsConfig (validatePodDNSConfig: nameservers for dnsPolicy
 *     None, at most 3 nameservers that are IPs, at most 32 searches of at
 *     most 2048 characters that are DNS subdomains, options' names);
 *   - spec.topologySpreadConstraints (validateTopologySpreadConstraints:
 *     maxSkew, topologyKey, whenUnsatisfiable, unique {topologyKey,
 *     whenUnsatisfiable}, minDomains, nodeAffinityPolicy and
 *     nodeTaintsPolicy, matchLabelKeys, labelSelector);
 *   - spec.serviceAccountName (a DNS subdomain);
 *
 * and, on a Pod's create, what kube's pod strategy does with its affinity
 * terms' matchLabelKeys and mismatchLabelKeys (mu__pod_affinity_label_keys).
 *
 * The messages are apimachinery's (IsQualifiedName, IsValidLabelValue,
 * IsDNS1123Label/Subdomain).  Nothing here keeps state; every function
 * borrows its JSON, and its work is bounded by the size of the spec.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/apiserver_int.h"

#define REQ "FieldValueRequired"
#define INV "FieldValueInvalid"
#define DUP "FieldValueDuplicate"
#define UNS "FieldValueNotSupported"
#define FORB "FieldValueForbidden"


static const char *str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static bool present(const json_t *v)
{
	return v && !json_is_null(v);
}

/* --- apimachinery's name rules ------------------------------------------ */

#define QNAME_MSG                                                                                                  \
	"must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "   \
	"character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "                    \
	"'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
#define SUBDOMAIN_MSG                                                                                              \
	"a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "  \
	"start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "           \
	"'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
#define LABEL_MSG                                                                                                  \
	"a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and " \
	"end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "         \
	"'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
#define VALUE_MSG                                                                                                  \
	"a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "   \
	"start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "   \
	"for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"

/* ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9] on s[0..n). */
static bool qname_chars(const char *s, size_t n)
{
	if (!n || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
			return false;
	return true;
}

/* ValidateLabelName (IsQualifiedName): one cause per message, as kube. */
static void label_name(mu__verr_t *e, const char *f, const char *k)
{
	const char *slash = strchr(k, '/');
	const char *name = k;
	if (slash && strchr(slash + 1, '/')) {
		mu__verr_add(e, f, INV, "Invalid value: \"%.100s\": a qualified name " QNAME_MSG
			     " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')", k);
		return;
	}
	if (slash) {
		size_t pl = (size_t)(slash - k);
		char prefix[300];
		snprintf(prefix, sizeof prefix, "%.*s", (int)(pl < 299 ? pl : 299), k);
		if (!pl)
			mu__verr_add(e, f, INV, "Invalid value: \"%.100s\": prefix part must be non-empty", k);
		else {
			if (pl > 253)
				mu__verr_add(e, f, INV, "Invalid value: \"%.100s\": prefix part must be no more than 253 "
					     "characters", k);
			if (!mu__valid_dns_subdomain(prefix))
				mu__verr_add(e, f, INV, "Invalid value: \"%.100s\": prefix part " SUBDOMAIN_MSG, k);
		}
		name = slash + 1;
	}
	size_t n = strlen(name);
	if (!n)
		mu__verr_add(e, f, INV, "Invalid value: \"%.100s\": name part must be non-empty", k);
	else if (n > 63)
		mu__verr_add(e, f, INV, "Invalid value: \"%.100s\": name part must be no more than 63 characters", k);
	if (!qname_chars(name, n))
		mu__verr_add(e, f, INV, "Invalid value: \"%.100s\": name part " QNAME_MSG, k);
}

/* IsValidLabelValue. */
static void label_value(mu__verr_t *e, const char *f, const char *v)
{
	size_t n = strlen(v);
	if (n > 63)
		mu__verr_add(e, f, INV, "Invalid value: \"%.100s\": must be no more than 63 characters", v);
	if (n && !qname_chars(v, n))
		mu__verr_add(e, f, INV, "Invalid value: \"%.100s\": " VALUE_MSG, v);
}

/* IsDNS1123Subdomain (label: IsDNS1123Label) on a value given. */
static void dns_name(mu__verr_t *e, const char *f, const char *v, bool label)
{
	size_t max = label ? 63 : 253;
	if (strlen(v) > max)
		mu__verr_add(e, f, INV, "Invalid value: \"%.100s\": must be no more than %zu characters", v, max);
	if (label ? !mu__valid_dns_label(v) : !mu__valid_dns_subdomain(v))
		mu__verr_add(e, f, INV, "Invalid value: \"%.100s\": %s", v, label ? LABEL_MSG : SUBDOMAIN_MSG);
}

/* Go's %#v of a []string, as field.Invalid prints a list. */
static void go_strings(const json_t *a, char *out, size_t cap)
{
	size_t i;
	json_t *s;
	snprintf(out, cap, "[]string{");
	json_array_foreach(a, i, s) {
		size_t l = strlen(out);
		snprintf(out + l, cap - l, "%s\"%.40s\"", i ? ", " : "", json_is_string(s) ? json_string_value(s) : "");
	}
	size_t l = strlen(out);
	snprintf(out + l, cap - l, "}");
}

/* A value in a message as Go prints an int32 or a named string (%v or
 * %#v): integers bare, strings quoted. */
static void go_value(const json_t *v, char *out, size_t cap)
{
	if (json_is_integer(v))
		snprintf(out, cap, "%lld", (long long)json_integer_value(v));
	else if (json_is_string(v))
		snprintf(out, cap, "\"%.100s\"", json_string_value(v));
	else
		snprintf(out, cap, "\"\"");
}

/* ValidateLabels: keys and values of a map, causes named by the map. */
static void labels(mu__verr_t *e, const char *f, const json_t *m)
{
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)m, k, v) {
		label_name(e, f, k);
		if (json_is_string(v))
			label_value(e, f, json_string_value(v));
	}
}

/* --- selectors ---------------------------------------------------------- */

/* ValidateLabelSelectorRequirement (node: ValidateNodeSelectorRequirement,
 * which also knows Gt and Lt; check_values: the values are label values). */
static void requirement(mu__verr_t *e, const char *rp, const json_t *r, bool node, bool check_values)
{
	const char *op = str(r, "operator");
	const json_t *vals = json_object_get(r, "values");
	size_t nv = json_array_size(vals);
	mu__path_t f;
	mu__pathf(f, "%s.values", rp);
	if (op && (!strcmp(op, "In") || !strcmp(op, "NotIn"))) {
		if (!nv)
			mu__verr_add(e, f, REQ, "Required value: must be specified when `operator` is 'In' or 'NotIn'");
	} else if (op && (!strcmp(op, "Exists") || !strcmp(op, "DoesNotExist"))) {
		if (nv)
			mu__verr_add(e, f, FORB, "Forbidden: may not be specified when `operator` is 'Exists' or "
				     "'DoesNotExist'");
	} else if (node && op && (!strcmp(op, "Gt") || !strcmp(op, "Lt"))) {
		if (nv != 1)
			mu__verr_add(e, f, REQ, "Required value: must be specified single value when `operator` is "
				     "'Lt' or 'Gt'");
	} else {
		mu__pathf(f, "%s.operator", rp);
		mu__verr_add(e, f, INV, "Invalid value: \"%.60s\": not a valid selector operator", op ? op : "");
	}
	mu__pathf(f, "%s.key", rp);
	label_name(e, f, str(r, "key") ? str(r, "key") : "");
	size_t i;
	json_t *v;
	json_array_foreach(check_values ? vals : NULL, i, v) {
		mu__pathf(f, "%s.values[%zu]", rp, i);
		if (json_is_string(v))
			label_value(e, f, json_string_value(v));
	}
}

/* ValidateLabelSelector: matchLabels and matchExpressions. */
static void label_selector(mu__verr_t *e, const char *sp, const json_t *s)
{
	if (!json_is_object(s))
		return;
	mu__path_t f;
	mu__pathf(f, "%s.matchLabels", sp);
	labels(e, f, json_object_get(s, "matchLabels"));
	size_t i;
	json_t *r;
	json_array_foreach(json_object_get(s, "matchExpressions"), i, r) {
		mu__pathf(f, "%s.matchExpressions[%zu]", sp, i);
		requirement(e, f, r, false, true);
	}
}

/* ValidateNodeFieldSelectorRequirement: metadata.name only, one value. */
static void field_requirement(mu__verr_t *e, const char *rp, const json_t *r)
{
	const char *op = str(r, "operator");
	const json_t *vals = json_object_get(r, "values");
	mu__path_t f;
	if (op && (!strcmp(op, "In") || !strcmp(op, "NotIn"))) {
		if (json_array_size(vals) != 1) {
			mu__pathf(f, "%s.values", rp);
			mu__verr_add(e, f, REQ, "Required value: must be only one value when `operator` is 'In' or "
				     "'NotIn' for node field selector");
		}
	} else {
		mu__pathf(f, "%s.operator", rp);
		mu__verr_add(e, f, INV, "Invalid value: \"%.60s\": not a valid selector operator", op ? op : "");
	}
	const char *key = str(r, "key");
	if (!key || strcmp(key, "metadata.name")) {
		mu__pathf(f, "%s.key", rp);
		mu__verr_add(e, f, INV, "Invalid value: \"%.100s\": not a valid field selector key", key ? key : "");
		return;
	}
	size_t i;
	json_t *v;
	json_array_foreach(vals, i, v) {
		mu__pathf(f, "%s.values[%zu]", rp, i);
		if (json_is_string(v))
			dns_name(e, f, json_string_value(v), false);
	}
}

/* ValidateNodeSelectorTerm. */
static void node_term(mu__verr_t *e, const char *tp, const json_t *t, bool check_values)
{
	size_t i;
	json_t *r;
	mu__path_t f;
	json_array_foreach(json_object_get(t, "matchExpressions"), i, r) {
		mu__pathf(f, "%s.matchExpressions[%zu]", tp, i);
		requirement(e, f, r, true, check_values);
	}
	json_array_foreach(json_object_get(t, "matchFields"), i, r) {
		mu__pathf(f, "%s.matchFields[%zu]", tp, i);
		field_requirement(e, f, r);
	}
}

/* A weight of a preferred term: 1 to 100. */
static void weight(mu__verr_t *e, const char *tp, const json_t *t)
{
	const json_t *w = json_object_get(t, "weight");
	json_int_t v = json_is_integer(w) ? json_integer_value(w) : 0;
	if (v <= 0 || v > 100) {
		mu__path_t f;
		mu__pathf(f, "%s.weight", tp);
		mu__verr_add(e, f, INV, "Invalid value: %lld: must be in the range 1-100", (long long)v);
	}
}

static void node_affinity(mu__verr_t *e, const char *ap, const json_t *na)
{
	mu__path_t p, f;
	const json_t *req = json_object_get(na, "requiredDuringSchedulingIgnoredDuringExecution");
	if (present(req)) {
		mu__pathf(f, "%s.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms", ap);
		const json_t *terms = json_object_get(req, "nodeSelectorTerms");
		if (!json_array_size(terms))
			mu__verr_add(e, f, REQ, "Required value: must have at least one node selector term");
		size_t i;
		json_t *t;
		json_array_foreach(terms, i, t) {
			mu__pathf(p, "%s[%zu]", f, i);
			node_term(e, p, t, true);
		}
	}
	size_t i;
	json_t *t;
	json_array_foreach(json_object_get(na, "preferredDuringSchedulingIgnoredDuringExecution"), i, t) {
		mu__pathf(p, "%s.preferredDuringSchedulingIgnoredDuringExecution[%zu]", ap, i);
		weight(e, p, t);
		/* kube allows any label value in a preferred term */
		mu__pathf(f, "%s.preference", p);
		node_term(e, f, json_object_get(t, "preference"), false);
	}
}

/* Whether string array a holds s. */
static bool has_string(const json_t *a, const char *s)
{
	size_t i;
	json_t *x;
	json_array_foreach(a, i, x)
		if (json_is_string(x) && !strcmp(json_string_value(x), s))
			return true;
	return false;
}

/* validateLabelKeys: label names, and a selector to add them to. */
static void label_keys(mu__verr_t *e, const char *f, const json_t *keys, const json_t *sel)
{
	if (!json_array_size(keys))
		return;
	if (!present(sel)) {
		mu__verr_add(e, f, FORB, "Forbidden: must not be specified when labelSelector is not set");
		return;
	}
	size_t i;
	json_t *k;
	json_array_foreach(keys, i, k) {
		mu__path_t p;
		mu__pathf(p, "%s[%zu]", f, i);
		label_name(e, p, json_is_string(k) ? json_string_value(k) : "");
	}
}

/* validateMatchLabelKeysAndMismatchLabelKeys, as kube words it (a key of
 * matchLabelKeys that a matchExpression repeats after the selector
 * already named it is named by the term's path and the key's index). */
static void match_label_keys(mu__verr_t *e, const char *tp, const json_t *t)
{
	const json_t *mk = json_object_get(t, "matchLabelKeys"), *mmk = json_object_get(t, "mismatchLabelKeys");
	const json_t *sel = json_object_get(t, "labelSelector");
	mu__path_t f;
	mu__pathf(f, "%s.matchLabelKeys", tp);
	label_keys(e, f, mk, sel);
	mu__pathf(f, "%s.mismatchLabelKeys", tp);
	label_keys(e, f, mmk, sel);
	const json_t *exprs = json_object_get(sel, "matchExpressions");
	size_t i, j;
	json_t *x, *k;
	json_array_foreach(json_is_object(sel) ? exprs : NULL, i, x) {
		const char *key = str(x, "key");
		if (!key)
			continue;
		bool before = json_object_get(json_object_get(sel, "matchLabels"), key) != NULL;
		for (j = 0; j < i && !before; j++)
			before = str(json_array_get(exprs, j), "key") && !strcmp(str(json_array_get(exprs, j), "key"), key);
		long at = -1;
		json_array_foreach(mk, j, k)
			if (json_is_string(k) && !strcmp(json_string_value(k), key))
				at = (long)j; /* the last index, as kube's map keeps */
		if (before && at >= 0) {
			mu__pathf(f, "%s[%ld]", tp, at);
			mu__verr_add(e, f, INV, "Invalid value: \"%.100s\": exists in both matchLabelKeys and labelSelector",
				     key);
		}
	}
	json_array_foreach(mk, i, k)
		if (json_is_string(k) && has_string(mmk, json_string_value(k))) {
			mu__pathf(f, "%s.matchLabelKeys[%zu]", tp, i);
			mu__verr_add(e, f, INV, "Invalid value: \"%.100s\": exists in both matchLabelKeys and "
				     "mismatchLabelKeys", json_string_value(k));
		}
}

/* validatePodAffinityTerm. */
static void pod_term(mu__verr_t *e, const char *tp, const json_t *t)
{
	mu__path_t f;
	mu__pathf(f, "%s.labelSelector", tp);
	label_selector(e, f, json_object_get(t, "labelSelector"));
	mu__pathf(f, "%s.namespaceSelector", tp);
	label_selector(e, f, json_object_get(t, "namespaceSelector"));
	size_t i;
	json_t *ns;
	mu__pathf(f, "%s.namespace", tp); /* sic: kube names the list so */
	json_array_foreach(json_object_get(t, "namespaces"), i, ns)
		if (json_is_string(ns))
			dns_name(e, f, json_string_value(ns), true);
	match_label_keys(e, tp, t);
	const char *key = str(t, "topologyKey");
	mu__pathf(f, "%s.topologyKey", tp);
	if (!key || !*key)
		mu__verr_add(e, f, REQ, "Required value: can not be empty");
	label_name(e, f, key ? key : "");
}

static void pod_affinity(mu__verr_t *e, const char *ap, const json_t *pa)
{
	mu__path_t p, f;
	size_t i;
	json_t *t;
	json_array_foreach(json_object_get(pa, "requiredDuringSchedulingIgnoredDuringExecution"), i, t) {
		mu__pathf(p, "%s.requiredDuringSchedulingIgnoredDuringExecution[%zu]", ap, i);
		pod_term(e, p, t);
	}
	json_array_foreach(json_object_get(pa, "preferredDuringSchedulingIgnoredDuringExecution"), i, t) {
		mu__pathf(p, "%s.preferredDuringSchedulingIgnoredDuringExecution[%zu]", ap, i);
		weight(e, p, t);
		mu__pathf(f, "%s.podAffinityTerm", p);
		pod_term(e, f, json_object_get(t, "podAffinityTerm"));
	}
}

/* --- sysctls, DNS config, topology spread -------------------------------- */

/* IsValidSysctlName: ([a-z0-9]([-_a-z0-9]*[a-z0-9])?[./])* then one
 * segment, at most 253 characters. */
static bool sysctl_name(const char *s)
{
	size_t n = strlen(s);
	if (!n || n > 253)
		return false;
	for (const char *p = s;;) {
		size_t l = strcspn(p, "./");
		if (!l || !isalnum((unsigned char)p[0]) || !isalnum((unsigned char)p[l - 1]))
			return false;
		for (size_t i = 0; i < l; i++)
			if (!(islower((unsigned char)p[i]) || isdigit((unsigned char)p[i]) || p[i] == '-' || p[i] == '_'))
				return false;
		if (!p[l])
			return true;
		p += l + 1;
	}
}

/* utilsysctl.GetNamespace: 'n' (network), 'i' (IPC) or 0, of the name
 * with slashes read as dots when the first separator is a slash. */
static char sysctl_ns(const char *name)
{
	char s[256];
	snprintf(s, sizeof s, "%s", name);
	size_t first = strcspn(s, "./");
	if (s[first] == '/')
		for (char *p = s; *p; p++)
			*p = *p == '/' ? '.' : *p == '.' ? '/' : *p;
	if (!strcmp(s, "kernel.sem") || !strncmp(s, "kernel.shm", 10) || !strncmp(s, "kernel.msg", 10) ||
	    !strncmp(s, "fs.mqueue.", 10))
		return 'i';
	return !strncmp(s, "net.", 4) ? 'n' : 0;
}

static void sysctls(mu__verr_t *e, const char *base, const json_t *spec)
{
	const json_t *list = json_object_get(json_object_get(spec, "securityContext"), "sysctls");
	bool hostnet = json_is_true(json_object_get(spec, "hostNetwork"));
	bool hostipc = json_is_true(json_object_get(spec, "hostIPC"));
	size_t i, j;
	json_t *s;
	json_array_foreach(list, i, s) {
		mu__path_t f;
		mu__pathf(f, "%s.securityContext.sysctls[%zu].name", base, i);
		const char *name = str(s, "name");
		if (!name || !*name) {
			mu__verr_add(e, f, REQ, "Required value");
			continue;
		}
		if (!sysctl_name(name)) {
			mu__verr_add(e, f, INV, "Invalid value: \"%.100s\": must have at most 253 characters and match "
				     "regex ^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$", name);
		} else {
			for (j = 0; j < i; j++)
				if (str(json_array_get(list, j), "name") && !strcmp(str(json_array_get(list, j), "name"), name)) {
					mu__verr_add(e, f, DUP, "Duplicate value: \"%.100s\"", name);
					break;
				}
		}
		char ns = sysctl_ns(name);
		if (hostnet && ns == 'n')
			mu__verr_add(e, f, INV, "Invalid value: \"%.100s\": may not be specified when 'hostNetwork' is "
				     "true", name);
		else if (hostipc && ns == 'i')
			mu__verr_add(e, f, INV, "Invalid value: \"%.100s\": may not be specified when 'hostIPC' is true",
				     name);
	}
}

/* netutils.ParseIPSloppy: IPv4 (leading zeros allowed) or IPv6. */
static bool ip_sloppy(const char *s)
{
	unsigned char buf[16];
	if (inet_pton(AF_INET6, s, buf) == 1)
		return true;
	int parts = 0;
	for (const char *p = s;; p++) {
		int digits = 0, v = 0;
		while (isdigit((unsigned char)*p) && digits < 4)
			v = v * 10 + (*p++ - '0'), digits++;
		if (!digits || v > 255)
			return false;
		parts++;
		if (!*p)
			return parts == 4;
		if (*p != '.' || parts == 4)
			return false;
	}
}

/* ValidateHostAliases: each ip a valid IP, each hostname a DNS-1123
 * subdomain.  kube allows them with hostNetwork (since 1.8), so that is
 * not checked.  Bounded by the aliases' size. */
static void host_aliases(mu__verr_t *e, const char *base, const json_t *list)
{
	size_t i, j;
	json_t *a, *h;
	json_array_foreach(list, i, a) {
		mu__path_t f;
		const char *ip = str(a, "ip") ? str(a, "ip") : "";
		if (!ip_sloppy(ip)) {
			mu__pathf(f, "%s.hostAliases[%zu].ip", base, i);
			mu__verr_add(e, f, INV, "Invalid value: \"%.100s\": must be a valid IP address, (e.g. 10.9.8.7 "
				     "or 2001:db8::ffff)", ip);
		}
		json_array_foreach(json_object_get(a, "hostnames"), j, h) {
			mu__pathf(f, "%s.hostAliases[%zu].hostnames[%zu]", base, i, j);
			dns_name(e, f, json_is_string(h) ? json_string_value(h) : "", false);
		}
	}
}

static void dns_config(mu__verr_t *e, const char *base, const json_t *spec)
{
	const json_t *dc = json_object_get(spec, "dnsConfig");
	const char *policy = str(spec, "dnsPolicy");
	const json_t *ns = json_object_get(dc, "nameservers");
	mu__path_t f;
	char list[400];
	if (policy && !strcmp(policy, "None")) {
		if (!present(dc)) {
			mu__pathf(f, "%s.dnsConfig", base);
			mu__verr_add(e, f, REQ, "Required value: must provide `dnsConfig` when `dnsPolicy` is None");
			return;
		}
		if (!json_array_size(ns)) {
			mu__pathf(f, "%s.dnsConfig.nameservers", base);
			mu__verr_add(e, f, REQ, "Required value: must provide at least one DNS nameserver when "
				     "`dnsPolicy` is None");
			return;
		}
	}
	if (!json_is_object(dc))
		return;
	mu__pathf(f, "%s.dnsConfig.nameservers", base);
	if (json_array_size(ns) > 3) {
		go_strings(ns, list, sizeof list);
		mu__verr_add(e, f, INV, "Invalid value: %s: must not have more than 3 nameservers", list);
	}
	size_t i;
	json_t *x;
	json_array_foreach(ns, i, x) {
		const char *ip = json_is_string(x) ? json_string_value(x) : "";
		if (!ip_sloppy(ip)) {
			mu__pathf(f, "%s.dnsConfig.nameservers[%zu]", base, i);
			mu__verr_add(e, f, INV, "Invalid value: \"%.100s\": must be a valid IP address, (e.g. 10.9.8.7 "
				     "or 2001:db8::ffff)", ip);
		}
	}
	const json_t *se = json_object_get(dc, "searches");
	size_t chars = 0;
	json_array_foreach(se, i, x)
		chars += (i ? 1 : 0) + (json_is_string(x) ? json_string_length(x) : 0);
	mu__pathf(f, "%s.dnsConfig.searches", base);
	go_strings(se, list, sizeof list);
	if (json_array_size(se) > 32)
		mu__verr_add(e, f, INV, "Invalid value: %s: must not have more than 32 search paths", list);
	if (chars > 2048)
		mu__verr_add(e, f, INV, "Invalid value: %s: must not have more than 2048 characters (including "
			     "spaces) in the search list", list);
	json_array_foreach(se, i, x) {
		char s[300];
		snprintf(s, sizeof s, "%s", json_is_string(x) ? json_string_value(x) : "");
		size_t l = strlen(s);
		if (l && s[l - 1] == '.')
			s[l - 1] = '\0'; /* strings.TrimSuffix(search, ".") */
		mu__pathf(f, "%s.dnsConfig.searches[%zu]", base, i);
		dns_name(e, f, s, false);
	}
	json_array_foreach(json_object_get(dc, "options"), i, x) {
		const char *n = str(x, "name");
		if (!n || !*n) {
			mu__pathf(f, "%s.dnsConfig.options[%zu]", base, i);
			mu__verr_add(e, f, REQ, "Required value: must not be empty");
		}
	}
}

/* validateMinDomains and validateNodeInclusionPolicy of constraint c at
 * path p (wu: its whenUnsatisfiable). */
static void spread_domains(mu__verr_t *e, const char *p, const json_t *c, const char *wu)
{
	mu__path_t f;
	char v[120];
	const json_t *md = json_object_get(c, "minDomains");
	if (present(md)) {
		mu__pathf(f, "%s.minDomains", p);
		go_value(md, v, sizeof v);
		if (!json_is_integer(md) || json_integer_value(md) <= 0)
			mu__verr_add(e, f, INV, "Invalid value: %s: must be greater than zero", v);
		if (!wu || strcmp(wu, "DoNotSchedule"))
			mu__verr_add(e, f, INV, "Invalid value: %s: can only use minDomains if "
				     "whenUnsatisfiable=DoNotSchedule, not %.60s", v, wu ? wu : "");
	}
	static const char *const pols[] = {"nodeAffinityPolicy", "nodeTaintsPolicy"};
	for (int k = 0; k < 2; k++) {
		const json_t *pv = json_object_get(c, pols[k]);
		const char *s = json_string_value(pv);
		if (present(pv) && (!s || (strcmp(s, "Honor") && strcmp(s, "Ignore")))) {
			mu__pathf(f, "%s.%s", p, pols[k]);
			go_value(pv, v, sizeof v);
			mu__verr_add(e, f, UNS, "Unsupported value: %s: supported values: \"Honor\", \"Ignore\"", v);
		}
	}
}

/* validateMatchLabelKeysInTopologySpread, then the labelSelector. */
static void spread_keys(mu__verr_t *e, const char *p, const json_t *c)
{
	const json_t *mk = json_object_get(c, "matchLabelKeys"), *sel = json_object_get(c, "labelSelector");
	mu__path_t f;
	mu__pathf(f, "%s.matchLabelKeys", p);
	if (json_array_size(mk) && !present(sel))
		mu__verr_add(e, f, FORB, "Forbidden: must not be specified when labelSelector is not set");
	size_t j;
	json_t *k;
	json_array_foreach(mk, j, k) {
		const char *ks = json_is_string(k) ? json_string_value(k) : "";
		mu__pathf(f, "%s.matchLabelKeys[%zu]", p, j);
		label_name(e, f, ks);
		bool in_sel = json_object_get(json_object_get(sel, "matchLabels"), ks) != NULL;
		size_t x;
		json_t *r;
		json_array_foreach(json_object_get(sel, "matchExpressions"), x, r)
			in_sel |= str(r, "key") && !strcmp(str(r, "key"), ks);
		if (in_sel)
			mu__verr_add(e, f, INV, "Invalid value: \"%.100s\": exists in both matchLabelKeys and "
				     "labelSelector", ks);
	}
	mu__pathf(f, "%s.labelSelector", p);
	label_selector(e, f, sel);
}

/* validateTopologySpreadConstraints.  Bounded by the square of the list's
 * length (the pairs compared), under the body limit. */
static void spread(mu__verr_t *e, const char *base, const json_t *list)
{
	size_t i, j;
	json_t *c;
	json_array_foreach(list, i, c) {
		mu__path_t p, f;
		mu__pathf(p, "%s.topologySpreadConstraints[%zu]", base, i);
		const json_t *ms = json_object_get(c, "maxSkew");
		if (!json_is_integer(ms) || json_integer_value(ms) <= 0) {
			mu__pathf(f, "%s.maxSkew", p);
			mu__verr_add(e, f, INV, "Invalid value: %lld: must be greater than zero",
				     (long long)json_integer_value(ms));
		}
		const char *key = str(c, "topologyKey"), *wu = str(c, "whenUnsatisfiable");
		if (!key || !*key) {
			mu__pathf(f, "%s.topologyKey", p);
			mu__verr_add(e, f, REQ, "Required value: can not be empty");
		}
		if (!wu || (strcmp(wu, "DoNotSchedule") && strcmp(wu, "ScheduleAnyway"))) {
			mu__pathf(f, "%s.whenUnsatisfiable", p);
			mu__verr_add(e, f, UNS, "Unsupported value: \"%.60s\": supported values: \"DoNotSchedule\", "
				     "\"ScheduleAnyway\"", wu ? wu : "");
		}
		for (j = i + 1; j < json_array_size(list); j++) {
			const json_t *o = json_array_get(list, j);
			const char *k2 = str(o, "topologyKey"), *w2 = str(o, "whenUnsatisfiable");
			if (!strcmp(key ? key : "", k2 ? k2 : "") && !strcmp(wu ? wu : "", w2 ? w2 : "")) {
				mu__pathf(f, "%s.{topologyKey, whenUnsatisfiable}", p);
				mu__verr_add(e, f, DUP, "Duplicate value: \"{%.60s, %.30s}\"", key ? key : "", wu ? wu : "");
				break;
			}
		}
		spread_domains(e, p, c, wu);
		spread_keys(e, p, c);
	}
}

/* --- a new pod's affinity terms ---------------------------------------- */

/* updateLabelSelector of kube's pod strategy: each matchLabelKeys key the
 * pod has as a label becomes an In expression of the term's selector,
 * each mismatchLabelKeys one a NotIn (nothing without a selector). */
static void term_label_keys(json_t *term, const json_t *labels)
{
	json_t *sel = json_object_get(term, "labelSelector");
	if (!json_is_object(sel))
		return;
	static const char *const lists[] = {"matchLabelKeys", "mismatchLabelKeys"};
	for (int l = 0; l < 2; l++) {
		size_t i;
		json_t *k;
		json_array_foreach(json_object_get(term, lists[l]), i, k) {
			const char *v = json_is_string(k) ? json_string_value(json_object_get(labels, json_string_value(k)))
							   : NULL;
			if (!v)
				continue;
			json_t *exprs = json_object_get(sel, "matchExpressions");
			if (!json_is_array(exprs)) {
				exprs = json_array();
				json_object_set_new(sel, "matchExpressions", exprs);
			}
			json_array_append_new(exprs, json_pack("{s:O, s:s, s:[s]}", "key", k, "operator", l ? "NotIn" : "In",
							       "values", v));
		}
	}
}

/* What kube's pod strategy does to a new Pod's affinity
 * (applyMatchLabelKeysAndMismatchLabelKeys, MatchLabelKeysInPodAffinity,
 * on by default since 1.31): every pod (anti-)affinity term's
 * matchLabelKeys and mismatchLabelKeys are merged into its labelSelector
 * with the pod's label values.  Create only (an update would merge
 * again); pod is borrowed and changed in place; bounded by its terms. */
void mu__pod_affinity_label_keys(json_t *pod)
{
	const json_t *labels = mu__jget(pod, "metadata.labels");
	json_t *aff = mu__jget(pod, "spec.affinity");
	static const char *const kinds[] = {"podAffinity", "podAntiAffinity"};
	for (int k = 0; k < 2 && json_is_object(aff); k++) {
		json_t *pa = json_object_get(aff, kinds[k]);
		size_t i;
		json_t *t;
		json_array_foreach(json_object_get(pa, "requiredDuringSchedulingIgnoredDuringExecution"), i, t)
			term_label_keys(t, labels);
		json_array_foreach(json_object_get(pa, "preferredDuringSchedulingIgnoredDuringExecution"), i, t)
			term_label_keys(json_object_get(t, "podAffinityTerm"), labels);
	}
}

/* --- the spec ----------------------------------------------------------- */

/* kube's checks of a pod spec's nodeSelector, affinity, sysctls, DNS
 * config, topology spread constraints and serviceAccountName (see the
 * file's comment); base is the spec's field path ("spec" or
 * "spec.template.spec").  spec is borrowed; bounded by its size
 * (constraints against constraints: their product, under the body
 * limit). */
void mu__check_pod_sched(const json_t *spec, const char *base, mu__verr_t *e)
{
	if (!json_is_object(spec))
		return;
	mu__path_t f;
	mu__pathf(f, "%s.nodeSelector", base);
	labels(e, f, json_object_get(spec, "nodeSelector"));
	sysctls(e, base, spec);
	const json_t *aff = json_object_get(spec, "affinity");
	static const char *const kinds[] = {"podAffinity", "podAntiAffinity"};
	if (json_is_object(aff)) {
		if (present(json_object_get(aff, "nodeAffinity"))) {
			mu__pathf(f, "%s.affinity.nodeAffinity", base);
			node_affinity(e, f, json_object_get(aff, "nodeAffinity"));
		}
		for (int k = 0; k < 2; k++)
			if (present(json_object_get(aff, kinds[k]))) {
				mu__pathf(f, "%s.affinity.%s", base, kinds[k]);
				pod_affinity(e, f, json_object_get(aff, kinds[k]));
			}
	}
	dns_config(e, base, spec);
	host_aliases(e, base, json_object_get(spec, "hostAliases"));
	spread(e, base, json_object_get(spec, "topologySpreadConstraints"));
	const char *sa = str(spec, "serviceAccountName");
	if (sa && *sa) {
		mu__pathf(f, "%s.serviceAccountName", base);
		dns_name(e, f, sa, false);
	}
}

/*
 * podspec.c - the defaults and checks kube-apiserver applies to a pod spec,
 * for Pods and for the pod templates of Jobs, Deployments, ReplicaSets and
 * StatefulSets alike.
 *
 *   - defaults (pkg/apis/core/v1/defaults.go and the declarative defaults
 *     of zz_generated.defaults.go): SetDefaults_PodSpec (dnsPolicy,
 *     restartPolicy, securityContext {}, terminationGracePeriodSeconds,
 *     schedulerName; serviceAccount kept equal to serviceAccountName, as
 *     the v1 conversion does), SetDefaults_Container for every container list
 *     (imagePullPolicy from the image's tag, terminationMessagePath and
 *     terminationMessagePolicy), ports' protocol, probes (timeout, period,
 *     thresholds; an httpGet's path and scheme), volumes (emptyDir when no
 *     source is given, defaultMode 420, hostPath type "", a projected
 *     token's expirationSeconds) and field selectors' apiVersion; and, for a
 *     Pod only (SetDefaults_Pod), requests copied from limits,
 *     enableServiceLinks and host-network ports.
 *   - checks (pkg/apis/core/validation/validation.go), each a 422 cause
 *     with kube's field path and message: volumes (one source each, names,
 *     the sources' required fields and modes), volume mounts (an existing
 *     volume, a unique mountPath, relative subPaths), probes and lifecycle
 *     handlers (one handler, ports, thresholds), container ports and env,
 *     requests not above limits, the enumerations (imagePullPolicy,
 *     terminationMessagePolicy, dnsPolicy), the pod's and containers'
 *     security contexts (user and group ids, seccomp and AppArmor profiles,
 *     privilege escalation) and ephemeral containers, which neither a new
 *     pod nor a template may carry; and on update ValidatePodUpdate's rules
 *     (what may change: images, activeDeadlineSeconds downwards, added
 *     tolerations, removed scheduling gates, a negative grace period to 1).
 *   - the fields of kube 1.32's disabled gates (dropDisabledFields of
 *     pkg/api/pod/util.go): hostUsers and the pod-level resources, dropped
 *     on create and on update unless the stored spec has them, apart from
 *     the defaults so that a stored spec decoded for comparison keeps them.
 *
 * Nothing here keeps state; every function borrows its JSON and its work is
 * bounded by the size of the spec (at most the request body limit).  Causes
 * stop at MU__VERR_MAX, as mu__verr_add does.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/apiserver_int.h"
#include "muster/resource.h"

#define REQ "FieldValueRequired"
#define INV "FieldValueInvalid"
#define DUP "FieldValueDuplicate"
#define UNS "FieldValueNotSupported"
#define FORB "FieldValueForbidden"
#define NOTF "FieldValueNotFound"


static const char *const lists[] = {"initContainers", "containers", "ephemeralContainers"};

/* The volume sources in the order kube's validateVolumeSource tries them. */
static const char *const sources[] = {
	"emptyDir", "hostPath", "gitRepo", "gcePersistentDisk", "awsElasticBlockStore", "secret", "nfs",
	"iscsi", "glusterfs", "flocker", "persistentVolumeClaim", "rbd", "cinder", "cephfs", "quobyte",
	"downwardAPI", "fc", "azureFile", "vsphereVolume", "photonPersistentDisk", "portworxVolume",
	"azureDisk", "storageos", "configMap", "scaleIO", "projected", "csi", "ephemeral", "image", NULL};

static const char *const probes[] = {"livenessProbe", "readinessProbe", "startupProbe"};

/* --- defaults ----------------------------------------------------------- */

static void def(json_t *o, const char *key, json_t *v)
{
	if (json_is_object(o) && !json_object_get(o, key))
		json_object_set_new(o, key, v);
	else
		json_decref(v);
}

/* An int field kube defaults when it is 0 (not a pointer in the API). */
static void def_nonzero(json_t *o, const char *key, json_int_t v)
{
	const json_t *cur = json_object_get(o, key);
	if (json_is_object(o) && (!cur || (json_is_integer(cur) && json_integer_value(cur) == 0)))
		json_object_set_new(o, key, json_integer(v));
}

/* parsers.ParseImageName's tag: the one given, else "latest" unless a
 * digest pins the image. */
static bool image_latest(const char *img)
{
	if (!img)
		return false;
	const char *last = strrchr(img, '/');
	last = last ? last + 1 : img;
	const char *at = strchr(last, '@');
	const char *colon = strchr(last, ':');
	if (colon && (!at || colon < at)) {
		size_t n = at ? (size_t)(at - colon - 1) : strlen(colon + 1);
		return n == 6 && !strncmp(colon + 1, "latest", 6);
	}
	return !at;
}

static void def_handler(json_t *h)
{
	json_t *g = json_object_get(h, "httpGet");
	if (json_is_object(g)) { /* SetDefaults_HTTPGetAction */
		const char *p = json_string_value(json_object_get(g, "path"));
		if (!p || !*p)
			json_object_set_new(g, "path", json_string("/"));
		const char *s = json_string_value(json_object_get(g, "scheme"));
		if (!s || !*s)
			json_object_set_new(g, "scheme", json_string("HTTP"));
	}
}

static void def_field_refs(json_t *items)
{
	size_t i;
	json_t *it;
	json_array_foreach(items, i, it) {
		def(json_object_get(it, "fieldRef"), "apiVersion", json_string("v1"));
		def(json_object_get(it, "resourceFieldRef"), "divisor", json_string("0"));
	}
}

static void def_container(json_t *c)
{
	if (!json_is_object(c))
		return;
	const char *img = json_string_value(json_object_get(c, "image"));
	def(c, "imagePullPolicy", json_string(image_latest(img) ? "Always" : "IfNotPresent"));
	def(c, "terminationMessagePath", json_string("/dev/termination-log"));
	def(c, "terminationMessagePolicy", json_string("File"));
	size_t k;
	json_t *x;
	json_array_foreach(json_object_get(c, "ports"), k, x)
		def(x, "protocol", json_string("TCP"));
	json_array_foreach(json_object_get(c, "env"), k, x) {
		json_t *vf = json_object_get(x, "valueFrom");
		def(json_object_get(vf, "fieldRef"), "apiVersion", json_string("v1"));
		def(json_object_get(vf, "resourceFieldRef"), "divisor", json_string("0"));
	}
	for (int p = 0; p < 3; p++) {
		json_t *pr = json_object_get(c, probes[p]);
		if (!json_is_object(pr))
			continue;
		def_nonzero(pr, "timeoutSeconds", 1); /* SetDefaults_Probe */
		def_nonzero(pr, "periodSeconds", 10);
		def_nonzero(pr, "successThreshold", 1);
		def_nonzero(pr, "failureThreshold", 3);
		def_handler(pr);
	}
	def_handler(mu__jget(c, "lifecycle.postStart"));
	def_handler(mu__jget(c, "lifecycle.preStop"));
}

/* A string field kube defaults when it is "" (a plain string in the API). */
static void def_str(json_t *o, const char *key, const char *v)
{
	const char *cur = json_string_value(json_object_get(o, key));
	if (json_is_object(o) && (!json_object_get(o, key) || (cur && !*cur)))
		json_object_set_new(o, key, json_string(v));
}

static void def_volume(json_t *v)
{
	if (!json_is_object(v))
		return;
	bool any = false;
	for (int s = 0; sources[s]; s++)
		any |= json_object_get(v, sources[s]) && !json_is_null(json_object_get(v, sources[s]));
	if (!any) /* SetDefaults_Volume */
		json_object_set_new(v, "emptyDir", json_object());
	def(json_object_get(v, "secret"), "defaultMode", json_integer(420));
	def(json_object_get(v, "configMap"), "defaultMode", json_integer(420));
	def(json_object_get(v, "hostPath"), "type", json_string(""));
	/* the deprecated in-tree sources' SetDefaults_* (RBD, ISCSI,
	 * AzureDisk, ScaleIO) */
	json_t *r = json_object_get(v, "rbd");
	def_str(r, "pool", "rbd");
	def_str(r, "user", "admin");
	def_str(r, "keyring", "/etc/ceph/keyring");
	def_str(json_object_get(v, "iscsi"), "iscsiInterface", "default");
	json_t *az = json_object_get(v, "azureDisk");
	def(az, "cachingMode", json_string("ReadWrite"));
	def(az, "kind", json_string("Shared"));
	def(az, "fsType", json_string("ext4"));
	def(az, "readOnly", json_false());
	json_t *sio = json_object_get(v, "scaleIO");
	def_str(sio, "storageMode", "ThinProvisioned");
	def_str(sio, "fsType", "xfs");
	json_t *d = json_object_get(v, "downwardAPI");
	def(d, "defaultMode", json_integer(420));
	def_field_refs(json_object_get(d, "items"));
	json_t *p = json_object_get(v, "projected");
	def(p, "defaultMode", json_integer(420));
	size_t i;
	json_t *src;
	json_array_foreach(json_object_get(p, "sources"), i, src) {
		def(json_object_get(src, "serviceAccountToken"), "expirationSeconds", json_integer(3600));
		def_field_refs(mu__jget(src, "downwardAPI.items"));
	}
}

/* Whether a pod spec has pod-level resources in use: non-empty requests
 * or limits (kube's podLevelResourcesInUse). */
static bool pod_resources_in_use(const json_t *spec)
{
	const json_t *r = json_object_get(spec, "resources");
	return json_object_size(json_object_get(r, "requests")) > 0 || json_object_size(json_object_get(r, "limits")) > 0;
}

void mu__drop_gated_pod_fields(json_t *spec, const json_t *old)
{
	if (!json_is_object(spec))
		return;
	const json_t *hu = json_object_get(old, "hostUsers");
	if (!hu || json_is_null(hu))
		json_object_del(spec, "hostUsers");
	if (!pod_resources_in_use(old))
		json_object_del(spec, "resources");
}

/* The defaults of a pod spec, a Pod's or a template's: kube's
 * SetDefaults_PodSpec and the defaults of everything a PodSpec holds
 * (containers of the three lists, ports, env, probes, lifecycle handlers,
 * volumes).  spec is borrowed and changed in place; a spec that is not an
 * object is left alone.  Bounded by the spec's size. */
void mu__defaults_pod_spec(json_t *spec)
{
	if (!json_is_object(spec))
		return;
	def(spec, "dnsPolicy", json_string("ClusterFirst"));
	def(spec, "restartPolicy", json_string("Always"));
	def(spec, "securityContext", json_object());
	def(spec, "terminationGracePeriodSeconds", json_integer(30));
	def(spec, "schedulerName", json_string("default-scheduler"));
	/* the v1 conversion: the deprecated serviceAccount names the account
	 * when serviceAccountName does not, and is written back equal to it */
	const char *sa = json_string_value(json_object_get(spec, "serviceAccountName"));
	const char *dsa = json_string_value(json_object_get(spec, "serviceAccount"));
	if ((!sa || !*sa) && dsa && *dsa)
		json_object_set_new(spec, "serviceAccountName", json_string(sa = dsa));
	if (sa && *sa)
		json_object_set_new(spec, "serviceAccount", json_string(sa));
	size_t i;
	json_t *c;
	for (int l = 0; l < 3; l++)
		json_array_foreach(json_object_get(spec, lists[l]), i, c)
			def_container(c);
	json_array_foreach(json_object_get(spec, "volumes"), i, c)
		def_volume(c);
}

/* What kube's SetDefaults_Pod adds for a Pod but not for a template:
 * requests copied from limits where a container gives only the limit,
 * enableServiceLinks true, and with hostNetwork each port's hostPort from
 * its containerPort.  spec is borrowed and changed in place. */
void mu__defaults_pod_only(json_t *spec)
{
	if (!json_is_object(spec))
		return;
	size_t i, k;
	json_t *c, *p;
	for (int l = 0; l < 2; l++)
		json_array_foreach(json_object_get(spec, lists[l]), i, c) {
			json_t *lim = mu__jget(c, "resources.limits");
			if (!json_is_object(lim) || !json_is_object(json_object_get(c, "resources")))
				continue;
			json_t *req = mu__jget(c, "resources.requests");
			if (!json_is_object(req)) {
				req = json_object();
				json_object_set_new(json_object_get(c, "resources"), "requests", req);
			}
			const char *key;
			json_t *v;
			json_object_foreach(lim, key, v)
				if (!json_object_get(req, key))
					json_object_set_new(req, key, json_deep_copy(v));
		}
	def(spec, "enableServiceLinks", json_true());
	if (!json_is_true(json_object_get(spec, "hostNetwork")))
		return;
	for (int l = 0; l < 2; l++)
		json_array_foreach(json_object_get(spec, lists[l]), i, c)
			json_array_foreach(json_object_get(c, "ports"), k, p) {
				const json_t *hp = json_object_get(p, "hostPort");
				if (json_is_object(p) && (!hp || (json_is_integer(hp) && !json_integer_value(hp))) &&
				    json_object_get(p, "containerPort"))
					json_object_set_new(p, "hostPort", json_deep_copy(json_object_get(p, "containerPort")));
			}
}

/* --- checks: small pieces ----------------------------------------------- */

static bool present(const json_t *v)
{
	return v && !json_is_null(v);
}

static const char *str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* Go's %v of a JSON value in a message: strings quoted, others compact. */
static void value_text(const json_t *v, char *out, size_t cap)
{
	if (json_is_string(v)) {
		snprintf(out, cap, "\"%.150s\"", json_string_value(v));
		return;
	}
	char *t = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
	snprintf(out, cap, "%.200s", t ? t : "null");
	free(t);
}

/* NotSupported with kube's list of supported values. */
static void not_supported(mu__verr_t *e, const char *f, const json_t *v, const char *const *set)
{
	char list[200] = "", val[220];
	for (const char *const *s = set; *s; s++)
		snprintf(list + strlen(list), sizeof list - strlen(list), "%s\"%s\"", s == set ? "" : ", ", *s);
	value_text(v, val, sizeof val);
	mu__verr_add(e, f, UNS, "Unsupported value: %s: supported values: %s", val, list);
}

static bool in_set(const char *s, const char *const *set)
{
	for (; s && *set; set++)
		if (!strcmp(s, *set))
			return true;
	return false;
}

/* An optional enumeration base.key: absent or empty is left to the
 * caller.  The path is only made for a cause (most specs have none). */
static void check_enum(mu__verr_t *e, const char *base, const char *key, const json_t *v, const char *const *set)
{
	if (present(v) && !in_set(json_string_value(v), set)) {
		mu__path_t f;
		mu__pathf(f, "%s.%s", base, key);
		not_supported(e, f, v, set);
	}
}

/* validation.IsValidPortNum on an integer field. */
static void port_num(mu__verr_t *e, const char *f, const json_t *v)
{
	if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 65535) {
		char val[220];
		value_text(v, val, sizeof val);
		mu__verr_add(e, f, INV, "Invalid value: %s: must be between 1 and 65535, inclusive", val);
	}
}

/* validation.IsValidPortName (an IANA service name); one cause per rule
 * broken, as kube gives. */
static void port_name(mu__verr_t *e, const char *f, const char *s)
{
	static const char *const msgs[] = {
		"must be no more than 15 characters",
		"must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
		"must not contain consecutive hyphens",
		"must contain at least one letter (a-z)",
		"must not begin or end with a hyphen",
	};
	size_t n = strlen(s);
	bool bad[5] = {n > 15, false, strstr(s, "--") != NULL, true, n && (s[0] == '-' || s[n - 1] == '-')};
	for (size_t i = 0; i < n; i++) {
		if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) || s[i] == '-'))
			bad[1] = true;
		if (islower((unsigned char)s[i]))
			bad[3] = false;
	}
	for (int i = 0; i < 5; i++)
		if (bad[i])
			mu__verr_add(e, f, INV, "Invalid value: \"%.100s\": %s", s, msgs[i]);
}

/* ValidatePortNumOrName: an int or a named port. */
static void port_num_or_name(mu__verr_t *e, const char *f, const json_t *v)
{
	if (json_is_string(v))
		port_name(e, f, json_string_value(v));
	else
		port_num(e, f, v);
}

/* ValidateNonnegativeField on an optional integer. */
static void nonneg(mu__verr_t *e, const char *f, const json_t *v)
{
	if (present(v) && (!json_is_integer(v) || json_integer_value(v) < 0)) {
		char val[220];
		value_text(v, val, sizeof val);
		mu__verr_add(e, f, INV, "Invalid value: %s: must be greater than or equal to 0", val);
	}
}

/* IsValidUserID / IsValidGroupID on an optional integer base.key (key
 * NULL: base is the path). */
static void id_range(mu__verr_t *e, const char *base, const char *key, const json_t *v)
{
	if (present(v) && (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 2147483647)) {
		mu__path_t f;
		if (key)
			mu__pathf(f, "%s.%s", base, key);
		else
			mu__pathf(f, "%s", base);
		char val[220];
		value_text(v, val, sizeof val);
		mu__verr_add(e, f, INV, "Invalid value: %s: must be between 0 and 2147483647, inclusive", val);
	}
}

/* A file mode (defaultMode, items' mode): 0 to 0777. */
static void file_mode(mu__verr_t *e, const char *f, const json_t *v)
{
	if (present(v) && (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 0777)) {
		char val[220];
		value_text(v, val, sizeof val);
		mu__verr_add(e, f, INV, "Invalid value: %s: must be a number between 0 and 0777 (octal), both inclusive",
			     val);
	}
}

/* validateLocalDescendingPath: relative, without a ".." element. */
static void descending_path(mu__verr_t *e, const char *f, const char *p)
{
	if (p[0] == '/')
		mu__verr_add(e, f, INV, "Invalid value: \"%.100s\": must be a relative path", p);
	for (const char *s = p; *s;) {
		size_t n = strcspn(s, "/");
		if (n == 2 && s[0] == '.' && s[1] == '.') {
			mu__verr_add(e, f, INV, "Invalid value: \"%.100s\": must not contain '..'", p);
			break;
		}
		s += n + (s[n] == '/');
	}
}

/* A required, non-empty string field. */
static void required(mu__verr_t *e, const char *base, const json_t *o, const char *key)
{
	const char *s = str(o, key);
	if (!s || !*s) {
		mu__path_t f;
		mu__pathf(f, "%s.%s", base, key);
		mu__verr_add(e, f, REQ, "Required value");
	}
}

/* --- checks: volumes ---------------------------------------------------- */

static void check_items(mu__verr_t *e, const char *base, const json_t *items)
{
	size_t i;
	json_t *it;
	json_array_foreach(items, i, it) {
		mu__path_t ip, f;
		mu__pathf(ip, "%s.items[%zu]", base, i);
		required(e, ip, it, "key");
		required(e, ip, it, "path");
		const char *p = str(it, "path");
		mu__pathf(f, "%s.path", ip);
		if (p && *p)
			descending_path(e, f, p);
		mu__pathf(f, "%s.mode", ip);
		file_mode(e, f, json_object_get(it, "mode"));
	}
}

/* A list field that must not be empty (rbd's and cephfs' monitors). */
static void required_list(mu__verr_t *e, const char *base, const json_t *o, const char *key)
{
	if (!json_array_size(json_object_get(o, key))) {
		mu__path_t f;
		mu__pathf(f, "%s.%s", base, key);
		mu__verr_add(e, f, REQ, "Required value");
	}
}

/* An integer base.key, when given, within lo..hi (a disk's partition, an
 * iSCSI lun). */
static void int_range(mu__verr_t *e, const char *base, const char *key, const json_t *o, int lo, int hi, int mlo)
{
	const json_t *v = json_object_get(o, key);
	if (json_is_integer(v) && (json_integer_value(v) < lo || json_integer_value(v) > hi)) {
		mu__path_t f;
		mu__pathf(f, "%s.%s", base, key);
		mu__verr_add(e, f, INV, "Invalid value: %lld: must be between %d and %d, inclusive",
			     (long long)json_integer_value(v), mlo, hi);
	}
}

/* The deprecated in-tree sources' checks kube 1.32 still makes
 * (validateGitRepoVolumeSource, validateGCEPersistentDiskVolumeSource and
 * the others): their required fields, partitions and luns, flocker's one
 * dataset, azureDisk's enumerations.  Not made (docs/apiserver.md): iscsi's
 * iqn format and portals, fc's targets, quobyte's registry pairs,
 * storageos' names, secretRefs' names.  Returns whether src is one of them. */
static bool check_legacy(mu__verr_t *e, const char *p, const char *src, const json_t *s)
{
	static const char *const caching[] = {"None", "ReadOnly", "ReadWrite", NULL};
	static const char *const az_kinds[] = {"Dedicated", "Managed", "Shared", NULL}; /* sets.List: sorted */
	/* the single required string of each simple source */
	static const char *const one[][2] = {{"cinder", "volumeID"}, {"vsphereVolume", "volumePath"},
					     {"photonPersistentDisk", "pdID"}, {"portworxVolume", "volumeID"},
					     {"storageos", "volumeName"}};
	mu__path_t f;
	for (size_t i = 0; i < sizeof one / sizeof one[0]; i++)
		if (!strcmp(src, one[i][0])) {
			required(e, p, s, one[i][1]);
			return true;
		}
	if (!strcmp(src, "gitRepo")) {
		required(e, p, s, "repository");
		const char *d = str(s, "directory");
		mu__pathf(f, "%s.directory", p);
		if (d && *d)
			descending_path(e, f, d);
	} else if (!strcmp(src, "gcePersistentDisk") || !strcmp(src, "awsElasticBlockStore")) {
		required(e, p, s, src[0] == 'g' ? "pdName" : "volumeID");
		int_range(e, p, "partition", s, 0, 255, 1); /* kube's message says 1, its test 0 */
	} else if (!strcmp(src, "rbd")) {
		required_list(e, p, s, "monitors");
		required(e, p, s, "image");
	} else if (!strcmp(src, "cephfs")) {
		required_list(e, p, s, "monitors");
	} else if (!strcmp(src, "glusterfs")) {
		required(e, p, s, "endpoints");
		required(e, p, s, "path");
	} else if (!strcmp(src, "azureFile")) {
		required(e, p, s, "secretName");
		required(e, p, s, "shareName");
	} else if (!strcmp(src, "azureDisk")) {
		required(e, p, s, "diskName");
		required(e, p, s, "diskURI");
		check_enum(e, p, "cachingMode", json_object_get(s, "cachingMode"), caching);
		check_enum(e, p, "kind", json_object_get(s, "kind"), az_kinds);
	} else if (!strcmp(src, "iscsi")) {
		required(e, p, s, "targetPortal");
		required(e, p, s, "iqn");
		int_range(e, p, "lun", s, 0, 255, 0);
	} else if (!strcmp(src, "quobyte")) {
		required(e, p, s, "registry");
		required(e, p, s, "volume");
	} else if (!strcmp(src, "scaleIO")) {
		required(e, p, s, "gateway");
		required(e, p, s, "system");
		required(e, p, s, "volumeName");
	} else if (!strcmp(src, "flocker")) {
		const char *n = str(s, "datasetName"), *u = str(s, "datasetUUID");
		bool hn = n && *n, hu = u && *u;
		if (!hn && !hu)
			mu__verr_add(e, p, REQ, "Required value: one of datasetName and datasetUUID is required");
		else if (hn && hu)
			mu__verr_add(e, p, INV, "Invalid value: \"resource\": datasetName and datasetUUID can not be "
				     "specified simultaneously");
		mu__pathf(f, "%s.datasetName", p);
		if (hn && strchr(n, '/'))
			mu__verr_add(e, f, INV, "Invalid value: \"%.100s\": must not contain '/'", n);
	} else {
		return false;
	}
	return true;
}

/* The checks of the one source a volume has. */
static void check_source(mu__verr_t *e, const char *vp, const char *src, const json_t *s)
{
	static const char *const host_types[] = {"", "DirectoryOrCreate", "Directory", "FileOrCreate", "File",
						 "Socket", "CharDevice", "BlockDevice", NULL};
	mu__path_t p, f;
	mu__pathf(p, "%s.%s", vp, src);
	mu__pathf(f, "%s.defaultMode", p);
	if (check_legacy(e, p, src, s))
		return;
	if (!strcmp(src, "secret")) {
		required(e, p, s, "secretName");
		file_mode(e, f, json_object_get(s, "defaultMode"));
		check_items(e, p, json_object_get(s, "items"));
	} else if (!strcmp(src, "configMap")) {
		required(e, p, s, "name");
		file_mode(e, f, json_object_get(s, "defaultMode"));
		check_items(e, p, json_object_get(s, "items"));
	} else if (!strcmp(src, "downwardAPI") || !strcmp(src, "projected")) {
		file_mode(e, f, json_object_get(s, "defaultMode"));
	} else if (!strcmp(src, "hostPath")) {
		required(e, p, s, "path");
		const char *hp = str(s, "path");
		mu__pathf(f, "%s.path", p);
		for (const char *q = hp; q && *q;) { /* validatePathNoBacksteps */
			size_t n = strcspn(q, "/");
			if (n == 2 && q[0] == '.' && q[1] == '.') {
				mu__verr_add(e, f, INV, "Invalid value: \"%.100s\": must not contain '..'", hp);
				break;
			}
			q += n + (q[n] == '/');
		}
		check_enum(e, p, "type", json_object_get(s, "type"), host_types);
	} else if (!strcmp(src, "persistentVolumeClaim")) {
		required(e, p, s, "claimName");
	} else if (!strcmp(src, "nfs")) {
		required(e, p, s, "server");
		required(e, p, s, "path");
		const char *np = str(s, "path");
		mu__pathf(f, "%s.path", p);
		if (np && *np && np[0] != '/')
			mu__verr_add(e, f, INV, "Invalid value: \"%.100s\": must be an absolute path", np);
	}
}

/* ValidateVolumes: a DNS-label name, unique, and exactly one source. */
static void check_volumes(mu__verr_t *e, const char *base, const json_t *vols)
{
	size_t i;
	json_t *v;
	json_array_foreach(vols, i, v) {
		mu__path_t vp, f;
		mu__pathf(vp, "%s.volumes[%zu]", base, i);
		int n = 0;
		for (int s = 0; sources[s]; s++) {
			const json_t *src = json_object_get(v, sources[s]);
			if (!present(src))
				continue;
			mu__pathf(f, "%s.%s", vp, sources[s]);
			if (n++)
				mu__verr_add(e, f, FORB, "Forbidden: may not specify more than 1 volume type");
			else
				check_source(e, vp, sources[s], src);
		}
		if (!n)
			mu__verr_add(e, vp, REQ, "Required value: must specify a volume type");
		const char *name = str(v, "name");
		mu__pathf(f, "%s.name", vp);
		if (!name || !*name)
			mu__verr_add(e, f, REQ, "Required value");
		else if (!mu__valid_dns_label(name))
			mu__verr_add(e, f, INV, "Invalid value: \"%.64s\": a lowercase RFC 1123 label must consist of "
				     "lower case alphanumeric characters or '-', and must start and end with an "
				     "alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation "
				     "is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')", name);
		for (size_t j = 0; name && j < i; j++)
			if (json_equal(json_object_get(json_array_get(vols, j), "name"), json_object_get(v, "name"))) {
				mu__verr_add(e, f, DUP, "Duplicate value: \"%.64s\"", name);
				break;
			}
	}
}

/* ValidateVolumeMounts: each names a volume of the pod, has a mountPath
 * not used before in the container, and a relative subPath. */
static void check_mounts(mu__verr_t *e, const char *cp, const json_t *c, const json_t *vols)
{
	const json_t *ms = json_object_get(c, "volumeMounts");
	size_t i, j;
	json_t *m, *v;
	json_array_foreach(ms, i, m) {
		mu__path_t f;
		const char *name = str(m, "name"), *mp = str(m, "mountPath"), *sp = str(m, "subPath");
		mu__pathf(f, "%s.volumeMounts[%zu].name", cp, i);
		if (!name || !*name)
			mu__verr_add(e, f, REQ, "Required value");
		bool found = false;
		json_array_foreach(vols, j, v)
			found |= name && str(v, "name") && !strcmp(str(v, "name"), name);
		if (!found)
			mu__verr_add(e, f, NOTF, "Not found: \"%.64s\"", name ? name : "");
		mu__pathf(f, "%s.volumeMounts[%zu].mountPath", cp, i);
		if (!mp || !*mp)
			mu__verr_add(e, f, REQ, "Required value");
		for (j = 0; mp && j < i; j++)
			if (str(json_array_get(ms, j), "mountPath") && !strcmp(str(json_array_get(ms, j), "mountPath"), mp)) {
				mu__verr_add(e, f, INV, "Invalid value: \"%.100s\": must be unique", mp);
				break;
			}
		/* kube names the subPath cause from the list, not the element */
		mu__pathf(f, "%s.volumeMounts.subPath", cp);
		if (sp && *sp)
			descending_path(e, f, sp);
		const char *spe = str(m, "subPathExpr");
		mu__pathf(f, "%s.volumeMounts[%zu].subPathExpr", cp, i);
		if (spe && *spe && sp && *sp)
			mu__verr_add(e, f, INV, "Invalid value: \"%.100s\": subPathExpr and subPath are mutually "
				     "exclusive", spe);
	}
}

/* --- checks: containers ------------------------------------------------- */

/* validateHandler: exactly one of the handler kinds, each checked. */
static void check_handler(mu__verr_t *e, const char *hp, const json_t *h, bool lifecycle)
{
	static const char *const kinds[] = {"exec", "httpGet", "tcpSocket", "grpc", "sleep"};
	static const char *const schemes[] = {"HTTP", "HTTPS", NULL};
	int n = 0;
	for (int k = 0; k < (lifecycle ? 5 : 4); k++) {
		if (lifecycle && k == 3)
			continue; /* a lifecycle handler has no grpc */
		const json_t *x = json_object_get(h, kinds[k]);
		if (!present(x))
			continue;
		mu__path_t f;
		mu__pathf(f, "%s.%s", hp, kinds[k]);
		if (n++) {
			mu__verr_add(e, f, FORB, "Forbidden: may not specify more than 1 handler type");
			continue;
		}
		mu__path_t pf;
		mu__pathf(pf, "%s.port", f);
		if (k == 0 && !json_array_size(json_object_get(x, "command"))) {
			mu__pathf(pf, "%s.command", f);
			mu__verr_add(e, pf, REQ, "Required value");
		} else if (k == 1) {
			required(e, f, x, "path");
			port_num_or_name(e, pf, json_object_get(x, "port"));
			mu__pathf(pf, "%s.scheme", f);
			if (!in_set(str(x, "scheme"), schemes))
				not_supported(e, pf, json_object_get(x, "scheme"), schemes);
		} else if (k == 2) {
			port_num_or_name(e, pf, json_object_get(x, "port"));
		} else if (k == 3) {
			port_num(e, pf, json_object_get(x, "port"));
		}
	}
	if (!n)
		mu__verr_add(e, hp, REQ, "Required value: must specify a handler type");
}

static void check_probe(mu__verr_t *e, const char *pp, const json_t *p, bool once)
{
	static const char *const ints[] = {"initialDelaySeconds", "timeoutSeconds", "periodSeconds",
					   "successThreshold", "failureThreshold"};
	check_handler(e, pp, p, false);
	mu__path_t f;
	for (int i = 0; i < 5; i++) {
		mu__pathf(f, "%s.%s", pp, ints[i]);
		nonneg(e, f, json_object_get(p, ints[i]));
	}
	const json_t *g = json_object_get(p, "terminationGracePeriodSeconds");
	mu__pathf(f, "%s.terminationGracePeriodSeconds", pp);
	if (present(g) && (!json_is_integer(g) || json_integer_value(g) <= 0))
		mu__verr_add(e, f, INV, "Invalid value: %lld: must be greater than 0", (long long)json_integer_value(g));
	const json_t *st = json_object_get(p, "successThreshold");
	mu__pathf(f, "%s.successThreshold", pp);
	if (once && json_is_integer(st) && json_integer_value(st) != 1)
		mu__verr_add(e, f, INV, "Invalid value: %lld: must be 1", (long long)json_integer_value(st));
}

static bool qty(const json_t *v, int64_t *out)
{
	char buf[64];
	if (json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) < (json_int_t)1 << 40) {
		*out = (int64_t)json_integer_value(v) * 1000;
		return true;
	}
	if (!json_is_string(v) || strlen(json_string_value(v)) >= sizeof buf)
		return false;
	snprintf(buf, sizeof buf, "%s", json_string_value(v));
	return mu_quantity_parse(buf, 1000, out) == MU_OK;
}

static void check_ports(mu__verr_t *e, const char *cp, const json_t *c)
{
	static const char *const protos[] = {"SCTP", "TCP", "UDP", NULL};
	const json_t *ps = json_object_get(c, "ports");
	size_t i;
	json_t *p;
	json_array_foreach(ps, i, p) {
		mu__path_t f;
		const char *name = str(p, "name");
		mu__pathf(f, "%s.ports[%zu].name", cp, i);
		if (name && *name) {
			port_name(e, f, name);
			for (size_t j = 0; j < i; j++)
				if (str(json_array_get(ps, j), "name") && !strcmp(str(json_array_get(ps, j), "name"), name)) {
					mu__verr_add(e, f, DUP, "Duplicate value: \"%.64s\"", name);
					break;
				}
		}
		const json_t *cport = json_object_get(p, "containerPort");
		mu__pathf(f, "%s.ports[%zu].containerPort", cp, i);
		if (!present(cport) || (json_is_integer(cport) && !json_integer_value(cport)))
			mu__verr_add(e, f, REQ, "Required value");
		else
			port_num(e, f, cport);
		const json_t *hport = json_object_get(p, "hostPort");
		mu__pathf(f, "%s.ports[%zu].hostPort", cp, i);
		if (present(hport) && !(json_is_integer(hport) && !json_integer_value(hport)))
			port_num(e, f, hport);
		mu__pathf(f, "%s.ports[%zu].protocol", cp, i);
		const json_t *pr = json_object_get(p, "protocol");
		if (!str(p, "protocol") || !*str(p, "protocol"))
			mu__verr_add(e, f, REQ, "Required value");
		else if (!in_set(str(p, "protocol"), protos))
			not_supported(e, f, pr, protos);
	}
}

static void check_env(mu__verr_t *e, const char *cp, const json_t *c)
{
	static const char *const refs[] = {"fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef"};
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(c, "env"), i, v) {
		mu__path_t f;
		const char *name = str(v, "name");
		mu__pathf(f, "%s.env[%zu].name", cp, i);
		if (!name || !*name) {
			mu__verr_add(e, f, REQ, "Required value");
			mu__verr_add(e, f, INV, "Invalid value: \"\": environment variable name must be non-empty");
		} else {
			for (const char *s = name; *s; s++) /* IsRelaxedEnvVarName (kube 1.32's default) */
				if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e || *s == '=') {
					mu__verr_add(e, f, INV, "Invalid value: \"%.100s\": a valid environment variable "
						     "name must consist only of printable ASCII characters other than '='",
						     name);
					break;
				}
		}
		const json_t *vf = json_object_get(v, "valueFrom");
		if (!present(vf))
			continue;
		int n = 0;
		for (int r = 0; r < 4; r++)
			n += present(json_object_get(vf, refs[r]));
		const char *val = str(v, "value");
		mu__pathf(f, "%s.env[%zu].valueFrom", cp, i);
		if (!n)
			mu__verr_add(e, f, INV, "Invalid value: \"\": must specify one of: `fieldRef`, "
				     "`resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`");
		else if (val && *val)
			mu__verr_add(e, f, INV, "Invalid value: \"\": may not be specified when `value` is not empty");
		else if (n > 1)
			mu__verr_add(e, f, INV, "Invalid value: \"\": may not have more than one field specified at a time");
	}
}

/* validateSeccompProfileField and ValidateAppArmorProfileField. */
static void check_profile(mu__verr_t *e, const char *base, const json_t *sc, const char *key, const char *what)
{
	static const char *const types[] = {"Localhost", "RuntimeDefault", "Unconfined", NULL};
	const json_t *p = json_object_get(sc, key);
	if (!present(p))
		return;
	mu__path_t tp, lp;
	mu__pathf(tp, "%s.%s.type", base, key);
	mu__pathf(lp, "%s.%s.localhostProfile", base, key);
	const char *t = str(p, "type"), *lh = str(p, "localhostProfile");
	if (!t || !*t) {
		mu__verr_add(e, tp, REQ, "Required value: type is required when %s is set", key);
	} else if (!in_set(t, types)) {
		not_supported(e, tp, json_object_get(p, "type"), types);
	} else if (!strcmp(t, "Localhost")) {
		if (!lh || !*lh)
			mu__verr_add(e, lp, REQ, "Required value: must be set when %s type is Localhost", what);
		else if (!strcmp(what, "seccomp"))
			descending_path(e, lp, lh);
		else if (isspace((unsigned char)lh[0]) || isspace((unsigned char)lh[strlen(lh) - 1]))
			mu__verr_add(e, lp, INV, "Invalid value: \"%.100s\": must not be padded with whitespace", lh);
	} else if (present(json_object_get(p, "localhostProfile"))) {
		char val[220];
		value_text(strcmp(what, "seccomp") ? json_object_get(p, "localhostProfile") : p, val, sizeof val);
		mu__verr_add(e, lp, INV, "Invalid value: %s: can only be set when %s type is Localhost", val, what);
	}
}

/* ValidateSecurityContext (a container's) and the pod's
 * validatePodSpecSecurityContext. */
static void check_security(mu__verr_t *e, const char *base, const json_t *sc, bool pod)
{
	static const char *const proc[] = {"Default", "Unmasked", NULL};
	if (!json_is_object(sc))
		return;
	if (!json_object_size(sc))
		return; /* the default {} */
	mu__path_t p, f;
	mu__pathf(p, "%s.securityContext", base);
	static const char *const ids[] = {"runAsUser", "runAsGroup", "fsGroup"};
	for (int i = 0; i < (pod ? 3 : 2); i++)
		id_range(e, p, ids[i], json_object_get(sc, ids[i]));
	size_t i;
	json_t *g;
	json_array_foreach(pod ? json_object_get(sc, "supplementalGroups") : NULL, i, g) {
		mu__pathf(f, "%s.supplementalGroups[%zu]", p, i);
		id_range(e, f, NULL, g);
	}
	check_profile(e, p, sc, "seccompProfile", "seccomp");
	check_profile(e, p, sc, "appArmorProfile", "AppArmor");
	if (pod)
		return;
	check_enum(e, p, "procMount", json_object_get(sc, "procMount"), proc);
	if (!json_is_false(json_object_get(sc, "allowPrivilegeEscalation")))
		return;
	char val[220];
	value_text(sc, val, sizeof val);
	if (json_is_true(json_object_get(sc, "privileged")))
		mu__verr_add(e, p, INV, "Invalid value: %s: cannot set `allowPrivilegeEscalation` to false and "
			     "`privileged` to true", val);
	json_array_foreach(mu__jget(sc, "capabilities.add"), i, g)
		if (json_is_string(g) && !strcmp(json_string_value(g), "CAP_SYS_ADMIN"))
			mu__verr_add(e, p, INV, "Invalid value: %s: cannot set `allowPrivilegeEscalation` to false "
				     "and `capabilities.Add` CAP_SYS_ADMIN", val);
}

/* requests not above limits (ValidateContainerResourceRequirements). */
static void check_resources(mu__verr_t *e, const char *cp, const json_t *c)
{
	const json_t *req = mu__jget(c, "resources.requests"), *lim = mu__jget(c, "resources.limits");
	const char *k;
	json_t *v;
	mu__path_t f;
	json_object_foreach((json_t *)req, k, v) {
		const json_t *l = json_object_get(lim, k);
		int64_t rq, lq;
		if (!l || !qty(v, &rq) || !qty(l, &lq) || rq <= lq)
			continue;
		char rv[220], lv[220];
		value_text(v, rv, sizeof rv);
		value_text(l, lv, sizeof lv);
		if (json_is_string(l)) /* Quantity.String(): unquoted */
			snprintf(lv, sizeof lv, "%.150s", json_string_value(l));
		mu__pathf(f, "%s.resources.requests", cp);
		mu__verr_add(e, f, INV, "Invalid value: %s: must be less than or equal to %.80s limit of %s", rv, k, lv);
	}
}

static void check_container(mu__verr_t *e, const char *cp, const json_t *c, const json_t *vols, int list)
{
	static const char *const pulls[] = {"Always", "IfNotPresent", "Never", NULL};
	static const char *const msgs[] = {"File", "FallbackToLogsOnError", NULL};
	if (!json_is_object(c))
		return;
	mu__path_t f;
	check_enum(e, cp, "imagePullPolicy", json_object_get(c, "imagePullPolicy"), pulls);
	const json_t *tmp = json_object_get(c, "terminationMessagePolicy");
	if (json_is_string(tmp) && !*json_string_value(tmp)) {
		mu__pathf(f, "%s.terminationMessagePolicy", cp);
		mu__verr_add(e, f, REQ, "Required value");
	} else
		check_enum(e, cp, "terminationMessagePolicy", tmp, msgs);
	check_ports(e, cp, c);
	check_env(e, cp, c);
	check_mounts(e, cp, c, vols);
	check_resources(e, cp, c);
	check_security(e, cp, json_object_get(c, "securityContext"), false);
	bool sidecar = list == 0 && json_is_string(json_object_get(c, "restartPolicy")) &&
		       !strcmp(str(c, "restartPolicy"), "Always");
	for (int p = 0; p < 3; p++) {
		const json_t *pr = json_object_get(c, probes[p]);
		if (!present(pr))
			continue;
		mu__pathf(f, "%s.%s", cp, probes[p]);
		if (list == 0 && !sidecar)
			mu__verr_add(e, f, FORB, "Forbidden: may not be set for init containers without "
				     "restartPolicy=Always");
		else
			check_probe(e, f, pr, p != 1);
	}
	static const char *const hooks[] = {"postStart", "preStop"};
	for (int h = 0; h < 2; h++) {
		const json_t *hd = json_object_get(json_object_get(c, "lifecycle"), hooks[h]);
		if (!present(hd))
			continue;
		mu__pathf(f, "%s.lifecycle", cp);
		if (list == 0 && !sidecar) {
			mu__verr_add(e, f, FORB, "Forbidden: may not be set for init containers without "
				     "restartPolicy=Always");
			break;
		}
		mu__pathf(f, "%s.lifecycle.%s", cp, hooks[h]);
		check_handler(e, f, hd, true);
	}
}

/* --- checks: the spec --------------------------------------------------- */

/* kube's pod spec checks beyond names, images and quantities (which
 * validate.c's check_containers does): volumes, each container's ports,
 * env, mounts, requests against limits, probes, lifecycle, security
 * context and enumerations, the pod's security context and dnsPolicy, and
 * ephemeral containers, refused on create and in templates.  base is the
 * spec's field path ("spec" or "spec.template.spec"); template says which
 * message refuses ephemeral containers.  Bounded by the spec's size
 * (mounts against volumes: their product, both under the body limit). */
void mu__check_pod_spec(const json_t *spec, const char *base, bool template, mu__verr_t *e)
{
	static const char *const dns[] = {"ClusterFirst", "ClusterFirstWithHostNet", "Default", "None", NULL};
	if (!json_is_object(spec))
		return;
	const json_t *vols = json_object_get(spec, "volumes");
	check_volumes(e, base, vols);
	for (int l = 0; l < 2; l++) {
		size_t i;
		json_t *c;
		json_array_foreach(json_object_get(spec, lists[l]), i, c) {
			mu__path_t cp;
			mu__pathf(cp, "%s.%s[%zu]", base, lists[l], i);
			check_container(e, cp, c, vols, l);
		}
	}
	if (json_array_size(json_object_get(spec, "ephemeralContainers"))) {
		mu__path_t f;
		mu__pathf(f, "%s.ephemeralContainers", base);
		mu__verr_add(e, f, FORB, "Forbidden: %s", template ? "ephemeral containers not allowed in pod template"
								    : "cannot be set on create");
	}
	check_security(e, base, json_object_get(spec, "securityContext"), true);
	check_enum(e, base, "dnsPolicy", json_object_get(spec, "dnsPolicy"), dns);
	mu__check_pod_sched(spec, base, e);
}

/* --- updates ------------------------------------------------------------ */

/* validateOnlyAddedTolerations: each old toleration is still there, only
 * its tolerationSeconds may differ. */
static void only_added_tolerations(mu__verr_t *e, const json_t *nw, const json_t *old)
{
	size_t i, j;
	json_t *o, *n;
	json_array_foreach(old, i, o) {
		bool found = false;
		json_array_foreach(nw, j, n) {
			json_t *a = json_deep_copy(o), *b = json_deep_copy(n);
			json_object_del(a, "tolerationSeconds");
			json_object_del(b, "tolerationSeconds");
			found = json_equal(a, b);
			json_decref(a);
			json_decref(b);
			if (found)
				break;
		}
		if (!found) {
			mu__verr_add(e, "spec.tolerations", FORB,
				     "Forbidden: existing toleration can not be modified except its tolerationSeconds");
			return;
		}
	}
}

/* validateOnlyDeletedSchedulingGates. */
static void only_deleted_gates(mu__verr_t *e, const json_t *nw, const json_t *old)
{
	size_t i, j;
	json_t *n, *o;
	json_array_foreach(nw, i, n) {
		bool had = false;
		json_array_foreach(old, j, o)
			had |= json_equal(json_object_get(o, "name"), json_object_get(n, "name"));
		if (!had) {
			mu__path_t f;
			mu__pathf(f, "spec.schedulingGates[%zu].name", i);
			mu__verr_add(e, f, FORB, "Forbidden: only deletion is allowed, but found new scheduling gate '%.64s'",
				     str(n, "name") ? str(n, "name") : "");
		}
	}
}

/* A copy of the new spec with what an update may change put back as it
 * was (kube's mungedPodSpec). */
static json_t *munged(const json_t *nw, const json_t *old)
{
	json_t *c = json_deep_copy(nw);
	if (!c)
		return NULL;
	for (int l = 0; l < 2; l++) {
		size_t i;
		json_t *ct;
		json_array_foreach(json_object_get(c, lists[l]), i, ct) {
			const json_t *oc = json_array_get(json_object_get(old, lists[l]), i);
			if (json_object_get(oc, "image"))
				json_object_set(ct, "image", json_object_get(oc, "image"));
			else
				json_object_del(ct, "image");
		}
	}
	static const char *const same[] = {"activeDeadlineSeconds", "tolerations", "schedulingGates"};
	for (int k = 0; k < 3; k++) {
		if (json_object_get(old, same[k]))
			json_object_set(c, same[k], json_object_get(old, same[k]));
		else
			json_object_del(c, same[k]);
	}
	const json_t *og = json_object_get(old, "terminationGracePeriodSeconds");
	const json_t *ng = json_object_get(c, "terminationGracePeriodSeconds");
	if (json_is_integer(og) && json_integer_value(og) < 0 && json_is_integer(ng) && json_integer_value(ng) == 1)
		json_object_set(c, "terminationGracePeriodSeconds", json_object_get(old, "terminationGracePeriodSeconds"));
	return c;
}

/* kube's ValidatePodUpdate on the spec: the tolerations and scheduling
 * gates rules, activeDeadlineSeconds only set or lowered, and nothing else
 * changed but the containers' images (and a negative grace period set to
 * 1).  The stored spec is compared as decoded now, with today's defaults
 * (a pod stored by an earlier muster, without some of them, is not
 * changed by a write that adds them), as kube defaults what it reads from
 * etcd.  Both specs are borrowed; a copy of old is made only when the
 * specs differ (not on status writes).  Bounded by their size
 * (tolerations against tolerations: their product). */
void mu__check_pod_update(const json_t *nw, const json_t *old, mu__verr_t *e)
{
	if (!json_is_object(nw) || !json_is_object(old))
		return;
	only_added_tolerations(e, json_object_get(nw, "tolerations"), json_object_get(old, "tolerations"));
	only_deleted_gates(e, json_object_get(nw, "schedulingGates"), json_object_get(old, "schedulingGates"));
	if (json_equal(nw, old))
		return;
	json_t *od = json_deep_copy(old);
	mu__defaults_pod_spec(od);
	mu__defaults_pod_only(od);
	if (od)
		old = od;
	const json_t *na = json_object_get(nw, "activeDeadlineSeconds"), *oa = json_object_get(old, "activeDeadlineSeconds");
	if (present(na) && json_is_integer(na)) {
		json_int_t v = json_integer_value(na);
		if (v < 0 || v > 2147483647) {
			mu__verr_add(e, "spec.activeDeadlineSeconds", INV,
				     "Invalid value: %lld: must be between 0 and 2147483647, inclusive", (long long)v);
			json_decref(od);
			return;
		}
		if (json_is_integer(oa) && json_integer_value(oa) < v) {
			mu__verr_add(e, "spec.activeDeadlineSeconds", INV,
				     "Invalid value: %lld: must be less than or equal to previous value", (long long)v);
			json_decref(od);
			return;
		}
	} else if (present(oa)) {
		mu__verr_add(e, "spec.activeDeadlineSeconds", INV,
			     "Invalid value: \"null\": must not update from a positive integer to nil value");
	}
	json_t *m = munged(nw, old);
	if (m && !json_equal(m, old))
		mu__verr_add(e, "spec", FORB, "Forbidden: pod updates may not change fields other than "
			     "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
			     "`spec.tolerations` (only additions to existing tolerations),"
			     "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)");
	json_decref(m);
	json_decref(od);
}

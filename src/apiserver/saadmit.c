/*
 * saadmit.c - kube-apiserver's ServiceAccount admission plugin
 * (plugin/pkg/admission/serviceaccount).  The part of
 * kube-controller-manager's serviceaccounts controller that makes each
 * namespace's `default` ServiceAccount is sactl.c (it creates through
 * api.c, which calls this file: kept apart so that no call loop joins
 * the two).
 *
 *   - Admission, on a Pod's create (from a client or from muster up's own
 *     controllers, which create pods through the same path): a pod naming
 *     no ServiceAccount gets `default` (the deprecated `serviceAccount`
 *     is read as the name when `serviceAccountName` is empty, as the v1
 *     conversion does, and is written back equal to it); a ServiceAccount
 *     that does not exist refuses the pod (403 "error looking up service
 *     account NS/NAME: serviceaccount "NAME" not found"); unless
 *     automountServiceAccountToken is false on the pod (or, when the pod
 *     says nothing, on the ServiceAccount) the pod gets the projected
 *     volume `kube-api-access-XXXXX` (token for 3607 s, the
 *     kube-root-ca.crt ConfigMap's ca.crt, the namespace from the downward
 *     API; defaultMode 420) and every container and init container that
 *     has no mount at /var/run/secrets/kubernetes.io/serviceaccount mounts
 *     it there read-only; and a pod without imagePullSecrets takes the
 *     ServiceAccount's.  Mirror pods are left alone.
 *   - A client's create of a pod that names `default` waits for it up to a
 *     second, as the plugin retries its lookup of `default`.
 *
 * Reads go through the store's current versions; work is bounded by the
 * pod's size (containers and volumes) and, for the resync, the number of
 * namespaces.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "apiserver/api_int.h"

#define SA_PATH "/var/run/secrets/kubernetes.io/serviceaccount"

/* The pod's ServiceAccount name: serviceAccountName, else the deprecated
 * serviceAccount, else "default". */
static const char *sa_name(const json_t *spec)
{
	const char *n = json_string_value(json_object_get(spec, "serviceAccountName"));
	if (!n || !*n)
		n = json_string_value(json_object_get(spec, "serviceAccount"));
	return n && *n ? n : "default";
}

/* o[k] = v (stolen), the key a literal (no UTF-8 check); returns v. */
static json_t *put(json_t *o, const char *k, json_t *v)
{
	json_object_set_new_nocheck(o, k, v);
	return v;
}

/* A one-member object {k: v} (v stolen). */
static json_t *one(const char *k, json_t *v)
{
	json_t *o = json_object();
	put(o, k, v);
	return o;
}

/* TokenVolumeSource: the projected volume kube's plugin adds.  Built
 * member by member (json_pack's parse of the format cost a quarter of the
 * plugin's work per pod). */
static json_t *token_volume(const char *name)
{
	json_t *v = json_object(), *srcs = json_array();
	put(v, "name", json_string(name));
	json_t *pr = put(v, "projected", json_object());
	put(pr, "defaultMode", json_integer(420));
	put(pr, "sources", srcs);
	json_t *tok = json_object();
	put(tok, "expirationSeconds", json_integer(3607));
	put(tok, "path", json_string_nocheck("token"));
	json_array_append_new(srcs, one("serviceAccountToken", tok));
	json_t *item = json_object();
	put(item, "key", json_string_nocheck("ca.crt"));
	put(item, "path", json_string_nocheck("ca.crt"));
	json_t *cm = json_object();
	put(cm, "items", json_array());
	json_array_append_new(json_object_get(cm, "items"), item);
	put(cm, "name", json_string_nocheck("kube-root-ca.crt"));
	json_array_append_new(srcs, one("configMap", cm));
	json_t *ref = json_object();
	put(ref, "apiVersion", json_string_nocheck("v1"));
	put(ref, "fieldPath", json_string_nocheck("metadata.namespace"));
	json_t *file = json_object();
	put(file, "fieldRef", ref);
	put(file, "path", json_string_nocheck("namespace"));
	json_t *items = json_array();
	json_array_append_new(items, file);
	json_array_append_new(srcs, one("downwardAPI", one("items", items)));
	return v;
}

/* mountServiceAccountToken: a kube-api-access-* volume the pod already
 * has is reused; each container without a mount at SA_PATH mounts it. */
static void mount_token(mu_apiserver_t *s, json_t *spec)
{
	json_t *vols = json_object_get(spec, "volumes");
	const char *have = NULL;
	size_t i;
	json_t *v;
	json_array_foreach(vols, i, v) {
		const char *n = json_string_value(json_object_get(v, "name"));
		if (n && !strncmp(n, "kube-api-access-", 16)) {
			have = n;
			break;
		}
	}
	char name[32];
	if (have) {
		snprintf(name, sizeof name, "%.31s", have);
	} else {
		char sfx[6];
		mu__name_suffix(s, sfx);
		snprintf(name, sizeof name, "kube-api-access-%s", sfx);
	}
	bool needed = false;
	static const char *const lists[] = {"initContainers", "containers"};
	for (int l = 0; l < 2; l++) {
		json_t *c;
		json_array_foreach(json_object_get(spec, lists[l]), i, c) {
			if (!json_is_object(c))
				continue;
			json_t *ms = json_object_get(c, "volumeMounts");
			bool mounted = false;
			size_t k;
			json_t *m;
			json_array_foreach(ms, k, m) {
				const char *mp = json_string_value(json_object_get(m, "mountPath"));
				mounted |= mp && !strcmp(mp, SA_PATH);
			}
			if (mounted)
				continue;
			if (!json_is_array(ms)) {
				ms = json_array();
				json_object_set_new(c, "volumeMounts", ms);
			}
			json_t *m2 = json_object();
			put(m2, "name", json_string(name));
			put(m2, "readOnly", json_true());
			put(m2, "mountPath", json_string_nocheck(SA_PATH));
			json_array_append_new(ms, m2);
			needed = true;
		}
	}
	if (have || !needed)
		return;
	if (!json_is_array(vols)) {
		vols = json_array();
		json_object_set_new(spec, "volumes", vols);
	}
	json_array_append_new(vols, token_volume(name));
}

/* ServiceAccount admission of a new pod (see the file's comment).  pod is
 * changed in place; returns MU_OK, or MU_ENOENT with msg set when the
 * ServiceAccount does not exist. */
int mu__sa_admit(mu_apiserver_t *s, json_t *pod, char *msg, size_t len)
{
	json_t *spec = json_object_get(pod, "spec");
	if (!json_is_object(spec))
		return MU_OK; /* validation answers */
	if (json_object_get(mu__jget(pod, "metadata.annotations"), "kubernetes.io/config.mirror"))
		return MU_OK;
	const char *ns = mu__jstr(pod, "metadata.namespace");
	char name[254];
	snprintf(name, sizeof name, "%s", sa_name(spec));
	mu__obj_t *o = mu__store_get(s->store, MU__RT_SERVICEACCOUNTS, ns ? ns : "", name);
	if (!o) {
		snprintf(msg, len, "error looking up service account %.63s/%.253s: serviceaccount \"%.253s\" not found",
			 ns ? ns : "", name, name);
		return MU_ENOENT;
	}
	/* the account is parsed only when it says something the plugin reads */
	json_t *sa = strstr(o->json, "\"automountServiceAccountToken\"") || strstr(o->json, "\"imagePullSecrets\"")
			     ? mu__obj_parse(o)
			     : NULL;
	mu__obj_unref(o);
	json_object_set_new(spec, "serviceAccountName", json_string(name));
	json_object_set_new(spec, "serviceAccount", json_string(name));
	const json_t *pa = json_object_get(spec, "automountServiceAccountToken");
	const json_t *sa_auto = json_object_get(sa, "automountServiceAccountToken");
	bool automount = json_is_boolean(pa) ? json_is_true(pa) : json_is_boolean(sa_auto) ? json_is_true(sa_auto) : true;
	if (automount)
		mount_token(s, spec);
	const json_t *ps = json_object_get(sa, "imagePullSecrets");
	if (!json_array_size(json_object_get(spec, "imagePullSecrets")) && json_array_size(ps)) {
		json_t *list = json_array();
		size_t i;
		json_t *x;
		json_array_foreach(ps, i, x)
			json_array_append_new(list, json_pack("{s:s}", "name",
							      json_string_value(json_object_get(x, "name"))
								      ? json_string_value(json_object_get(x, "name"))
								      : ""));
		json_object_set_new(spec, "imagePullSecrets", list);
	}
	json_decref(sa);
	return MU_OK;
}

/* kube's getServiceAccount retries its lookup of `default` (the
 * controller makes it soon after the namespace): a client's pod create
 * that names `default` in a namespace that has it not yet waits for it,
 * at most ten times 100 ms.  Called from the request threads only (never
 * from the controller thread, which makes the ServiceAccount). */
void mu__sa_wait_default(mu_apiserver_t *s, int rt, const json_t *obj)
{
	if (rt != MU__RT_PODS || strcmp(sa_name(json_object_get(obj, "spec")), "default"))
		return;
	const char *ns = mu__jstr(obj, "metadata.namespace");
	for (int i = 0; i < 10 && ns; i++) {
		mu__obj_t *o = mu__store_get(s->store, MU__RT_SERVICEACCOUNTS, ns, "default");
		if (o) {
			mu__obj_unref(o);
			return;
		}
		mu__obj_t *n = mu__store_get(s->store, MU__RT_NAMESPACES, NULL, ns);
		bool live = n && !n->deleting;
		mu__obj_unref(n);
		if (!live)
			return;
		struct timespec ts = {0, 100 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
}

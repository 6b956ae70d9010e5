/*
 * rootca.c - kube-controller-manager's root-ca-cert-publisher, as muster
 * up runs it on the controller thread beside the serviceaccounts
 * controller (sactl.c): every namespace that is not being deleted holds a
 * ConfigMap `kube-root-ca.crt` whose data is exactly {"ca.crt": the
 * cluster CA} (the CA the kubeconfig trusts: muster up's own CA, or the
 * serving certificate when no CA is given; "" on plain HTTP, as kube's
 * controller publishes an empty CA when it has none), annotated with
 * kube's `kubernetes.io/description`.  As kube's publisher, a namespace is
 * synced when it is added or updated, and a `kube-root-ca.crt` when it is
 * deleted (made again) or updated (its data put back, other keys of
 * `data` dropped, `binaryData` and other annotations kept).  The
 * `kube-api-access` projected volume of ServiceAccount admission
 * (saadmit.c) names this ConfigMap.  Work: one store read and at most one
 * write per synced namespace.
 */
#include <string.h>

#include "apiserver/api_int.h"
#include "apiserver/crd.h"
#include "apiserver/ssa.h"

#define ROOTCA_NAME "kube-root-ca.crt"
#define ROOTCA_KEY "ca.crt"
#define DESC_KEY "kubernetes.io/description"
/* The description kube's publisher sets (a constant of the API). */
#define DESC_TEXT                                                                                                 \
	"Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as " \
	"the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of "  \
	"Kubernetes clusters."

/* The CA published: what the kubeconfig trusts (never NULL). */
static const char *root_ca(const mu_apiserver_t *s)
{
	return s->root_ca_pem ? s->root_ca_pem : "";
}

typedef struct fix_ctx {
	const mu_apiserver_t *s;
	const mu__rtype_t *t;
} fix_ctx_t;

/* Puts data and the description back into the current ConfigMap when
 * either differs (kube: data deep-equal to {"ca.crt": CA} and a non-empty
 * description keep it).  Store's writer; one parse and copy. */
static int fix_fn(void *ctx, const mu__obj_t *cur, json_t **out)
{
	fix_ctx_t *c = ctx;
	if (!cur || cur->deleting)
		return MU__MUT_KEEP;
	json_t *old = mu__obj_parse(cur);
	if (!old)
		return MU_ENOMEM;
	const json_t *data = json_object_get(old, "data");
	const char *ca = json_string_value(json_object_get(data, ROOTCA_KEY));
	const char *desc = json_string_value(json_object_get(mu__jget(old, "metadata.annotations"), DESC_KEY));
	if (json_object_size(data) == 1 && ca && !strcmp(ca, root_ca(c->s)) && desc && *desc) {
		json_decref(old);
		return MU__MUT_KEEP;
	}
	json_t *nw = json_deep_copy(old);
	json_t *meta = nw ? json_object_get(nw, "metadata") : NULL;
	if (!json_is_object(meta)) {
		json_decref(old);
		json_decref(nw);
		return MU_ENOMEM;
	}
	json_object_set_new(nw, "data", json_pack("{s:s}", ROOTCA_KEY, root_ca(c->s)));
	json_t *ann = json_object_get(meta, "annotations");
	if (!json_is_object(ann)) {
		ann = json_object();
		json_object_set_new(meta, "annotations", ann);
	}
	json_object_set_new(ann, DESC_KEY, json_string(DESC_TEXT));
	mu__mf_controller(c->t, old, nw, "kube-controller-manager", false);
	json_decref(old);
	*out = nw;
	return MU__MUT_PUT;
}

/* The publisher's sync of namespace nsobj: creates its kube-root-ca.crt
 * when missing, else puts its data and description back.  Controller
 * thread; one store read and at most one write. */
static void sync_ns(mu_apiserver_t *s, const mu__obj_t *nsobj)
{
	if (nsobj->deleting)
		return;
	mu__obj_t *o = mu__store_get(s->store, MU__RT_CONFIGMAPS, nsobj->name, ROOTCA_NAME);
	if (o) {
		bool del = o->deleting;
		mu__obj_unref(o);
		if (!del) {
			fix_ctx_t c = {s, mu__type(s->types, MU__RT_CONFIGMAPS)};
			(void)mu__store_mutate(s->store, MU__RT_CONFIGMAPS, nsobj->name, ROOTCA_NAME, fix_fn, &c,
					       false, NULL);
		}
		return;
	}
	json_t *cm = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}}, s:{s:s}}", "apiVersion", "v1", "kind", "ConfigMap",
			       "metadata", "name", ROOTCA_NAME, "namespace", nsobj->name, "annotations", DESC_KEY,
			       DESC_TEXT, "data", ROOTCA_KEY, root_ca(s));
	mu__wtx_t *tx;
	if (cm && mu__store_begin(s->store, &tx) == MU_OK) {
		mu__create_by(s, tx, MU__RT_CONFIGMAPS, cm, "kube-controller-manager", NULL);
		mu__store_commit(tx);
	}
	json_decref(cm);
}

/* A change the controller thread saw: a namespace added or updated is
 * synced, and so is the namespace of a kube-root-ca.crt deleted or
 * updated.  At most one sync. */
void mu__rootca_event(mu_apiserver_t *s, const mu__wev_t *ev)
{
	if (!ev->obj)
		return;
	if (ev->obj->rt == MU__RT_NAMESPACES && ev->type != MU__EV_DELETED) {
		sync_ns(s, ev->obj);
	} else if (ev->obj->rt == MU__RT_CONFIGMAPS && ev->type != MU__EV_ADDED && ev->obj->ns &&
		   !strcmp(ev->obj->name, ROOTCA_NAME)) {
		mu__ns_of(s, ev->obj, sync_ns);
	}
}

/* Every namespace is synced (at the controller thread's start and after
 * it fell behind the change stream).  Bounded by the number of
 * namespaces. */
void mu__rootca_resync(mu_apiserver_t *s)
{
	mu__ns_each(s, sync_ns);
}

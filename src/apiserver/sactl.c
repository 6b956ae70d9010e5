/*
 * sactl.c - the part of kube-controller-manager's serviceaccounts
 * controller that muster up runs: when a namespace is added (and for
 * every namespace when the controller thread starts) a ServiceAccount
 * `default` is created in it if there is none, recorded as
 * kube-controller-manager's; a deleted `default` is made again, as
 * kube's controller does.  ServiceAccount admission of pods, which
 * waits for that account, is saadmit.c.  It also holds the two walks it
 * shares with rootca.c: every namespace, and an object's namespace.
 * Work is one store read and at most one create per namespace.
 */
#include <string.h>

#include "apiserver/api_int.h"

/* The serviceaccounts controller's sync of namespace ns: its `default`
 * ServiceAccount is created when missing (not in a namespace being
 * deleted).  Controller thread; one store read and at most one write. */
static void ensure_default(mu_apiserver_t *s, const mu__obj_t *nsobj)
{
	if (nsobj->deleting)
		return;
	mu__obj_t *o = mu__store_get(s->store, MU__RT_SERVICEACCOUNTS, nsobj->name, "default");
	if (o) {
		mu__obj_unref(o);
		return;
	}
	json_t *sa = json_pack("{s:s, s:s, s:{s:s, s:s}}", "apiVersion", "v1", "kind", "ServiceAccount", "metadata",
			       "name", "default", "namespace", nsobj->name);
	mu__wtx_t *tx;
	if (sa && mu__store_begin(s->store, &tx) == MU_OK) {
		mu__create_by(s, tx, MU__RT_SERVICEACCOUNTS, sa, "kube-controller-manager", NULL);
		mu__store_commit(tx);
	}
	json_decref(sa);
}

/* A change the controller thread saw: a namespace added gets its
 * `default` ServiceAccount, and a deleted `default` is made again. */
void mu__sactl_event(mu_apiserver_t *s, const mu__wev_t *ev)
{
	if (!ev->obj)
		return;
	if (ev->type == MU__EV_ADDED && ev->obj->rt == MU__RT_NAMESPACES) {
		ensure_default(s, ev->obj);
	} else if (ev->type == MU__EV_DELETED && ev->obj->rt == MU__RT_SERVICEACCOUNTS &&
		   !strcmp(ev->obj->name, "default")) {
		/* kube's controller queues the namespace of a deleted
		 * ServiceAccount and makes `default` again (not while the
		 * namespace is being deleted). */
		mu__ns_of(s, ev->obj, ensure_default);
	}
}

/* sync on the namespace of obj (borrowed), when obj is namespaced and the
 * namespace exists.  One store read. */
void mu__ns_of(mu_apiserver_t *s, const mu__obj_t *obj, mu__ns_sync_fn sync)
{
	if (!obj->ns)
		return;
	mu__obj_t *n = mu__store_get(s->store, MU__RT_NAMESPACES, NULL, obj->ns);
	if (n)
		sync(s, n);
	mu__obj_unref(n);
}

/* sync on every namespace, each borrowed for the call.  Bounded by the
 * number of namespaces. */
void mu__ns_each(mu_apiserver_t *s, mu__ns_sync_fn sync)
{
	mu__page_t pg;
	if (mu__store_list(s->store, MU__RT_NAMESPACES, NULL, NULL, 1000000, NULL, NULL, &pg) != MU_OK)
		return;
	for (size_t i = 0; i < pg.n; i++)
		sync(s, pg.objs[i]);
	mu__page_release(&pg);
}

/* Every namespace gets its `default` ServiceAccount (at the controller
 * thread's start and after it fell behind the change stream).  Bounded
 * by the number of namespaces. */
void mu__sactl_resync(mu_apiserver_t *s)
{
	mu__ns_each(s, ensure_default);
}

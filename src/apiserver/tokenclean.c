/*
 * tokenclean.c - kube-controller-manager's tokencleaner
 * (pkg/controller/bootstrap/tokencleaner.go): a bootstrap token Secret
 * (type bootstrap.kubernetes.io/token in kube-system) whose
 * data.expiration has passed is deleted, with its uid as the
 * precondition.  As kube's GetExpiration: no expiration never expires, an
 * unparsable one counts as expired (the authenticator in rbac.c refuses
 * such a token too), and a future one is looked at again when it falls
 * due (kube's queue.AddAfter(ttl)).  muster up's controller thread
 * (server.c) runs a pass at start, after any write of a Secret in
 * kube-system, and when the earliest expiration it saw falls due.
 *
 * Work per pass: one list of kube-system's Secrets; deletions are
 * committed MU__TX_MAX at a time.  Nothing is kept between passes but the
 * returned deadline, which the caller owns.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "apiserver/api_int.h"

#define NS "kube-system"
#define TYPE "bootstrap.kubernetes.io/token"

static const char *nz(const char *s)
{
	return s ? s : "";
}

/* When the token of Secret j expires (epoch seconds): INT64_MAX when it
 * names no expiration, 0 when it cannot be read (expired, as kube's). */
static int64_t expiration(const json_t *j)
{
	const char *v = json_string_value(json_object_get(json_object_get(j, "data"), "expiration"));
	if (!v)
		return INT64_MAX;
	char buf[128];
	size_t n;
	if (mu__b64dec(v, buf, sizeof buf - 1, &n) != MU_OK)
		return 0;
	buf[n] = '\0';
	if (!n)
		return INT64_MAX; /* GetData returned "": len(expiration) == 0 */
	int64_t t = mu__parse_rfc3339(buf);
	return t < 0 ? 0 : t;
}

int64_t mu__tokenclean(mu_apiserver_t *s, int64_t now)
{
	mu__page_t pg;
	int64_t next = INT64_MAX;
	if (mu__store_list(s->store, MU__RT_SECRETS, NS, NULL, 100000, NULL, NULL, &pg) != MU_OK)
		return now + 10; /* out of memory: try again soon */
	mu__wtx_t *tx = NULL;
	int n = 0;
	for (size_t i = 0; i < pg.n; i++) {
		if (pg.objs[i]->deleting)
			continue;
		json_t *j = mu__obj_parse(pg.objs[i]);
		if (!j || strcmp(nz(mu__jstr(j, "type")), TYPE)) {
			json_decref(j);
			continue;
		}
		int64_t exp = expiration(j);
		if (exp > now) {
			if (exp < next)
				next = exp;
		} else if (tx || mu__store_begin(s->store, &tx) == MU_OK) {
			if (!s->o.quiet)
				fprintf(stderr, "muster up: deleting expired bootstrap token Secret %s/%s\n", NS,
					pg.objs[i]->name);
			mu__delete_in(tx, MU__RT_SECRETS, NS, pg.objs[i]->name, -1, nz(mu__jstr(j, "metadata.uid")), NULL,
				      false, NULL);
			if (++n % MU__TX_MAX == 0) {
				mu__store_commit(tx);
				tx = NULL;
			}
		}
		json_decref(j);
	}
	if (tx)
		mu__store_commit(tx);
	mu__page_release(&pg);
	return next;
}

bool mu__tokenclean_event(const mu__wev_t *ev)
{
	return ev->type != MU__EV_DELETED && ev->obj->rt == MU__RT_SECRETS && ev->obj->ns &&
	       !strcmp(ev->obj->ns, NS);
}

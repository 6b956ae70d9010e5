/*
 * api_int.h - what the REST handler files (api.c, watch.c, podsub.c,
 * discovery.c) share: answers and filters (respond.c, which calls none of
 * the handlers back), and the handlers themselves.  Every handler borrows
 * the request and fills the response.
 */
#ifndef MUSTER_API_INT_H
#define MUSTER_API_INT_H

#include "apiserver/apiserver_int.h"

/* A list or watch filter: namespace ("" or NULL = all) and selectors. */
typedef struct mu__filter {
	const char *ns;
	mu__sel_t *ls, *fs;
} mu__filter_t;

/* Parses the request's selectors (answers 400 and fails on error). */
int mu__filter_init(mu__filter_t *f, const mu__rtype_t *t, const mu__req_t *rq, mu__resp_t *rs);
void mu__filter_release(mu__filter_t *f);
bool mu__filter_match(void *ctx, const mu__obj_t *o);

void mu__resp_err(mu__resp_t *rs, int code, const char *reason, const mu__rtype_t *t,
		  const char *name, const mu__verr_t *e, const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));
void mu__resp_success(mu__resp_t *rs, int code);
void mu__resp_invalid(mu__resp_t *rs, const mu__rtype_t *t, const char *name, const mu__verr_t *e);
void mu__resp_obj(mu__resp_t *rs, const mu__req_t *rq, int code, mu__obj_t *o);
void mu__resp_store_err(mu__resp_t *rs, int rc, const mu__rtype_t *t, const char *name);

/* Admission (admission.c): the Priority plugin on pods (sets
 * spec.priority and spec.preemptionPolicy from the PriorityClass) and one
 * global default PriorityClass.  MU_OK, or an error with kube-apiserver's
 * message in msg (answered 403). */
int mu__admit(mu_apiserver_t *s, int rt, json_t *obj, char *msg, size_t len);

/* Whether a write made under the lease term in obj's annotation
 * muster.io/lease-term (NS/NAME:HOLDER:TRANSITIONS) may go through (yes
 * without one); msg says why not (podsub.c). */
bool mu__lease_term_current(mu_apiserver_t *s, const json_t *obj, char *msg, size_t len);

void mu__timestamp(char *buf, size_t len, bool micro);
int mu__prepare_create(mu_apiserver_t *s, const mu__rtype_t *t, json_t *obj, mu__verr_t *e);
bool mu__check_kind(const mu__rtype_t *t, json_t *obj, mu__resp_t *rs);
bool mu__fix_namespace(const mu__rtype_t *t, json_t *obj, const char *url_ns, mu__resp_t *rs);
bool mu__namespace_exists(mu_apiserver_t *s, const char *ns, mu__resp_t *rs);
int mu__finish_update(const mu__rtype_t *t, const json_t *old, json_t **newp, bool status_sub,
		      mu__verr_t *e);

void mu__do_create(mu_apiserver_t *s, const mu__req_t *rq, mu__resp_t *rs, int rt, json_t *obj);
void mu__do_update(mu_apiserver_t *s, const mu__req_t *rq, mu__resp_t *rs, int rt, json_t *body);
void mu__do_patch(mu_apiserver_t *s, const mu__req_t *rq, mu__resp_t *rs, int rt, json_t *body);
void mu__do_get(mu_apiserver_t *s, const mu__req_t *rq, mu__resp_t *rs, int rt);
void mu__do_list(mu_apiserver_t *s, const mu__req_t *rq, mu__resp_t *rs, int rt);
void mu__do_watch(mu_apiserver_t *s, const mu__req_t *rq, mu__resp_t *rs, int rt);
void mu__do_delete(mu_apiserver_t *s, const mu__req_t *rq, mu__resp_t *rs, int rt);
void mu__do_delete_collection(mu_apiserver_t *s, const mu__req_t *rq, mu__resp_t *rs, int rt);
void mu__do_binding(mu_apiserver_t *s, const mu__req_t *rq, mu__resp_t *rs, json_t *body);
void mu__do_eviction(mu_apiserver_t *s, const mu__req_t *rq, mu__resp_t *rs, json_t *body);
void mu__do_scale(mu_apiserver_t *s, const mu__req_t *rq, mu__resp_t *rs, int rt, const json_t *body);

/* Deletes per Kubernetes rules inside a transaction: pods on a node (and
 * objects with finalizers) get a deletionTimestamp, others go at once.
 * grace < 0 means the object's own default.  *res gets the answer object. */
int mu__delete_in(mu__wtx_t *tx, int rt, const char *ns, const char *name, int64_t grace,
		  const char *uid, const char *rv, bool dry, mu__obj_t **res);

#endif

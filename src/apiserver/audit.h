/*
 * audit.h - kube-apiserver's audit log for `muster up` (audit.c): an
 * audit.k8s.io/v1 Policy read from --audit-policy-file decides each
 * request's level (first matching rule wins, no match = None), and the
 * requests at Metadata or above are written to --audit-log-path as one
 * audit.k8s.io/v1 Event per line per stage by a writer thread.
 *
 * http.c calls mu__audit_begin() when a request is complete, tells the
 * record who asked and what authorization decided, and ends it with
 * mu__audit_end() (and mu__audit_complete() when a watch ends).  With no
 * policy the server holds no mu__audit_t and none of this runs.
 */
#ifndef MUSTER_APISERVER_AUDIT_H
#define MUSTER_APISERVER_AUDIT_H

#include <stdbool.h>
#include <stddef.h>

#include "apiserver/apiserver_int.h"

enum { MU__AUDIT_NONE = 0, MU__AUDIT_METADATA, MU__AUDIT_REQUEST, MU__AUDIT_RR };
enum { MU__STAGE_RECEIVED = 1, MU__STAGE_STARTED = 2, MU__STAGE_COMPLETE = 4, MU__STAGE_PANIC = 8 };

typedef struct mu__audit_policy mu__audit_policy_t;

/* What a rule matches on (kube's authorizer.Attributes). */
typedef struct mu__audit_attrs {
	const mu__user_t *user;   /* NULL: not authenticated */
	const char *verb;         /* kube's verb, or the lower-case method of a non-resource request */
	bool resource;            /* a resource request (else path is matched) */
	const char *group, *resource_name, *sub, *ns, *name;
	const char *path;
} mu__audit_attrs_t;

/* Parses an audit.k8s.io/v1 Policy (YAML or JSON) named file.  MU_OK with
 * *out (caller frees with mu__audit_policy_free), or MU_EPARSE/MU_EINVAL
 * with kube's message naming the field ("rules[2].level: ...").  O(len). */
int mu__audit_policy_parse(const char *file, const char *buf, size_t len, mu__audit_policy_t **out,
			   char *err, size_t errlen);
void mu__audit_policy_free(mu__audit_policy_t *p);
/* The level of the first rule matching a (MU__AUDIT_NONE when none), its
 * omitted stages (rule's and policy's, MU__STAGE_* bits) and whether
 * managedFields are left out.  O(rules x their lists). */
int mu__audit_level(const mu__audit_policy_t *p, const mu__audit_attrs_t *a, unsigned *omit_stages,
		    bool *omit_mf);

typedef struct mu__audit mu__audit_t;
typedef struct mu__audit_rec mu__audit_rec_t;

/* Reads policy_file and opens log_path ("-" = stdout; appended, made 0600)
 * with its writer thread.  MU_OK with *out, or an error with a message
 * naming the file. */
int mu__audit_open(const char *policy_file, const char *log_path, mu__audit_t **out, char *err,
		   size_t errlen);
/* Writes what is queued, stops the writer and frees a (NULL: no-op). */
void mu__audit_close(mu__audit_t *a);

/* A request's record, begun when its head and body are in: the received
 * time and the audit ID (the client's Audit-ID header, else a new UUID).
 * NULL when out of memory. */
mu__audit_rec_t *mu__audit_begin(mu_apiserver_t *s, const char *client_id);
const char *mu__audit_id(const mu__audit_rec_t *r);
/* The authenticated user (copied), before impersonation. */
void mu__audit_user(mu__audit_rec_t *r, const mu__user_t *u);
/* Authorization's decision for user u (the impersonated one when it
 * differs from the authenticated one) and its reason. */
void mu__audit_authz(mu__audit_rec_t *r, const mu__user_t *u, bool allow, const char *reason);
/* Evaluates the policy and queues the RequestReceived event and then
 * ResponseComplete, or ResponseStarted for a watch (rs->watch): then the
 * record is kept for mu__audit_complete() and true is returned; else the
 * record is freed.  peer: the client's address; xff: X-Forwarded-For. */
bool mu__audit_end(mu_apiserver_t *s, mu__audit_rec_t *r, const char *method, const char *target,
		   const mu__req_t *rq, const mu__resp_t *rs, const char *peer, const char *xff);
/* A watch's ResponseComplete, and frees r (NULL: no-op). */
void mu__audit_complete(mu_apiserver_t *s, mu__audit_rec_t *r);

#endif

/*
 * crd.h - CustomResourceDefinitions (apiextensions.k8s.io/v1): the types a
 * CRD makes (crdreg.c, the registry of built-in and custom types the
 * server serves) and the structural schemas their objects are pruned,
 * defaulted and validated against (crd.c).
 *
 * A custom type's index (rt) is MU__RT_COUNT + its slot.  A slot, once
 * given to a group/plural, keeps it for the server's life; a CRD update
 * that changes what the type is (names, versions, schemas) publishes a new
 * mu__crdtype_t in the slot and keeps the old one until the registry is
 * freed, since readers hold pointers to it without locks.
 */
#ifndef MUSTER_APISERVER_CRD_H
#define MUSTER_APISERVER_CRD_H

#include <stdatomic.h>

#include "apiserver/apiserver_int.h"
#include "apiserver/schema.h"

#define MU__CRD_MAX 256     /* custom types a server serves */
#define MU__CRD_VERSIONS 8  /* versions of one CRD */
#define MU__CRD_COLS 16     /* printer columns of one CRD */
#define MU__CRD_FIELDS 8    /* selectable fields of one CRD */
#define MU__RT_MAX (MU__RT_COUNT + MU__CRD_MAX)

typedef struct mu__crdtype {
	mu__rtype_t t;            /* first: mu__crdtype() casts back; strings point into crd */
	json_t *crd;              /* the CRD as registered (owned, never changed) */
	int nver, storage;        /* versions; the index of the storage version */
	struct {
		const char *name;
		bool served;
		const json_t *schema; /* openAPIV3Schema (borrowed from crd) */
	} v[MU__CRD_VERSIONS];
	const char *shortnames[3];
	const char *categories[4];
	mu__col_t cols[MU__CRD_COLS + 2];
	const char *colpath[MU__CRD_COLS + 2]; /* JSONPath of each column, NULL for Name/Age */
	const char *fields[MU__CRD_FIELDS + 1];
	char fieldbuf[MU__CRD_FIELDS][128];
	char listkind[128];
	char singular[128];       /* spec.names.singular, else the kind in lower case */
	/* the scale subresource of the storage version (MU__SUB_SCALE): the
	 * dotted paths (no leading ".") of spec.replicas, status.replicas and
	 * status.selector in an object; selector NULL when not given */
	const char *scale_spec, *scale_status, *scale_selector;
	bool conv_webhook;        /* spec.conversion.strategy is Webhook (crd_conv.c) */
	struct mu__conv_pool *conv_pool; /* its kept-alive webhook connections (crd_webhook.c), or NULL */
	atomic_bool served;       /* false once its CRD is deleted */
	unsigned long seq;        /* registration number: changes with every new spec */
	struct mu__crdtype *retired; /* older versions of this slot */
} mu__crdtype_t;

/* --- CEL validation rules (crd_cel.c) ------------------------------------ */

/* Runs the x-kubernetes-validations rules of schema node s on v (the value
 * at path; ov the value there before an update, or NULL), adding a cause
 * to e for each that does not hold.  A transition rule (one that reads
 * oldSelf) runs only when ov is there, as kube-apiserver runs it; with
 * transitions_only, only those run (a ratcheted value, crd.c). */
void mu__crd_cel_check(const json_t *v, const json_t *ov, const json_t *s, const char *path, mu__verr_t *e,
		       bool transitions_only);
/* Checks the rules of schema node s (at path): a cause in e for each that
 * is not CEL; text appended to warn (may be NULL) for each that muster does
 * not evaluate. */
void mu__crd_cel_schema(const json_t *s, const char *path, mu__verr_t *e, char *warn, size_t warnlen);
/* The warning of a (valid) CRD: the rules of its schemas muster does not
 * evaluate, appended to warn ("" when none).  Bounded by the schemas. */
void mu__crd_cel_warnings(const json_t *crd, char *warn, size_t warnlen);
/* Whether muster evaluates rule (an entry of x-kubernetes-validations). */
bool mu__crd_cel_evaluated(const json_t *rule);

/* --- string formats (crd_format.c) -------------------------------------- */

/* Whether kube-apiserver validates format (apiextensions' supported list,
 * compared with dashes removed); other formats are dropped from a schema. */
bool mu__crd_format_supported(const char *format);
/* Whether the string s is valid in format (true for a format that is not
 * supported).  Linear in strlen(s). */
bool mu__crd_format_ok(const char *format, const char *s);

/* --- versions and conversion (crd_conv.c) ------------------------------- */

/* Before a request for custom type c (rt; NULL: built-in): the request to
 * serve: rq itself, or for a Webhook strategy *out, a copy of rq (at a
 * version other than the storage version, at the storage version with its
 * body converted: *owned, the caller frees; a Table asks for full rows);
 * NULL with rs filled when that fails (the webhook's error, or an apply). */
const mu__req_t *mu__crd_conv_before(mu_apiserver_t *s, int rt, const mu__crdtype_t *c, const mu__req_t *rq,
				     mu__req_t *out, char **owned, mu__resp_t *rs);
/* Whether the request use that mu__crd_conv_before made of rq (a patch
 * written as a replace) lost to a concurrent write (rs a 409) and should be
 * made again: kube's patcher retries such a conflict. */
bool mu__crd_conv_retry(const mu__req_t *rq, const mu__req_t *use, const mu__resp_t *rs);
/* After it: the answer's objects (or the watch's) in the version rq named,
 * by rewriting apiVersion (None) or by the webhook (a 500 with kube's
 * message when it fails).  Bounded by the answer's size and one call. */
void mu__crd_conv_after(const mu__crdtype_t *c, const mu__req_t *rq, mu__resp_t *rs);
/* --- conversion webhooks (crd_webhook.c) -------------------------------- */

/* The ConversionReview version muster sends for crd ("v1" or "v1beta1",
 * the first of conversionReviewVersions kube knows), or NULL. */
const char *mu__crd_conv_review_version(const json_t *crd);
/* Checks a webhook's answer (body, untrusted) to a review_ver
 * ConversionReview with uid, as kube does; MU_OK with *out its
 * convertedObjects (a new reference), else an error and err. */
int mu__crd_conv_response(const char *body, size_t len, const char *review_ver, const char *uid, json_t **out,
			  char *err, size_t errlen);
/* Puts the converted objects (in order) in place of the objects of objs
 * not in apiVersion desired, with kube's checks (count, apiVersion, kind,
 * name, namespace, uid) and the originals' metadata but the converted
 * labels and annotations; else an error and err ("returned ..."). */
int mu__crd_conv_merge(json_t *objs, const json_t *converted, const char *desired, char *err, size_t errlen);
/* Converts the objects of objs (an array, changed in place) that are not in
 * apiVersion desired with c's webhook: one HTTPS call (30 s at most); an
 * error with kube's message ("conversion for ... failed: ...") in err. */
int mu__crd_webhook_convert(const mu__crdtype_t *c, json_t *objs, const char *desired, char *err, size_t errlen);
/* Kept-alive connections to one webhook (at most 4 idle, shared by the
 * request threads under a mutex), as kube's client keeps them: made for a
 * Webhook type when it is registered, freed with it (crdreg.c). */
struct mu__conv_pool *mu__crd_conv_pool_new(void);
void mu__crd_conv_pool_free(struct mu__conv_pool *p);
/* A watch event's object (json) in apiVersion av through c's webhook: the
 * text (caller frees), or NULL when it needs no conversion (err "") or the
 * conversion failed (err says why). */
char *mu__crd_conv_event(const mu__crdtype_t *c, const char *json, size_t len, const char *av, size_t *outlen,
			 char *err, size_t errlen);

/* --- the registry (crdreg.c) -------------------------------------------- */

typedef struct mu__types mu__types_t;

int mu__types_new(mu__types_t **out);
/* Frees every custom type: call after the store (whose objects point at
 * them) is closed. */
void mu__types_free(mu__types_t *r);
/* The type of rt (built-in or custom), or NULL when rt is no type.  O(1). */
const mu__rtype_t *mu__type(const mu__types_t *r, int rt);
/* One past the highest rt in use (iterate and skip mu__type_served()). */
int mu__types_end(const mu__types_t *r);
/* Whether rt is served now (built-in types always are). */
bool mu__type_served(const mu__types_t *r, int rt);
/* The served type of group/version/plural (any served version of a CRD), or
 * -1.  O(types). */
int mu__type_find(const mu__types_t *r, const char *group, const char *version, const char *plural);
/* The type stored under "group/plural" (the store's key), served or not,
 * or -1. */
int mu__type_by_res(const mu__types_t *r, const char *res);
/* Serves the type a CRD object (borrowed; validated) defines; returns its rt,
 * the built-in rt when the CRD names a type muster serves itself (its
 * schema is then not used), or a negative error with a message (MU_ELIMIT
 * past MU__CRD_MAX types). */
int mu__types_put(mu__types_t *r, const json_t *crd, char *err, size_t errlen);
/* Stops serving the custom type rt (its CRD is being deleted). */
void mu__types_unserve(mu__types_t *r, int rt);
/* The custom type behind t, or NULL for a built-in type. */
const mu__crdtype_t *mu__crdtype(const mu__rtype_t *t);
/* The index of version v of a custom type, or -1 when it is not served. */
int mu__crd_version(const mu__crdtype_t *c, const char *v);

/* --- CRDs and structural schemas (crd.c) -------------------------------- */

/* Checks a CRD object as kube-apiserver's apiextensions validation does
 * (names, group, scope, versions, exactly one storage version, a
 * structural schema per version); old is the stored version on update. */
void mu__validate_crd(const json_t *obj, const json_t *old, mu__verr_t *e);
/* A CRD's status as the apiextensions controllers set it: NamesAccepted
 * and Established, acceptedNames, storedVersions (kept from old with the
 * storage version added; as obj has them on a write to /status). */
void mu__crd_status(json_t *obj, const json_t *old, bool status_sub);
/* Prunes obj (a custom object of version vi) of fields its schema does not
 * know (unless x-kubernetes-preserve-unknown-fields), noting them in u, and
 * fills defaults.  Bounded by the object's size and MU__MAX_DEPTH. */
void mu__crd_prune(const mu__crdtype_t *c, int vi, json_t *obj, bool prune, mu__unknown_t *u);
/* Validates obj against the schema of version vi (types, required, enum,
 * bounds, lengths, patterns, list types, CEL rules); old is the object
 * before an update (NULL on a create), for transition rules and
 * ratcheting (the errors of a value left unchanged are dropped, as kube
 * 1.30+ does); causes go to e. */
void mu__crd_validate(const mu__crdtype_t *c, int vi, const json_t *obj, const json_t *old, mu__verr_t *e);
/* Checks that a schema is structural (every node has a type, or is
 * x-kubernetes-int-or-string or x-kubernetes-preserve-unknown-fields; no
 * forbidden keywords); causes at path go to e. */
void mu__crd_check_schema(const json_t *schema, const char *path, mu__verr_t *e);
/* A table row for a custom object: Name, the printer columns, Age. */
void mu__crd_row(const mu__crdtype_t *c, const json_t *obj, int64_t now, json_t *cells);

#endif

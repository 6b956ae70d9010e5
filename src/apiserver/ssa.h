/*
 * ssa.h - field ownership (metadata.managedFields) and server-side apply
 * (ssa.c), for the REST handlers.
 */
#ifndef MUSTER_APISERVER_SSA_H
#define MUSTER_APISERVER_SSA_H

#include "apiserver/apiserver_int.h"

/* Who writes and how: the field manager of a request. */
typedef struct mu__mgr {
	char name[132];          /* fieldManager, else the user agent up to '/' */
	char api_version[96];    /* of the endpoint */
	bool status_sub;         /* a write to the status (or approval) subresource */
	bool status_meta;        /* ... a Job's /status, which keeps metadata too
	                          * (api.c): the fields tracked are all but spec */
	char sub[16];            /* "status", "approval" or "" */
	bool reset_status;       /* the main resource does not write status */
	bool builtin;            /* strategic merge for apply */
	bool force;              /* force=true: conflicts change owner */
	int model;               /* schema model of the kind, or -1 */
	bool verbatim;           /* the write's managedFields are final
	                          * (mu__req_t.mf_final): nothing recorded */
	bool whole;              /* mu__mf_record walks the whole objects,
	                          * equal members too (tests: the reference) */
} mu__mgr_t;

/* Fills m from the request and its type.  MU_OK, or MU_EINVAL with a
 * message (an invalid fieldManager: 422). */
int mu__mgr_init(mu__mgr_t *m, const mu__req_t *rq, const mu__rtype_t *t, char *msg, size_t msglen);

/* Fills m for a write by one of muster up's own controllers, named as
 * the kube component that makes that write ("kubelet",
 * "kube-controller-manager"): status_sub for a status write (the
 * /status subresource's part), else a main-resource write, which for a
 * kind with a status subresource owns no status. */
void mu__mgr_controller(mu__mgr_t *m, const mu__rtype_t *t, const char *name, bool status_sub);

/* What mu__mf_controller(t, old, ..., status_sub) reads of old, as a deep
 * copy (the caller's) to keep before changing obj in place: for a status
 * write only its status, not the whole object with its managedFields
 * (the simulated kubelet's write after every bind).  NULL on OOM.  Work:
 * a copy of that part. */
json_t *mu__mf_before(const mu__rtype_t *t, const json_t *obj, bool status_sub);

/* Records in nw's managedFields that controller `name` changed old into
 * nw (mu__mgr_controller, then mu__mf_record). */
void mu__mf_controller(const mu__rtype_t *t, const json_t *old, json_t *nw, const char *name, bool status_sub);

/* Whether a write's metadata.managedFields (mf) replace the stored ones,
 * as kube's field manager decodes them: a non-empty list of entries each
 * with operation Apply or Update, fieldsType FieldsV1 and a fieldsV1
 * object.  An empty list, or one with an entry that does not decode,
 * keeps the stored entries (so that clients unaware of the field do not
 * strip it); [{}] clears them. */
bool mu__mf_given(const json_t *mf);

/* The FieldsV1 set of every field of obj that a manager can own. */
json_t *mu__fieldset(const json_t *obj, const mu__mgr_t *m);

/* Records a create (old NULL) or an update from old to nw by m (operation
 * Update) in nw's metadata.managedFields (the entries nw carries: old's,
 * or those the write set, mu__mf_given).  On a create every field of nw
 * is m's and leaves the given entries, which keep what they claim outside
 * nw (and their times), as kube's structured-merge update from an empty
 * live object does.  An update leaves out the top-level members other
 * than metadata that old and nw hold equal (unless m->whole), which
 * changes nothing in the record.  Work: O(size of old and nw) for the
 * comparison, then O(size of the members that differ and of the sets). */
void mu__mf_record(const json_t *old, json_t *nw, const mu__mgr_t *m);

/* Records the creation of obj by an apply of configuration applied. */
void mu__mf_apply_create(json_t *obj, const json_t *applied, const mu__mgr_t *m);

/* Server-side apply of configuration applied onto old (operation Apply):
 * MU_OK with *out (the new object with managedFields; caller owns),
 * MU_ESTATE on conflicts (msg as kube words it, one FieldManagerConflict
 * cause per field in e), or another error with msg. */
int mu__ssa_apply(const json_t *old, const json_t *applied, const mu__mgr_t *m, json_t **out, char *msg,
		  size_t msglen, mu__verr_t *e);

/* Converts the objects of array objs in place to apiVersion av (a custom
 * type's conversion webhook, crd_conv.c): MU_OK, MU_ENOENT when av is not
 * a version of the kind, or another error with msg. */
typedef int (*mu__ssa_conv_fn)(void *ctx, json_t *objs, const char *av, char *msg, size_t msglen);

/* mu__ssa_apply at version m->api_version (old converted to it), as
 * kube's structured-merge manager applies at a request's version: the
 * managedFields entries at that version are compared on old, each other
 * version's on old and the merged object converted to it by conv (one
 * call per version), where a manager conflicts on the fields it owns
 * whose values the apply changed or added, and loses those it removed
 * (kube's Updater.update); entries at a version conv does not know are
 * dropped.  What the applier stopped applying is removed at the version
 * of its last apply (converted there and back, what the new apply and
 * the managers at m's version own put back, as kube's Updater.prune).
 * conv NULL: every entry is compared on old (mu__ssa_apply). */
int mu__ssa_apply_conv(const json_t *old, const json_t *applied, const mu__mgr_t *m, mu__ssa_conv_fn conv,
		       void *ctx, json_t **out, char *msg, size_t msglen, mu__verr_t *e);

/* The controllers' memo (ssa.c): what status writes of one shape recorded
 * in managedFields, kept for the next write of that shape (the simulated
 * kubelets start every pod and renew every node the same way).  One
 * thread at a time; at most 32 shapes of at most 64 KiB of key. */
typedef struct mu__mf_memo mu__mf_memo_t;

/* A new empty memo (NULL on OOM: mu__mf_memo_record then records in full). */
mu__mf_memo_t *mu__mf_memo_new(void);
void mu__mf_memo_free(mu__mf_memo_t *mm);
/* As mu__mf_controller(t, old, nw, name, status_sub), with the same
 * result but for the second of the entries' times: a status write whose
 * shape (see ssa.c) mm has seen takes the entries from mm, other writes
 * are recorded in full and their entries kept.  old and nw borrowed, nw
 * changed.  O(size of old, nw and their entries). */
void mu__mf_memo_record(mu__mf_memo_t *mm, const mu__rtype_t *t, const json_t *old, json_t *nw,
			const char *name, bool status_sub);
/* Writes answered from mm, and recorded in full with a key built. */
void mu__mf_memo_stats(const mu__mf_memo_t *mm, size_t *hits, size_t *misses);

#endif

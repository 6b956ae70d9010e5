/*
 * schema.h - the field schemas of the built-in kinds (a registry generated
 * by scripts/gen-schemas.js into schema_gen.c from the official JavaScript
 * client's models, themselves generated from the Kubernetes OpenAPI
 * document), and field validation over them (schema.c): unknown fields are
 * found, reported (Strict, Warn) and pruned, as kube-apiserver's decoder
 * does for the Go types.
 */
#ifndef MUSTER_APISERVER_SCHEMA_H
#define MUSTER_APISERVER_SCHEMA_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

enum { MU__SS_SCALAR = 0, MU__SS_ARRAY, MU__SS_MAP };
enum {
	MU__ST_STRING = 0, MU__ST_NUMBER, MU__ST_BOOL, MU__ST_TIME, MU__ST_INTSTR,
	MU__ST_ANY,     /* free-form JSON: not checked */
	MU__ST_OBJECT,  /* an object with the schema of model */
};

typedef struct mu__sfield {
	const char *name;   /* JSON name */
	unsigned char shape, elem;
	short model;        /* index in mu__smodels, or -1 */
} mu__sfield_t;

typedef struct mu__smodel {
	const char *name;   /* the client's class name, e.g. V1PodSpec */
	int first, n;       /* its fields: mu__sfields[first .. first+n) */
} mu__smodel_t;

typedef struct mu__sroot {
	const char *group, *kind;
	int model;
} mu__sroot_t;

extern const char mu__schema_source[];
/* The descriptions of the models and of the fields (schema_desc_gen.c,
 * indexed as mu__smodels and mu__sfields; NULL: none). */
extern const char *const mu__smodel_desc[];
extern const char *const mu__sfield_desc[];
extern const mu__sfield_t mu__sfields[];
extern const mu__smodel_t mu__smodels[];
extern const int mu__nsmodels;
extern const mu__sroot_t mu__sroots[];
extern const int mu__nsroots;

/* The model of a kind (group "" for the core group), or -1 when muster
 * has no schema for it (its own kinds: every field is kept). */
int mu__schema_model(const char *group, const char *kind);

/* The fieldValidation query parameter: Strict refuses an object with
 * unknown fields (400), Warn (kube-apiserver's default) and Ignore drop
 * them, Warn with a Warning header per field. */
enum { MU__FV_WARN = 0, MU__FV_STRICT, MU__FV_IGNORE };

typedef struct mu__unknown {
	int n;                  /* unknown fields found (all of them) */
	char text[1024];        /* `unknown field "a.b", unknown field "c"` (cut) */
} mu__unknown_t;

/* Walks obj against model, removing every field the schema does not know
 * (when prune) and describing them in u.  Bounded by the object's size;
 * recursion by its nesting (at most MU__MAX_DEPTH levels). */
void mu__schema_check(json_t *obj, int model, bool prune, mu__unknown_t *u);
/* mu__schema_check of an update: the same, except that a known member
 * json_equal to old's member of that name is not walked, at the top level
 * and in a top-level object member that changed (metadata, status): it
 * was checked and pruned when it was stored; kube-apiserver finds unknown
 * fields in what a request sends, and a stored object has none.  old
 * NULL: mu__schema_check.  O(the members that changed, and a json_equal
 * of each one that did not). */
void mu__schema_check_changed(json_t *obj, const json_t *old, int model, bool prune, mu__unknown_t *u);

#endif

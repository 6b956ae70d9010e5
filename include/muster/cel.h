/*
 * cel.h - the subset of CEL that Kubernetes DRA device selectors use in
 * practice (resource.k8s.io DeviceSelector.cel.expression), evaluated
 * against one device; and the subset of CRD validation rules below.
 *
 * Understood: `device.driver`; `device.attributes["DOMAIN"].NAME` (int,
 * bool, string or version values); `device.capacity["DOMAIN"].NAME`
 * (quantities); string, integer and boolean literals; `quantity("40Gi")`
 * and `semver("1.2.3")`; `==` `!=` `<` `<=` `>` `>=`; `q.compareTo(x)`,
 * `q.isGreaterThan(x)`, `q.isLessThan(x)` on quantities and versions;
 * `&&`, `||`, `!` and parentheses.  Anything else (other functions,
 * macros, `in`, arithmetic, lists, maps, ternaries) is refused by
 * mu_cel_check() with the reason and the offset where it stops.
 * An expression is at most MU_CEL_MAX_LEN bytes and MU_CEL_MAX_DEPTH
 * levels deep.  The parser keeps no state between calls.
 */
#ifndef MUSTER_CEL_H
#define MUSTER_CEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MU_CEL_MAX_LEN 10240  /* kube-apiserver's limit on a selector */
#define MU_CEL_MAX_DEPTH 32

typedef enum mu_cel_type {
	MU_CEL_INT = 1,
	MU_CEL_BOOL = 2,
	MU_CEL_STRING = 3,
	MU_CEL_VERSION = 4, /* s holds "MAJOR.MINOR.PATCH" */
	MU_CEL_QUANTITY = 5, /* i in milli-units */
} mu_cel_type_t;

/* A device attribute or capacity, its name qualified: "DOMAIN/NAME". */
typedef struct mu_cel_attr {
	const char *name;
	mu_cel_type_t type;
	int64_t i;      /* INT; QUANTITY (milli) */
	bool b;         /* BOOL */
	const char *s;  /* STRING, VERSION */
} mu_cel_attr_t;

typedef struct mu_cel_device {
	const char *driver;
	const mu_cel_attr_t *attrs; /* attributes */
	size_t nattrs;
	const mu_cel_attr_t *caps;  /* capacities (QUANTITY) */
	size_t ncaps;
} mu_cel_device_t;

/* --- CRD validation rules (x-kubernetes-validations) ---------------------
 * The subset: `self` (the value the rule's schema node validates) and its
 * fields (`self.spec.replicas`), `oldSelf` (the value before an update: a
 * transition rule), `has(self.a.b)` (also of oldSelf and of a macro's
 * variable), `size(x)` and `x.size()` of strings (code points), lists and
 * maps, `list.all(x, body)` and `list.exists(x, body)`, `x in [literal,
 * ...]`, string, integer and boolean literals, `==` `!=` `<` `<=` `>`
 * `>=` (`==` and `!=` also between lists and maps, deeply), `&&`, `||`,
 * `!` and parentheses.  A missing field is a run-time error (as in CEL)
 * that `&&`/`||` absorb when the other side decides.  Refused by
 * mu_cel_rule_check(): indexing, other macros and functions, `in` over a
 * list that is not a literal, arithmetic, ternaries. */

#define MU_CEL_MAX_VARS 4        /* all()/exists() nested */
#define MU_CEL_MAX_VISITS 100000 /* elements all()/exists() visit in one rule */

/* What a document node is (the doc callbacks answer with these). */
enum {
	MU_CEL_NODE_NULL = 0, MU_CEL_NODE_INT, MU_CEL_NODE_BOOL, MU_CEL_NODE_STRING,
	MU_CEL_NODE_DOUBLE, MU_CEL_NODE_LIST, MU_CEL_NODE_MAP,
};

/* The document a rule reads, through callbacks (the caller's JSON). */
typedef struct mu_cel_doc {
	/* what n is; an int into *i, a bool into *b, a string into *s (kept
	 * by the document while the rule runs) */
	int (*kind)(const void *n, int64_t *i, bool *b, const char **s);
	const void *(*field)(const void *map, const char *name); /* NULL: absent */
	size_t (*size)(const void *n);                         /* list or map entries */
	const void *(*elem)(const void *list, size_t i);       /* NULL: no all()/exists() */
	bool (*equal)(const void *a, const void *b);           /* deep; NULL: lists and maps do not compare */
} mu_cel_doc_t;

/* Checks that a validation rule is in the subset (MU_OK, or MU_EPARSE /
 * MU_EINVAL with why in err). */
int mu_cel_rule_check(const char *expr, char *err, size_t errlen);

/* mu_cel_rule_check(), and whether the rule reads oldSelf (*transition:
 * kube evaluates such a rule only on an update that has the old value). */
int mu_cel_rule_compile(const char *expr, bool *transition, char *err, size_t errlen);

/* mu_cel_rule_eval() with oldSelf (old; NULL: a rule that reads it fails
 * with a run-time error). */
int mu_cel_rule_eval_old(const char *expr, const mu_cel_doc_t *doc, const void *self, const void *old,
			 bool *ok, char *err, size_t errlen);

/* Evaluates a validation rule with self: *ok is its value (false on any
 * error: MU_ENOENT for a missing field, MU_EINVAL otherwise, why in err).
 * O(length of expr x field lookups). */
int mu_cel_rule_eval(const char *expr, const mu_cel_doc_t *doc, const void *self, bool *ok,
		     char *err, size_t errlen);

/* Checks that expr is in the subset and yields a bool.  Returns MU_OK, or
 * MU_EPARSE (malformed) / MU_EINVAL (valid CEL outside the subset, or not
 * a bool) with why (for explain) in err. */
int mu_cel_check(const char *expr, char *err, size_t errlen);

/* Evaluates expr against dev: *match is its value.  A missing attribute
 * or capacity, or comparing values of different types, is a run-time
 * error as in CEL (MU_ENOENT / MU_EINVAL with why in err), except where
 * `&&` or `||` do not need that side.  Errors of mu_cel_check() come back
 * as they do there.  O(length of expr x attributes). */
int mu_cel_eval(const char *expr, const mu_cel_device_t *dev, bool *match,
		char *err, size_t errlen);

#endif

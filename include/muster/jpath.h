/*
 * jpath.h - dotted-path lookups into jansson objects ("metadata.name"),
 * shared by the control plane and the Kubernetes daemon (src/util/jpath.c),
 * and a faster parser of JSON text into jansson trees (src/util/jparse.c).
 */
#ifndef MUSTER_JPATH_H
#define MUSTER_JPATH_H

#include <stdbool.h>
#include <jansson.h>

/* The value at a dotted path of object keys, or NULL.  O(path length). */
json_t *mu__jget(const json_t *o, const char *path);
/* The string at that path, or NULL. */
const char *mu__jstr(const json_t *o, const char *path);
/* Whether metav1.LabelSelector sel (matchLabels and matchExpressions with
 * In, NotIn, Exists, DoesNotExist) matches the labels object (NULL: no
 * labels).  A NULL selector matches nothing, an empty one everything (as
 * a policy/v1 PodDisruptionBudget's).  O(terms x values). */
bool mu_label_selector_match(const json_t *sel, const json_t *labels);

/* JSON text s (n bytes, no NUL needed) as json_loadb(s, n, 0, NULL) reads
 * it: the same tree, or NULL where it gives NULL; a new reference.  A
 * single pass that json_loadb backs up for whatever it does not take.
 * O(n). */
json_t *mu__json_loadb(const char *s, size_t n);
/* The single pass alone: NULL for anything it does not take (errors, and
 * nesting deeper than 512, integers out of range, no memory). */
json_t *mu__json_fast(const char *s, size_t n);
/* The same pass refusing a name repeated in an object (NULL), as
 * json_loadb with JSON_REJECT_DUPLICATES: request bodies. */
json_t *mu__json_fast_strict(const char *s, size_t n);

#endif

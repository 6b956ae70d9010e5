/*
 * jpath.h - dotted-path lookups into jansson objects ("metadata.name"),
 * shared by the control plane and the Kubernetes daemon (src/util/jpath.c).
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

#endif

/*
 * jpath.h - dotted-path lookups into jansson objects ("metadata.name"),
 * shared by the control plane and the Kubernetes daemon (src/util/jpath.c).
 */
#ifndef MUSTER_JPATH_H
#define MUSTER_JPATH_H

#include <jansson.h>

/* The value at a dotted path of object keys, or NULL.  O(path length). */
json_t *mu__jget(const json_t *o, const char *path);
/* The string at that path, or NULL. */
const char *mu__jstr(const json_t *o, const char *path);

#endif

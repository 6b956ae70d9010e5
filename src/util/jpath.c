/*
 * jpath.c - dotted-path lookups into jansson objects ("metadata.name"),
 * shared by the control plane and the Kubernetes daemon.  Read-only: the
 * caller owns the object, and the result borrows from it.
 */
#include <string.h>

#include "muster/jpath.h"

json_t *mu__jget(const json_t *o, const char *path)
{
	char seg[128];
	while (o && *path) {
		const char *dot = strchr(path, '.');
		size_t n = dot ? (size_t)(dot - path) : strlen(path);
		if (n >= sizeof seg || !json_is_object(o))
			return NULL;
		memcpy(seg, path, n);
		seg[n] = '\0';
		o = json_object_get(o, seg);
		path += n + (dot != NULL);
	}
	return (json_t *)o;
}

const char *mu__jstr(const json_t *o, const char *path)
{
	return json_string_value(mu__jget(o, path));
}

/*
 * fuzz_mfstrip.c - libFuzzer target for the daemon's cut of
 * metadata.managedFields out of a watch event's or a list's text before
 * it is parsed (src/kube/mfstrip.c).  The input is the text as the API
 * server sends it.  The cut must never read or write out of bounds, and
 * whenever the input parses as JSON the result must parse too and differ
 * from the input's tree in nothing but object.metadata.managedFields and
 * items[*].metadata.managedFields (gone, or kept where the text spells the
 * name with escapes; the unit test checks that the ordinary forms go);
 * text that does not parse may be left as it was.  The pod variant
 * (MU__KSTRIP_POD_STATUS) runs on a second copy: it may also take the
 * status lists the daemon does not read of object and items[*], and
 * nothing else.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/kube_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Deletes what the cut may take: object.metadata.managedFields and
 * items[*].metadata.managedFields. */
static void drop_mf(json_t *j)
{
	json_object_del(json_object_get(json_object_get(j, "object"), "metadata"), "managedFields");
	size_t i;
	json_t *it;
	json_array_foreach(json_object_get(j, "items"), i, it)
		json_object_del(json_object_get(it, "metadata"), "managedFields");
}

/* Deletes what the pod variant may take besides: the status lists of
 * object and of items[*]. */
static void drop_status(json_t *j)
{
	static const char *const names[] = {"conditions", "containerStatuses", "initContainerStatuses",
		"ephemeralContainerStatuses"};
	json_t *objs = json_array();
	if (json_object_get(j, "object"))
		json_array_append(objs, json_object_get(j, "object"));
	size_t i;
	json_t *it;
	json_array_foreach(json_object_get(j, "items"), i, it)
		json_array_append(objs, it);
	json_array_foreach(objs, i, it)
		for (size_t k = 0; k < sizeof names / sizeof *names; k++)
			json_object_del(json_object_get(it, "status"), names[k]);
	json_decref(objs);
}

/* The pod variant on its own copy of data. */
static void pod_variant(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		return;
	memcpy(s, data, size);
	s[size] = '\0';
	json_t *want = json_loadb(s, size, 0, NULL);
	size_t n = mu__kstrip(s, size, MU__KSTRIP_MF | MU__KSTRIP_POD_STATUS);
	if (n > size)
		abort();
	if (want) {
		drop_mf(want);
		drop_status(want);
		json_t *got = json_loadb(s, n, 0, NULL);
		if (!got)
			abort();
		drop_mf(got);
		drop_status(got);
		if (!json_equal(got, want))
			abort();
		json_decref(got);
	}
	json_decref(want);
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pod_variant(data, size);
	char *s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	json_t *want = json_loadb(s, size, 0, NULL);
	size_t n = mu__kstrip_mf(s, size);
	if (n > size)
		abort();
	if (want) {
		drop_mf(want);
		json_t *got = json_loadb(s, n, 0, NULL);
		if (!got)
			abort();
		drop_mf(got);
		if (!json_equal(got, want))
			abort();
		json_decref(got);
	}
	json_decref(want);
	free(s);
	return 0;
}

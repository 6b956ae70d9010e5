/*
 * served.c - which of the hub's kinds a server serves, and a watch for
 * each served kind only (issue 18, round 13).  A kube client does not
 * keep a failing watch open on a kind the server lacks: client-go's
 * informers are made for the resources discovery lists, and a controller
 * starts one when its CRD appears.  So the dispatcher (the hub's jobs of
 * each kind, a push-mode worker's copies) and the pull-mode agent (its
 * worker's copies, the hub's objects assigned to it) ask each server
 * which kinds it serves (GET /apis/GROUP/VERSION, as kubectl's discovery
 * does: the kind is served when its resource is listed), start a kind's
 * watch when the answer says so and stop it when a later answer says the
 * kind went (its CRD deleted).  The kinds are asked again every minute
 * (MU__D_REDISCOVER_MS), and sooner when a cheap probe, one GET /apis
 * every MU__D_PROBE_MS, shows a kind's group version appear or go since
 * the last answer it acted on (round 15: a group version listed with
 * none of the hub's kinds served, kubeflow.org/v1 with TFJob's CRD only,
 * no longer sends the whole discovery at every probe).
 * batch/v1 Jobs are always served and always watched (by the callers).
 * Above dutil.c (its requests and log); below hub.c, worker.c, agent.c.
 */
#include <stdio.h>
#include <string.h>

#include "dispatch/dispatch_int.h"

/* The hub's kinds whose group version /apis's answer l lists: bit k for
 * kind k (k > 0), MU__D_APIS_SEEN set.  O(kinds x group versions). */
static uint32_t served_listed(const json_t *l)
{
	uint32_t m = MU__D_APIS_SEEN;
	size_t i, v;
	json_t *g, *gv;
	json_array_foreach(json_object_get(l, "groups"), i, g)
		json_array_foreach(json_object_get(g, "versions"), v, gv) {
			const char *s = json_string_value(json_object_get(gv, "groupVersion"));
			for (int k = 1; s && k < MU__DK_COUNT; k++)
				if (!strcmp(s, mu__dkind_api((mu__dkind_t)k)))
					m |= 1u << k;
		}
	return m;
}

bool mu__dserved_due(mu__dd_t *d, mu_kube_client_t *kc, const int8_t on[MU__DK_COUNT],
		     int64_t *at, int64_t *probe_at, uint32_t *apis, int64_t now)
{
	if (!kc)
		return false;
	if (!*at || now - *at >= MU__D_REDISCOVER_MS)
		return true;
	if (*probe_at && now - *probe_at < MU__D_PROBE_MS)
		return false;
	*probe_at = now;
	json_t *l = NULL;
	if (mu__dreq(d, kc, "GET", "/apis", NULL, NULL, &l) != 200) {
		json_decref(l);
		return false; /* no answer: the minute's discovery asks */
	}
	uint32_t m = served_listed(l);
	json_decref(l);
	/* The answer acted on before: due when a group version of the hub's
	 * kinds was added to it or went (a kind added to a group version
	 * listed already, or gone from one still listed, is the minute's
	 * discovery's: /apis does not show it).  No answer remembered yet
	 * (the first probe since the server's client was made): due when a
	 * kind's group version is listed and none of its kinds is served, or
	 * a kind is served and its group version not listed. */
	bool due = false;
	if (*apis & MU__D_APIS_SEEN) {
		due = m != *apis;
	} else {
		for (int k = 1; k < MU__DK_COUNT && !due; k++) {
			bool known = false;
			for (int p = 1; p < MU__DK_COUNT && !known; p++)
				known = on[p] == 1 &&
					!strcmp(mu__dkind_api((mu__dkind_t)p), mu__dkind_api((mu__dkind_t)k));
			due = ((m >> k) & 1u) != known;
		}
	}
	*apis = m;
	return due;
}

void mu__dserved_ask(mu__dd_t *d, mu_kube_client_t *kc, int8_t out[MU__DK_COUNT])
{
	json_t *ans[MU__DK_COUNT] = {NULL};
	long st[MU__DK_COUNT] = {0};
	out[MU__DK_JOB] = 1;
	for (int k = 1; k < MU__DK_COUNT; k++) {
		const char *api = mu__dkind_api((mu__dkind_t)k);
		int same = 0; /* a kind of a group version asked already */
		for (int p = 1; p < k && !same; p++)
			if (!strcmp(mu__dkind_api((mu__dkind_t)p), api))
				same = p;
		if (same) {
			st[k] = st[same];
			ans[k] = json_incref(ans[same]);
		} else {
			char path[200];
			snprintf(path, sizeof path, "/apis/%s", api);
			st[k] = mu__dreq(d, kc, "GET", path, NULL, NULL, &ans[k]);
		}
		int on = -1;
		if (st[k] == 404) {
			on = 0;
		} else if (st[k] == 200) {
			size_t i;
			json_t *r;
			on = 0;
			json_array_foreach(json_object_get(ans[k], "resources"), i, r)
				if (json_is_string(json_object_get(r, "name")) &&
				    !strcmp(json_string_value(json_object_get(r, "name")),
					    mu__dkind_plural((mu__dkind_t)k)))
					on = 1;
		}
		out[k] = (int8_t)on;
	}
	for (int k = 1; k < MU__DK_COUNT; k++)
		json_decref(ans[k]);
}

bool mu__dserved_refresh(mu__dd_t *d, mu_kube_client_t *kc, const int8_t known[MU__DK_COUNT],
			 int64_t *at, int64_t *probe_at, uint32_t *apis, int64_t now,
			 int8_t out[MU__DK_COUNT])
{
	if (!mu__dserved_due(d, kc, known, at, probe_at, apis, now))
		return false;
	*at = now;
	mu__dserved_ask(d, kc, out);
	for (int k = 1; k < MU__DK_COUNT; k++)
		if (out[k] < 0) /* no answer: asked again in a second */
			*at = now - MU__D_REDISCOVER_MS + 1000;
	return true;
}

int mu__dserved_watch(const mu_kube_config_t *cfg, const char *sel, const int8_t on[MU__DK_COUNT],
		      mu_kube_watch_t *w[MU__DK_COUNT], uint64_t seq[MU__DK_COUNT])
{
	int changed = 0;
	/* stopped: asked together first, then waited for */
	for (int k = 1; k < MU__DK_COUNT; k++)
		if (on[k] == 0 && w[k])
			mu_kube_watch_signal(w[k]);
	for (int k = 1; k < MU__DK_COUNT; k++) {
		if (on[k] == 0 && w[k]) {
			mu_kube_watch_stop(w[k]);
			w[k] = NULL;
			changed++;
		} else if (on[k] == 1 && !w[k]) {
			char path[200];
			mu__dkind_path((mu__dkind_t)k, NULL, NULL, "", path, sizeof path);
			if (mu_kube_watch_start(cfg, path, sel, &w[k]) != MU_OK) {
				w[k] = NULL; /* out of memory: started on a later call */
				continue;
			}
			changed++;
		} else {
			continue;
		}
		if (seq)
			seq[k] = 0;
	}
	return changed;
}

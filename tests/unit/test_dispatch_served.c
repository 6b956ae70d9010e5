/*
 * test_dispatch_served.c - the hub daemon watches only the kinds a server
 * serves (src/dispatch/served.c, docs/dispatch.md round 13): against an
 * in-process `muster up` on loopback (plain HTTP), whose discovery answers
 * are the real ones, the hub's watches of kinds other than Job are made
 * for the kinds it serves only (muster's and the coscheduling PodGroups,
 * built in); a JobSet CRD created later is watched once the next probe of
 * /apis (every 5 s) sees its group version, and not before; its watch
 * lists the JobSets; the CRD deleted, its watch is stopped.  A call
 * between probes asks nothing.  RayJob served without RayCluster (one
 * group version) is no change to a probe: it asks nothing more.  A group
 * version listed with none of the hub's kinds served in it (kubeflow.org/v1
 * with TFJob's CRD only) is asked once, by the probe that sees it appear,
 * and not again by the probes after it (the probe remembers the last /apis
 * answer it acted on); RayCluster's CRD added to the served ray.io/v1 is
 * found by the minute's discovery.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "check.h"
#include "dispatch_fixture.h"
#include "dispatch/dispatch_int.h"
#include "muster/apiserver.h"
#include "muster/kube.h"

/* One request with body (or none); the status. */
static long req(mu_kube_client_t *c, const char *method, const char *path, const char *body)
{
	long st = 0;
	char *ans = NULL;
	mu_kube_client_do(c, method, path, body ? "application/json" : NULL, body, 5000, &st, &ans);
	free(ans);
	return st;
}

/* The kinds other than Job with a watch, as "JobSet,PodGroup,...". */
static const char *watched(const mu__dd_t *d, char *buf, size_t len)
{
	buf[0] = '\0';
	for (int k = 1; k < MU__DK_COUNT; k++)
		if (d->wjobs[k])
			snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", buf[0] ? "," : "",
				 mu__dkind_name((mu__dkind_t)k));
	return buf;
}

static const char *JOBSET_CRD =
	"{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
	"\"metadata\":{\"name\":\"jobsets.jobset.x-k8s.io\"},\"spec\":{\"group\":\"jobset.x-k8s.io\","
	"\"names\":{\"kind\":\"JobSet\",\"listKind\":\"JobSetList\",\"plural\":\"jobsets\","
	"\"singular\":\"jobset\"},\"scope\":\"Namespaced\",\"versions\":[{\"name\":\"v1alpha2\","
	"\"served\":true,\"storage\":true,\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\","
	"\"x-kubernetes-preserve-unknown-fields\":true}}}]}}";

/* RayJob's CRD alone: ray.io/v1 listed, RayCluster (the same group
 * version) not served. */
static const char *RAYJOB_CRD =
	"{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
	"\"metadata\":{\"name\":\"rayjobs.ray.io\"},\"spec\":{\"group\":\"ray.io\","
	"\"names\":{\"kind\":\"RayJob\",\"listKind\":\"RayJobList\",\"plural\":\"rayjobs\","
	"\"singular\":\"rayjob\"},\"scope\":\"Namespaced\",\"versions\":[{\"name\":\"v1\","
	"\"served\":true,\"storage\":true,\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\","
	"\"x-kubernetes-preserve-unknown-fields\":true}}}]}}";

/* TFJob's CRD: kubeflow.org/v1 listed, none of the hub's kinds in it
 * (PyTorchJob, MPIJob) served. */
static const char *TFJOB_CRD =
	"{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
	"\"metadata\":{\"name\":\"tfjobs.kubeflow.org\"},\"spec\":{\"group\":\"kubeflow.org\","
	"\"names\":{\"kind\":\"TFJob\",\"listKind\":\"TFJobList\",\"plural\":\"tfjobs\","
	"\"singular\":\"tfjob\"},\"scope\":\"Namespaced\",\"versions\":[{\"name\":\"v1\","
	"\"served\":true,\"storage\":true,\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\","
	"\"x-kubernetes-preserve-unknown-fields\":true}}}]}}";

/* RayCluster's CRD, added to ray.io/v1 once RayJob's is served. */
static const char *RAYCLUSTER_CRD =
	"{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
	"\"metadata\":{\"name\":\"rayclusters.ray.io\"},\"spec\":{\"group\":\"ray.io\","
	"\"names\":{\"kind\":\"RayCluster\",\"listKind\":\"RayClusterList\","
	"\"plural\":\"rayclusters\",\"singular\":\"raycluster\"},\"scope\":\"Namespaced\","
	"\"versions\":[{\"name\":\"v1\",\"served\":true,\"storage\":true,\"schema\":"
	"{\"openAPIV3Schema\":{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true}}}]}}";

static void test_hub_kinds(mu_t_t *t)
{
	char dir[] = "/tmp/mu-test-served-XXXXXX", server[64], buf[256];
	mu_apiserver_t *s = fx_server(t, dir, server, sizeof server);
	if (!s)
		return;
	mu_kube_config_t cfg = {0};
	fx_config(&cfg, server);
	mu_dispatch_opts_t o;
	mu__dd_t d;
	fx_dd(&d, &o);
	o.hub = &cfg;
	memset(d.hub_serves, -1, sizeof d.hub_serves);
	CHECK_EQ_INT(t, mu_kube_client_new(&cfg, &d.hub), MU_OK);

	/* first: asked (one GET per group version), the built-in kinds only */
	mu__dhub_discover(&d, 1000);
	CHECK_STR(t, watched(&d, buf, sizeof buf), "PodGroup,CoschedulingPodGroup");
	CHECK_EQ_INT(t, d.hub_serves[MU__DK_JOBSET], 0);
	CHECK_EQ_INT(t, d.hub_serves[MU__DK_PODGROUP], 1);
	CHECK(t, d.reqs >= 5 && d.reqs < MU__DK_COUNT);
	CHECK(t, d.wjobs[MU__DK_JOB] == NULL); /* Job's is run.c's */
	/* a probe of /apis: nothing new, one request */
	uint64_t r0 = d.reqs;
	mu__dhub_discover(&d, 2000);
	CHECK_EQ_INT(t, d.reqs, r0 + 1);
	/* the JobSet CRD appears: not watched before the next probe ... */
	mu_kube_client_t *c = NULL;
	CHECK_EQ_INT(t, mu_kube_client_new(&cfg, &c), MU_OK);
	CHECK_EQ_INT(t, req(c, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
			    JOBSET_CRD), 201);
	mu__dhub_discover(&d, 4000);
	CHECK_EQ_INT(t, d.reqs, r0 + 1);
	CHECK(t, d.wjobs[MU__DK_JOBSET] == NULL);
	/* ... then watched; its watch lists the hub's JobSets */
	mu__dhub_discover(&d, 7100);
	CHECK_STR(t, watched(&d, buf, sizeof buf), "JobSet,PodGroup,CoschedulingPodGroup");
	CHECK_EQ_INT(t, d.hub_serves[MU__DK_JOBSET], 1);
	bool listed = false;
	for (int i = 0; i < 500 && d.wjobs[MU__DK_JOBSET] && !listed; i++) {
		listed = mu_kube_watch_items(d.wjobs[MU__DK_JOBSET], NULL, NULL);
		if (!listed)
			nap_ms(20);
	}
	CHECK(t, listed);
	/* the CRD deleted: the next probe stops its watch */
	CHECK_EQ_INT(t, req(c, "DELETE", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
			    "jobsets.jobset.x-k8s.io", NULL), 200);
	for (int i = 0; i < 100; i++) { /* the CRD's deletion may finish later */
		char *ans = NULL;
		long st = 0;
		mu_kube_client_do(c, "GET", "/apis/jobset.x-k8s.io/v1alpha2", NULL, NULL, 5000, &st,
				  &ans);
		free(ans);
		if (st == 404)
			break;
		nap_ms(50);
	}
	mu__dhub_discover(&d, 12200);
	CHECK_STR(t, watched(&d, buf, sizeof buf), "PodGroup,CoschedulingPodGroup");
	CHECK_EQ_INT(t, d.hub_serves[MU__DK_JOBSET], 0);
	/* a minute after the last discovery: asked again in full, as it was */
	r0 = d.reqs;
	mu__dhub_discover(&d, 12200 + MU__D_REDISCOVER_MS);
	CHECK(t, d.reqs > r0 + 1);
	CHECK_STR(t, watched(&d, buf, sizeof buf), "PodGroup,CoschedulingPodGroup");
	/* RayJob's CRD without RayCluster's: found by the next probe; the
	 * probe after it asks nothing more (ray.io/v1 is known listed through
	 * RayJob, though RayCluster is not served) */
	int64_t t1 = 12200 + MU__D_REDISCOVER_MS;
	CHECK_EQ_INT(t, req(c, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
			    RAYJOB_CRD), 201);
	mu__dhub_discover(&d, t1 + 5100);
	CHECK_EQ_INT(t, d.hub_serves[MU__DK_RAYJOB], 1);
	CHECK_EQ_INT(t, d.hub_serves[MU__DK_RAYCLUSTER], 0);
	r0 = d.reqs;
	mu__dhub_discover(&d, t1 + 10200);
	CHECK_EQ_INT(t, d.reqs, r0 + 1);
	/* TFJob's CRD: kubeflow.org/v1 appears with neither PyTorchJob nor
	 * MPIJob served.  The probe that sees it asks (a change of /apis);
	 * the probes after it ask nothing more: one request each */
	CHECK_EQ_INT(t, req(c, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
			    TFJOB_CRD), 201);
	r0 = d.reqs;
	mu__dhub_discover(&d, t1 + 15300);
	CHECK(t, d.reqs > r0 + 1);
	CHECK_EQ_INT(t, d.hub_serves[MU__DK_PYTORCH], 0);
	CHECK_EQ_INT(t, d.hub_serves[MU__DK_MPI], 0);
	for (int i = 0; i < 3; i++) {
		r0 = d.reqs;
		mu__dhub_discover(&d, t1 + 20400 + i * 5100);
		CHECK_EQ_INT(t, d.reqs, r0 + 1);
	}
	/* RayCluster's CRD in ray.io/v1, already listed: no change of /apis,
	 * so the probes leave it; the minute's discovery finds it */
	CHECK_EQ_INT(t, req(c, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
			    RAYCLUSTER_CRD), 201);
	r0 = d.reqs;
	mu__dhub_discover(&d, t1 + 35700);
	CHECK_EQ_INT(t, d.reqs, r0 + 1);
	CHECK_EQ_INT(t, d.hub_serves[MU__DK_RAYCLUSTER], 0);
	mu__dhub_discover(&d, t1 + 15300 + MU__D_REDISCOVER_MS);
	CHECK_EQ_INT(t, d.hub_serves[MU__DK_RAYCLUSTER], 1);
	CHECK(t, d.wjobs[MU__DK_RAYCLUSTER] != NULL);

	for (int k = 0; k < MU__DK_COUNT; k++)
		mu_kube_watch_signal(d.wjobs[k]);
	for (int k = 0; k < MU__DK_COUNT; k++)
		mu_kube_watch_stop(d.wjobs[k]);
	mu_kube_client_free(c);
	mu_kube_client_free(d.hub);
	mu_kube_config_release(&cfg);
	fx_server_stop(t, s, dir);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_hub_kinds);
	return mu_t_done(&t);
}

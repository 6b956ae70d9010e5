/*
 * bench_loadjson.c - what it costs the dispatcher to read one hub Job into
 * its spec (src/dispatch/hub.c, job_parse): the Job's JSON text through
 * libyaml and the cluster-file loader (json_dumps + mu_load_yaml, as before
 * round 11), against the loader's tree built from the jansson tree
 * (mu_load_json).  The Job is bench/dispatch.sh's as the hub's API server
 * stores it (its defaults and labels).  CPU microseconds per Job (clock())
 * over N reads of each, alternating, three rounds; prints one JSON line
 * per round.  Usage: build/rel/bench/bench_loadjson [N]   (20000)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <jansson.h>

#include "muster/load.h"
#include "muster/specs.h"

static const char *JOB =
	"{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"j-1\",\"namespace\":\"default\","
	"\"uid\":\"0b0e6a4e-1111-2222-3333-444455556666\",\"resourceVersion\":\"1234\",\"generation\":1,"
	"\"creationTimestamp\":\"2026-11-27T10:00:00Z\",\"labels\":{\"muster.io/queue\":\"team-a\"},"
	"\"annotations\":{}},\"spec\":{\"parallelism\":1,\"completions\":1,\"backoffLimit\":6,"
	"\"completionMode\":\"NonIndexed\",\"suspend\":true,\"podReplacementPolicy\":\"TerminatingOrFailed\","
	"\"manualSelector\":false,\"selector\":{\"matchLabels\":{\"batch.kubernetes.io/controller-uid\":"
	"\"0b0e6a4e-1111-2222-3333-444455556666\"}},\"template\":{\"metadata\":{\"labels\":{"
	"\"batch.kubernetes.io/controller-uid\":\"0b0e6a4e-1111-2222-3333-444455556666\","
	"\"batch.kubernetes.io/job-name\":\"j-1\",\"controller-uid\":\"0b0e6a4e-1111-2222-3333-444455556666\","
	"\"job-name\":\"j-1\"}},\"spec\":{\"schedulerName\":\"muster\",\"restartPolicy\":\"Never\","
	"\"terminationGracePeriodSeconds\":30,\"dnsPolicy\":\"ClusterFirst\",\"securityContext\":{},"
	"\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"imagePullPolicy\":\"Always\","
	"\"terminationMessagePath\":\"/dev/termination-log\",\"terminationMessagePolicy\":\"File\","
	"\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\"},\"requests\":{\"nvidia.com/gpu\":\"1\"}}}]}}}}";

/* CPU microseconds per read of doc, over n reads (tree: mu_load_json,
 * else its text through mu_load_yaml); -1 when a read fails.  O(n). */
static double per_read(const json_t *doc, int n, int tree)
{
	clock_t t0 = clock();
	for (int i = 0; i < n; i++) {
		mu_specs_t s;
		mu_diag_t d = {""};
		mu_specs_init(&s);
		int rc;
		if (tree) {
			rc = mu_load_json("job", doc, &s, &d);
		} else {
			char *t = json_dumps(doc, JSON_COMPACT);
			rc = t ? mu_load_yaml("job", t, strlen(t), &s, &d) : MU_ENOMEM;
			free(t);
		}
		int njobs = (int)s.njobs;
		mu_specs_release(&s);
		if (rc || njobs != 1) {
			fprintf(stderr, "bench_loadjson: read failed: %s\n", d.msg);
			return -1;
		}
	}
	return 1e6 * (double)(clock() - t0) / CLOCKS_PER_SEC / n;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20000;
	if (n <= 0 || n > 10000000)
		n = 20000;
	json_t *doc = json_loads(JOB, 0, NULL);
	if (!doc)
		return 1;
	int rc = 0;
	for (int round = 1; round <= 3 && !rc; round++) {
		double text = per_read(doc, n, 0), tree = per_read(doc, n, 1);
		if (text < 0 || tree < 0)
			rc = 1;
		else
			printf("{\"bench\":\"loadjson\",\"round\":%d,\"reads\":%d,\"text_us\":%.2f,\"tree_us\":%.2f}\n",
			       round, n, text, tree);
	}
	json_decref(doc);
	return rc;
}

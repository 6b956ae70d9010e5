/*
 * cmd_dispatch.c - `muster dispatch`: the second level's hub daemon
 * (include/muster/dispatch.h, docs/dispatch.md).
 *
 * Reads the hub's credentials from a kubeconfig (--kubeconfig, else
 * $KUBECONFIG, else ~/.kube/config) or the pod's service account
 * (--in-cluster), then runs mu_dispatch_run() until SIGINT or SIGTERM,
 * which only set the one flag below.  `muster dispatch agent` runs
 * mu_dispatch_agent_run() (pull mode) the same way.  Exit codes: 0 after a signal, 1 when
 * the daemon failed, 2 for bad usage.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "muster/dispatch.h"
#include "muster/util.h"

static void dispatch_usage(FILE *f)
{
	fputs("usage: muster dispatch [--kubeconfig FILE | --in-cluster] [options]\n"
	      "       muster dispatch agent --help    (pull mode, in a worker)\n"
	      "\n"
	      "The hub daemon of a fleet of clusters: queues the hub's queue-labelled\n"
	      "batch/v1 Jobs, JobSets, PyTorchJobs, MPIJobs, RayJobs and RayClusters (held\n"
	      "suspended), LeaderWorkerSets, Volcano Jobs, and the PodGroups of muster,\n"
	      "Volcano, KAI and the coscheduling plugin with their pods in the hub's\n"
	      "Queues and sends each one, as one unit, to exactly one worker\n"
	      "cluster (a Cluster object with a kubeconfig Secret, or its agent's) where\n"
	      "its gang fits now (a kind other than Job only where the worker serves it,\n"
	      "found by discovery or reported by the agent).  See docs/dispatch.md.\n"
	      "\n"
	      "  --kubeconfig FILE          the hub's credentials (default $KUBECONFIG, then\n"
	      "                             ~/.kube/config)\n"
	      "  --context NAME             kubeconfig context (default: current-context)\n"
	      "  --in-cluster               use the pod's service account\n"
	      "  --id NAME                  this replica's identity (default hostname-pid)\n"
	      "  --metrics HOST:PORT        serve /metrics, /healthz, /readyz (port 0 = any),\n"
	      "                             and the web page /ui/ (clusters, hub jobs)\n"
	      "  --token-file FILE          bearer token /ui/ needs (Authorization: Bearer,\n"
	      "                             or /ui/?token=); default: a random one, logged\n"
	      "  --interval DUR             one pass at least this often (default 100ms)\n"
	      "  --start-timeout DUR        withdraw a job none of whose pods was bound this\n"
	      "                             long after it was sent (default 5m); also how\n"
	      "                             long a cluster is held for a reclaiming job\n"
	      "  --cluster-lost-after DUR   requeue the jobs of a worker that has not\n"
	      "                             answered this long (default 1m)\n"
	      "  --burst-after DUR          a job may go to a public cluster after waiting\n"
	      "                             this long (default 10m)\n"
	      "  --burst-priority N         ... or at once from this priority on (default never)\n"
	      "  --burst-priority-class NAME ... or at once from this hub PriorityClass's\n"
	      "                             value on (the lower of the two)\n"
	      "  --usage-half-life DUR      time-decayed fairness of the hub queues, as the\n"
	      "                             scheduler's: queues that used much lately get\n"
	      "                             less above their deserved quota (default 0 = off)\n"
	      "  --reclaim                  a job that fits nowhere, of a queue within its\n"
	      "                             deserved quota or fair share, takes back room:\n"
	      "                             other queues' preemptible jobs above theirs are\n"
	      "                             withdrawn, and its own queue's of a lower\n"
	      "                             priority (the fewest, on one cluster; each once),\n"
	      "                             and its room there is held for the job\n"
	      "  --min-runtime DUR          ... only jobs that ran this long (default 1m)\n"
	      "  --reclaim-cooldown DUR     ... a queue loses jobs to reclaim at most once\n"
	      "                             per DUR (default 0, as the simulator's)\n"
	      "  --request-timeout DUR      one API request (default 5s)\n"
	      "  --lease-namespace NS       namespace of the lease (default kube-system)\n"
	      "  --lease-name NAME          the lease (default muster-dispatch)\n"
	      "  --lease-duration DUR       lease duration (default 15s; renew deadline 2/3)\n"
	      "  --retry-period DUR         lease retry period (default 2s)\n"
	      "  --no-leader-elect          dispatch without a lease (one replica only!)\n"
	      "  --quiet                    log errors only\n",
	      f);
}

/* Reads option argv[*i] into o; 1 consumed, -1 unknown, MU_EXIT_USAGE bad. */
static int dispatch_opt(int argc, char **argv, int *i, mu_dispatch_opts_t *o,
			const char **kc, const char **ctx, bool *in_cluster, char *tok, size_t toklen)
{
	const char *a = argv[*i];
	static const char *const with_value[] = {"--kubeconfig", "--context", "--id", "--interval",
		"--start-timeout", "--cluster-lost-after", "--burst-after", "--burst-priority",
		"--burst-priority-class", "--request-timeout", "--lease-namespace", "--lease-name", "--lease-duration",
		"--retry-period", "--metrics", "--token-file", "--usage-half-life", "--min-runtime",
		"--reclaim-cooldown", NULL};
	bool val = false;
	for (int k = 0; with_value[k]; k++)
		val |= !strcmp(a, with_value[k]);
	if (!val) {
		if (!strcmp(a, "--in-cluster"))
			*in_cluster = true;
		else if (!strcmp(a, "--quiet"))
			o->quiet = true;
		else if (!strcmp(a, "--reclaim"))
			o->reclaim = true;
		else if (!strcmp(a, "--no-leader-elect"))
			o->leader_elect = false;
		else
			return -1;
		return 0;
	}
	if (*i + 1 >= argc) {
		fprintf(stderr, "muster dispatch: %s needs a value\n", a);
		return MU_EXIT_USAGE;
	}
	const char *v = argv[++*i];
	int64_t ms = 0, n = 0;
	bool dur = strcmp(a, "--kubeconfig") && strcmp(a, "--context") && strcmp(a, "--id") &&
		   strncmp(a, "--burst-priority", 16) && strncmp(a, "--lease-name", 12) &&
		   strcmp(a, "--lease-namespace") && strcmp(a, "--metrics") && strcmp(a, "--token-file");
	if (dur && mu__parse_duration(v, &ms)) {
		fprintf(stderr, "muster dispatch: %s %s: expected a duration (250ms, 30s, 5m)\n", a, v);
		return MU_EXIT_USAGE;
	}
	if (!strcmp(a, "--kubeconfig"))
		*kc = v;
	else if (!strcmp(a, "--context"))
		*ctx = v;
	else if (!strcmp(a, "--id"))
		o->id = v;
	else if (!strcmp(a, "--interval"))
		o->interval_ms = ms < 1 ? 1 : ms > 60000 ? 60000 : (int)ms;
	else if (!strcmp(a, "--start-timeout"))
		o->start_timeout_ms = ms;
	else if (!strcmp(a, "--cluster-lost-after"))
		o->cluster_lost_ms = ms;
	else if (!strcmp(a, "--burst-after"))
		o->burst_after_ms = ms;
	else if (!strcmp(a, "--usage-half-life"))
		o->usage_half_life_ms = ms;
	else if (!strcmp(a, "--min-runtime"))
		o->min_runtime_ms = ms;
	else if (!strcmp(a, "--reclaim-cooldown"))
		o->reclaim_cooldown_ms = ms;
	else if (!strcmp(a, "--metrics"))
		o->metrics_listen = v;
	else if (!strcmp(a, "--token-file")) {
		if (mu_cli_read_token("dispatch", v, tok, toklen))
			return MU_EXIT_USAGE;
		o->token = tok;
	}
	else if (!strcmp(a, "--burst-priority-class"))
		o->burst_priority_class = v;
	else if (!strcmp(a, "--lease-namespace"))
		o->lease_namespace = v;
	else if (!strcmp(a, "--lease-name"))
		o->lease_name = v;
	else if (!strcmp(a, "--lease-duration"))
		o->lease_duration_s = ms < 3000 ? 3 : ms > 3600000 ? 3600 : (int)(ms / 1000);
	else if (!strcmp(a, "--retry-period"))
		o->retry_period_s = ms < 1000 ? 1 : ms > 600000 ? 600 : (int)(ms / 1000);
	else if (!strcmp(a, "--request-timeout"))
		o->request_timeout_ms = ms < 100 ? 100 : ms > 600000 ? 600000 : (int)ms;
	else if (mu__parse_int(v, INT32_MIN, INT32_MAX, &n)) {
		fprintf(stderr, "muster dispatch: --burst-priority %s: expected an integer\n", v);
		return MU_EXIT_USAGE;
	} else
		o->burst_priority = (int32_t)n;
	return 0;
}

static void agent_usage(FILE *f)
{
	fputs("usage: muster dispatch agent --hub-kubeconfig FILE --cluster NAME\n"
	      "                             [--kubeconfig FILE | --in-cluster] [options]\n"
	      "\n"
	      "Pull mode: runs beside a worker cluster (its Cluster on the hub has mode: pull)\n"
	      "and calls the hub, which needs no credentials for the worker.  Creates the\n"
	      "copies of the hub Jobs (and of the other kinds, where the worker has their\n"
	      "CRDs: JobSets, PyTorchJobs, MPIJobs, RayJobs, RayClusters, Volcano Jobs,\n"
	      "LeaderWorkerSets, PodGroups with their pods) sent to this cluster, deletes\n"
	      "stale ones, and reports the worker's Nodes, the kinds it serves, a\n"
	      "heartbeat and each copy's status to the hub.  Lowers an elastic Job\n"
	      "copy's parallelism, or an elastic PyTorchJob copy's Worker replicas, when\n"
	      "the hub shrinks it for a reclaim (its Role then needs patch on them).\n"
	      "\n"
	      "  --hub-kubeconfig FILE      the hub's credentials (required)\n"
	      "  --cluster NAME             this cluster's Cluster on the hub (required)\n"
	      "  --kubeconfig FILE          the worker's credentials (default $KUBECONFIG,\n"
	      "                             then ~/.kube/config)\n"
	      "  --in-cluster               the worker through the pod's service account\n"
	      "  --interval DUR             one pass at least this often (default 200ms)\n"
	      "  --request-timeout DUR      one API request (default 5s)\n"
	      "  --budgets                  watch the worker's PodDisruptionBudgets and report\n"
	      "                             each copy's allowance, for a hub that runs with\n"
	      "                             --reclaim (its Role then needs list and watch on\n"
	      "                             poddisruptionbudgets; off: no such request)\n"
	      "  --quiet                    log errors only\n",
	      f);
}

/* `muster dispatch agent ...` (argv[0] is "agent"). */
static int cmd_agent(int argc, char **argv)
{
	mu_dispatch_agent_opts_t o;
	mu_dispatch_agent_opts_defaults(&o);
	const char *hubkc = NULL, *kc = NULL;
	bool in_cluster = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			agent_usage(stdout);
			return MU_EXIT_OK;
		}
		if (!strcmp(a, "--in-cluster") || !strcmp(a, "--quiet")) {
			*(a[2] == 'i' ? &in_cluster : &o.quiet) = true;
			continue;
		}
		if (!strcmp(a, "--budgets")) {
			o.budgets = true;
			continue;
		}
		bool known = !strcmp(a, "--hub-kubeconfig") || !strcmp(a, "--cluster") ||
			     !strcmp(a, "--kubeconfig") || !strcmp(a, "--interval") ||
			     !strcmp(a, "--request-timeout");
		if (!known) {
			fprintf(stderr, "muster dispatch agent: unknown option %s\n\n", a);
			agent_usage(stderr);
			return MU_EXIT_USAGE;
		}
		if (i + 1 >= argc) {
			fprintf(stderr, "muster dispatch agent: %s needs a value\n", a);
			return MU_EXIT_USAGE;
		}
		const char *v = argv[++i];
		int64_t ms;
		if (!strcmp(a, "--hub-kubeconfig"))
			hubkc = v;
		else if (!strcmp(a, "--cluster"))
			o.cluster = v;
		else if (!strcmp(a, "--kubeconfig"))
			kc = v;
		else if (mu__parse_duration(v, &ms)) {
			fprintf(stderr, "muster dispatch agent: %s %s: expected a duration\n", a, v);
			return MU_EXIT_USAGE;
		} else if (!strcmp(a, "--interval"))
			o.interval_ms = ms < 1 ? 1 : ms > 60000 ? 60000 : (int)ms;
		else
			o.request_timeout_ms = ms < 100 ? 100 : ms > 600000 ? 600000 : (int)ms;
	}
	if (!hubkc || !o.cluster) {
		fprintf(stderr, "muster dispatch agent: --hub-kubeconfig and --cluster are required\n");
		return MU_EXIT_USAGE;
	}
	mu_kube_config_t hub, worker;
	char err[512] = "";
	if (mu_kube_config_load(hubkc, NULL, &hub, err, sizeof err)) {
		fprintf(stderr, "muster dispatch agent: --hub-kubeconfig: %s\n", err);
		return MU_EXIT_USAGE;
	}
	if (mu_kube_config_resolve(kc, NULL, in_cluster, &worker, err, sizeof err)) {
		fprintf(stderr, "muster dispatch agent: %s\n", err);
		mu_kube_config_release(&hub);
		return MU_EXIT_USAGE;
	}
	o.hub = &hub;
	o.worker = &worker;
	o.stop = mu__cli_stop_on_signals();
	int rc = mu_dispatch_agent_run(&o, err, sizeof err);
	mu_kube_config_release(&hub);
	mu_kube_config_release(&worker);
	if (rc) {
		fprintf(stderr, "muster dispatch agent: %s\n", *err ? err : mu_strerror(rc));
		return MU_EXIT_FAIL;
	}
	return MU_EXIT_OK;
}

int mu_cmd_dispatch(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "agent"))
		return cmd_agent(argc - 1, argv + 1);
	mu_dispatch_opts_t o;
	mu_dispatch_opts_defaults(&o);
	o.id = NULL; /* hostname-pid unless --id */
	const char *kc = NULL, *ctx = NULL;
	bool in_cluster = false;
	char tok[160];
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			dispatch_usage(stdout);
			return MU_EXIT_OK;
		}
		int r = dispatch_opt(argc, argv, &i, &o, &kc, &ctx, &in_cluster, tok, sizeof tok);
		if (r < 0) {
			fprintf(stderr, "muster dispatch: unknown option %s\n\n", argv[i]);
			dispatch_usage(stderr);
			return MU_EXIT_USAGE;
		}
		if (r)
			return r;
	}
	char idbuf[300];
	if (!o.id) /* two replicas must not share an identity */
		o.id = mu__cli_daemon_id("muster-dispatch", idbuf, sizeof idbuf);
	mu_kube_config_t cfg;
	char err[512] = "";
	if (mu_kube_config_resolve(kc, ctx, in_cluster, &cfg, err, sizeof err)) {
		fprintf(stderr, "muster dispatch: %s\n", err);
		return MU_EXIT_USAGE;
	}
	o.hub = &cfg;
	o.stop = mu__cli_stop_on_signals();
	int rc = mu_dispatch_run(&o, err, sizeof err);
	mu_kube_config_release(&cfg);
	if (rc == MU_ESTATE)
		return MU_EXIT_FAIL; /* the lease was lost: logged */
	if (rc) {
		fprintf(stderr, "muster dispatch: %s\n", *err ? err : mu_strerror(rc));
		return MU_EXIT_FAIL;
	}
	return MU_EXIT_OK;
}

/*
 * cmd_scheduler.c - `muster scheduler`: the Kubernetes scheduler daemon
 * (include/muster/kube.h, docs/kubernetes.md).
 *
 * Reads credentials from a kubeconfig (--kubeconfig, else $KUBECONFIG, else
 * ~/.kube/config) or the pod's service account (--in-cluster), then runs
 * mu_kube_run() until SIGINT or SIGTERM, which only set the one flag
 * below.  Exit codes: 0 after a signal, 1 when the lease was lost or the
 * daemon failed, 2 for bad usage.
 *
 * Memory: the process uses one malloc arena: on glibc's malloc (the
 * sanitizer builds) by M_ARENA_MAX 1 unless MALLOC_ARENA_MAX says
 * otherwise, on jemalloc (the release builds) by its narenas:1
 * (src/util/heap.c).  The reflectors parse each list on
 * their own threads and the loop frees what they parsed, so with an arena
 * per thread the freed pages were scattered over a dozen arenas: at 5,000
 * nodes and 58,000 pods the daemon peaked 59 MB higher (docs/evaluation.md,
 * "Sixth round").
 */
#define _GNU_SOURCE /* mallopt's M_ARENA_MAX */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "muster/kube.h"
#include "muster/util.h"

static void sched_usage(FILE *f)
{
	fputs("usage: muster scheduler [--kubeconfig FILE | --in-cluster] [options]\n"
	      "\n"
	      "Schedules the pods whose spec.schedulerName is muster's name on a Kubernetes\n"
	      "cluster (or `muster up`): gangs, queues with fair share, Job admission,\n"
	      "preemption.  Only the holder of the lease schedules.  See docs/kubernetes.md.\n"
	      "\n"
	      "  --kubeconfig FILE        credentials (default $KUBECONFIG, then ~/.kube/config)\n"
	      "  --context NAME           kubeconfig context (default: current-context)\n"
	      "  --in-cluster             use the pod's service account\n"
	      "  --scheduler-name NAME    pods' spec.schedulerName to serve (default muster)\n"
	      "  --metrics HOST:PORT      serve /metrics, /healthz, /readyz, /explain and the\n"
	      "                           live web UI at /ui/ (port 0 = any; no HOST = 127.0.0.1)\n"
	      "  --token-file FILE        bearer token that /explain and the UI's data need\n"
	      "                           (default: a random one, printed in the UI's address)\n"
	      "  --ui-history-step S      the UI keeps 1440 points of history, one per S (60)\n"
	      "  --id NAME                this replica's identity (default: hostname-pid)\n"
	      "  --lease-namespace NS     namespace of the lease (default kube-system)\n"
	      "  --lease-name NAME        the lease (default muster-scheduler)\n"
	      "  --lease-duration S       lease duration (default 15; renew deadline 2/3 of it)\n"
	      "  --retry-period S         lease retry period (default 2)\n"
	      "  --no-leader-elect        schedule without a lease (one replica only!)\n"
	      "  --cycle-ms MS            at most one cycle per MS when things change (default 20)\n"
	      "  --workers N              threads writing binds and status (default 8)\n"
	      "  --default-queue NAME     queue of pods that name none (default default)\n"
	      "  --policy NAME            scoring policy: binpack (default), spread, ..., muster,\n"
	      "                           fgd, muster-supply (their mix: the pods pending and\n"
	      "                           running on the cluster, kept as they come and go;\n"
	      "                           fgd's the shapes covering 95% of them; docs/policy.md),\n"
	      "                           or muster-horizon: muster with its settings chosen\n"
	      "                           again by rollouts on a worker thread as the GPUs fill,\n"
	      "                           from the pods seen so far (docs/policy.md); muster-rollout\n"
	      "                           exists only in muster eval openb\n"
	      "  --horizon-from SHARE     muster-horizon: first checkpoint, a share of the GPUs\n"
	      "                           allocated (0.5)\n"
	      "  --horizon-every SHARE    muster-horizon: the checkpoints' spacing (0.1)\n"
	      "  --horizon-min-interval DUR  muster-horizon: at most one choice per DUR (60s)\n"
	      "  --horizon-rollouts N     muster-horizon: rollouts per candidate (8)\n"
	      "  --no-preemption          no preemption inside a queue\n"
	      "  --no-reclaim             no reclaim between queues\n"
	      "  --min-runtime S          a job runs this long before it can be preempted (60)\n"
	      "  --gang-rollback DUR      evict a gang's bound pods after it stays below its\n"
	      "                           minMember this long (60s; never: -1)\n"
	      "  --consolidate            move pods that a controller recreates (Job, ReplicaSet,\n"
	      "                           StatefulSet, Kubeflow jobs, RayCluster; never bare pods)\n"
	      "                           to make room for a gang: evict, then bind the\n"
	      "                           replacement where the plan says (off by default)\n"
	      "  --mig-layouts            plan the MIG layouts of A100/H100 nodes for the pending\n"
	      "                           pods around the running ones, and write them on each\n"
	      "                           Node as the annotation muster.io/mig-layout (off)\n"
	      "  --move-ratio R           GPUs moved per GPU gained, at most (1)\n"
	      "  --move-gpus-per-hour N   GPUs moved in any hour, at most (32; 0 = no cap)\n"
	      "  --move-pods-per-hour N   pods moved in any hour, at most (64)\n"
	      "  --move-hold DUR          how long a moved pod's place waits for its\n"
	      "                           replacement (5m)\n"
	      "  --order ORDER            jobs in a queue: jct (default), priority, sjf or las\n"
	      "                           (a Queue with spec.order: fifo keeps arrival order)\n"
	      "  --log-json               structured logs as JSON lines\n"
	      "  -v, --verbose            debug logs\n"
	      "  -h, --help               print this help\n",
	      f);
}

/* A positive integer option value; -1 when bad. */
static long pos_arg(const char *opt, const char *v, long max)
{
	char *end;
	errno = 0;
	long x = v ? strtol(v, &end, 10) : -1;
	if (!v || errno || *end || end == v || x < 0 || x > max) {
		fprintf(stderr, "muster scheduler: %s: expected an integer from 0 to %ld\n", opt, max);
		return -1;
	}
	return x;
}

/* Applies one muster-horizon option at argv[*i] (*hz names it); returns
 * MU_EXIT_USAGE when bad, -1 if it is not one. */
static int horizon_opt(int argc, char **argv, int *i, mu_kube_opts_t *o, const char **hz)
{
	const char *a = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
	bool share = !strcmp(a, "--horizon-from") || !strcmp(a, "--horizon-every");
	if (!share && strcmp(a, "--horizon-min-interval") && strcmp(a, "--horizon-rollouts"))
		return -1;
	*hz = a;
	if (!v) {
		fprintf(stderr, "muster scheduler: %s needs a value\n", a);
		return MU_EXIT_USAGE;
	}
	(*i)++;
	int64_t n;
	if (share) {
		if (mu__parse_num(v, 0, 1, a[10] == 'f' ? &o->horizon.at.from :
				  &o->horizon.at.every) != MU_OK) {
			fprintf(stderr, "muster scheduler: %s: expected a share of the GPUs from 0 "
				"to 1, such as 0.5; got %s\n", a, v);
			return MU_EXIT_USAGE;
		}
	} else if (a[10] == 'm') {
		if (mu__parse_duration(v, &o->horizon.min_interval) != MU_OK) {
			fprintf(stderr, "muster scheduler: %s: expected a duration such as 60s or "
				"5m (0: none); got %s\n", a, v);
			return MU_EXIT_USAGE;
		}
	} else if (mu__parse_int(v, 1, 1000, &n) != MU_OK) {
		fprintf(stderr, "muster scheduler: %s: expected an integer from 1 to 1000; got %s\n",
			a, v);
		return MU_EXIT_USAGE;
	} else {
		o->horizon.rollout.rollouts = (int32_t)n;
	}
	return MU_EXIT_OK;
}

/* Refuses muster-rollout, and --horizon-* options without muster-horizon. */
static int horizon_check(const mu_kube_opts_t *o, const char *hz)
{
	if (o->engine.score == &mu_score_muster_rollout) {
		fprintf(stderr, "muster scheduler: --policy muster-rollout chooses muster's settings "
			"once from the whole workload, which only muster eval openb knows in advance; "
			"use muster-horizon (chosen again from the pods seen so far) or muster\n");
		return MU_EXIT_USAGE;
	}
	if (hz && o->engine.score != &mu_score_muster_horizon) {
		fprintf(stderr, "muster scheduler: %s applies to --policy muster-horizon only\n", hz);
		return MU_EXIT_USAGE;
	}
	return MU_EXIT_OK;
}

/* Applies one option at argv[*i]; MU_EXIT_USAGE when bad, -1 if unknown. */
static int sched_opt(int argc, char **argv, int *i, mu_kube_opts_t *o, const char **kc,
		     const char **ctx, bool *in_cluster, char *tok, size_t toklen)
{
	const char *a = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
	long x;
	const char **sv = !strcmp(a, "--kubeconfig") ? kc : !strcmp(a, "--context") ? ctx :
			  !strcmp(a, "--scheduler-name") ? &o->scheduler_name :
			  !strcmp(a, "--metrics") ? &o->metrics_listen : !strcmp(a, "--id") ? &o->id :
			  !strcmp(a, "--lease-namespace") ? &o->lease_namespace :
			  !strcmp(a, "--lease-name") ? &o->lease_name :
			  !strcmp(a, "--default-queue") ? &o->default_queue : NULL;
	int *iv = !strcmp(a, "--lease-duration") ? &o->lease_duration_s :
		  !strcmp(a, "--retry-period") ? &o->retry_period_s : !strcmp(a, "--cycle-ms") ? &o->cycle_ms :
		  !strcmp(a, "--workers") ? &o->workers :
		  !strcmp(a, "--move-gpus-per-hour") ? &o->engine.move_gpus_per_hour :
		  !strcmp(a, "--move-pods-per-hour") ? &o->engine.move_pods_per_hour : NULL;
	if (sv || iv || !strcmp(a, "--policy") || !strcmp(a, "--min-runtime") ||
	    !strcmp(a, "--token-file") || !strcmp(a, "--ui-history-step") ||
	    !strcmp(a, "--gang-rollback") || !strcmp(a, "--order") || !strcmp(a, "--move-ratio") ||
	    !strcmp(a, "--move-hold")) {
		if (!v) {
			fprintf(stderr, "muster scheduler: %s needs a value\n", a);
			return MU_EXIT_USAGE;
		}
		(*i)++;
		if (sv) {
			*sv = v;
		} else if (iv) {
			if ((x = pos_arg(a, v, 86400000)) < 0)
				return MU_EXIT_USAGE;
			*iv = (int)x;
		} else if (!strcmp(a, "--token-file")) {
			if (mu_cli_read_token("scheduler", v, tok, toklen))
				return MU_EXIT_USAGE;
			o->token = tok;
		} else if (!strcmp(a, "--ui-history-step")) {
			if ((x = pos_arg(a, v, 86400)) < 1) {
				if (x == 0)
					fprintf(stderr, "muster scheduler: %s: at least 1 second\n", a);
				return MU_EXIT_USAGE;
			}
			o->ui_history_step_ms = (int)x * 1000;
		} else if (!strcmp(a, "--gang-rollback")) {
			mu_time_t ms;
			if (!strcmp(v, "-1")) {
				o->gang_rollback_ms = -1;
			} else if (mu__parse_duration(v, &ms) != MU_OK) {
				fprintf(stderr, "muster scheduler: --gang-rollback: expected a duration "
						"such as 30s or 5m, or -1 for never; got %s\n", v);
				return MU_EXIT_USAGE;
			} else {
				o->gang_rollback_ms = ms;
			}
		} else if (!strcmp(a, "--move-ratio")) {
			char *end;
			double r = strtod(v, &end);
			if (*end || end == v || !(r > 0 && r <= 1e6)) {
				fprintf(stderr, "muster scheduler: --move-ratio: expected a number above 0 "
						"(GPUs moved per GPU gained), got %s\n", v);
				return MU_EXIT_USAGE;
			}
			o->engine.move_ratio = r;
		} else if (!strcmp(a, "--move-hold")) {
			mu_time_t ms;
			if (mu__parse_duration(v, &ms) != MU_OK || ms <= 0) {
				fprintf(stderr, "muster scheduler: --move-hold: expected a duration such as "
						"90s or 5m, got %s\n", v);
				return MU_EXIT_USAGE;
			}
			o->move_hold_ms = ms;
		} else if (!strcmp(a, "--order")) {
			int ord = mu_order_find(v);
			if (ord < 0) {
				fprintf(stderr, "muster scheduler: unknown order %s (jct, priority, sjf or las)\n", v);
				return MU_EXIT_USAGE;
			}
			o->engine.order = (mu_order_t)ord;
		} else if (!strcmp(a, "--policy")) {
			if (!(o->engine.score = mu_score_find(v))) {
				fprintf(stderr, "muster scheduler: unknown policy %s\n", v);
				return MU_EXIT_USAGE;
			}
		} else {
			if ((x = pos_arg(a, v, 86400 * 365)) < 0)
				return MU_EXIT_USAGE;
			o->engine.min_runtime = x * 1000;
		}
		return MU_EXIT_OK;
	}
	if (!strcmp(a, "--in-cluster"))
		*in_cluster = true;
	else if (!strcmp(a, "--no-leader-elect"))
		o->leader_elect = false;
	else if (!strcmp(a, "--no-preemption"))
		o->engine.preemption = false;
	else if (!strcmp(a, "--no-reclaim"))
		o->engine.reclaim = false;
	else if (!strcmp(a, "--consolidate"))
		o->engine.consolidate = true;
	else if (!strcmp(a, "--mig-layouts"))
		o->mig_layouts = true;
	else if (!strcmp(a, "--log-json"))
		o->log_json = true;
	else if (!strcmp(a, "-v") || !strcmp(a, "--verbose"))
		o->log_level = 2;
	else
		return -1;
	return MU_EXIT_OK;
}

int mu_cli_read_token(const char *cmd, const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "muster %s: --token-file %s: %s\n", cmd, path, strerror(errno));
		return MU_EXIT_USAGE;
	}
	size_t n = fread(buf, 1, len, f);
	fclose(f);
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' ' || buf[n - 1] == '\t'))
		n--;
	size_t s = 0;
	while (s < n && (buf[s] == ' ' || buf[s] == '\t'))
		s++;
	if (n >= len || n == s || memchr(buf + s, '\n', n - s)) {
		fprintf(stderr, "muster %s: --token-file %s: expected one line of 1 to %zu characters\n",
			cmd, path, len - 1);
		return MU_EXIT_USAGE;
	}
	memmove(buf, buf + s, n - s);
	buf[n - s] = '\0';
	return MU_EXIT_OK;
}

int mu_cmd_scheduler(int argc, char **argv)
{
	mu_kube_opts_t o;
	mu_kube_opts_defaults(&o);
	const char *kc = NULL, *ctx = NULL;
	bool in_cluster = false;
	char idbuf[300], tok[256];
	const char *hz = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			sched_usage(stdout);
			return MU_EXIT_OK;
		}
		int r = horizon_opt(argc, argv, &i, &o, &hz);
		if (r < 0)
			r = sched_opt(argc, argv, &i, &o, &kc, &ctx, &in_cluster, tok, sizeof tok);
		if (r < 0) {
			fprintf(stderr, "muster scheduler: unknown option %s\n\n", argv[i]);
			sched_usage(stderr);
			return MU_EXIT_USAGE;
		}
		if (r)
			return r;
	}
	if (horizon_check(&o, hz))
		return MU_EXIT_USAGE;
	if (o.lease_duration_s < 3 || o.retry_period_s < 1 || o.cycle_ms < 1) {
		fprintf(stderr, "muster scheduler: the lease needs at least 3 s, retries 1 s, cycles 1 ms\n");
		return MU_EXIT_USAGE;
	}
	o.renew_deadline_s = o.lease_duration_s * 2 / 3;
	o.fault = getenv("MUSTER_FAULT"); /* tests only (kube.h) */
	if (o.fault && strcmp(o.fault, "move-stall")) {
		fprintf(stderr, "muster scheduler: MUSTER_FAULT=%s: the only fault point is move-stall\n", o.fault);
		return MU_EXIT_USAGE;
	}
	if (!o.id)
		o.id = mu__cli_daemon_id("muster", idbuf, sizeof idbuf);
	mu_kube_config_t cfg;
	char err[512] = "";
	if (mu_kube_config_resolve(kc, ctx, in_cluster, &cfg, err, sizeof err)) {
		fprintf(stderr, "muster scheduler: %s\n", err);
		return MU_EXIT_USAGE;
	}
	o.cfg = &cfg;
	o.stop = mu__cli_stop_on_signals();
	if (!getenv("MALLOC_ARENA_MAX")) /* before any thread starts */
		mallopt(M_ARENA_MAX, 1);
	int rc = mu_kube_run(&o, err, sizeof err);
	mu_kube_config_release(&cfg);
	if (rc == MU_ESTATE)
		return MU_EXIT_FAIL;
	if (rc) {
		fprintf(stderr, "muster scheduler: %s\n", *err ? err : mu_strerror(rc));
		return MU_EXIT_FAIL;
	}
	return MU_EXIT_OK;
}

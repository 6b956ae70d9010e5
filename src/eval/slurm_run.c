/*
 * slurm_run.c - one Slurm run of `muster eval slurm`: submits every job
 * with sbatch at its (compressed) submit time, polls squeue once a second
 * for the expected starts of pending jobs (the %S field, what `squeue
 * --start` prints), waits until the queue is empty, then reads the job
 * completion log (starts and ends) and `scontrol -o show job` (which
 * scheduler started each job) into the side's records.
 *
 * SIGINT, SIGTERM and SIGHUP are blocked for the whole run and waited for
 * in every sleep, so an interrupt ends the run at once and the cluster is
 * still torn down; the mask is restored before returning.  The run stops
 * with an error after opts->timeout_s.  Work per poll is O(jobs in the
 * queue); memory is O(jobs).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eval/slurm_int.h"
#include "muster/util.h"
#include "muster/report.h"

/* Slurm job id -> index into ev->jobs, for ids from first on. */
typedef struct idmap {
	int64_t first;
	int32_t *idx;
	size_t n;
} idmap_t;

static int32_t idmap_get(const idmap_t *m, int64_t id)
{
	if (id < m->first || (uint64_t)(id - m->first) >= m->n)
		return -1;
	return m->idx[id - m->first];
}

typedef struct run {
	mu_slurm_eval_t *ev;
	mu__slurm_cl_t *cl;
	mu_slurm_side_t *side;
	idmap_t map;
	double t0, wall0;         /* monotonic and epoch seconds at the start */
	size_t next;              /* next job to submit */
	int pending, running;
} run_t;

/* The sbatch of job i; records its id. */
static int submit(run_t *r, size_t i, mu_diag_t *diag)
{
	const mu_slurm_job_t *j = &r->ev->jobs[i];
	char name[64], nodes[32], gpus[48], limit[32], wrap[64], chdir[MU__SLURM_PATH + 16];
	snprintf(name, sizeof name, "--job-name=%s", j->name);
	snprintf(nodes, sizeof nodes, "--nodes=%d", (int)j->nodes);
	if (j->gpus % j->nodes == 0)
		snprintf(gpus, sizeof gpus, "--gpus-per-node=%d", (int)(j->gpus / j->nodes));
	else
		snprintf(gpus, sizeof gpus, "--gpus=%d", (int)j->gpus);
	snprintf(limit, sizeof limit, "--time=%d", (int)j->limit_min);
	snprintf(wrap, sizeof wrap, "--wrap=sleep %.3f", j->dur_s);
	snprintf(chdir, sizeof chdir, "--chdir=%s", r->cl->dir);
	char *argv[] = {NULL, "--parsable", name, nodes, "--ntasks-per-node=1", gpus,
			limit, "--output=/dev/null", "--error=/dev/null", chdir, wrap, NULL};
	char *out, err[256];
	int st;
	int rc = mu__slurm_cmd(r->cl, MU__SL_SBATCH, argv, 30, &out, &st, err, sizeof err);
	if (rc != MU_OK)
		return mu__diag(diag, rc, "sbatch", 0, 0, "could not run it");
	char *end;
	long long id = strtoll(out, &end, 10);
	bool ok = st == 0 && end != out && (*end == 0 || *end == '\n' || *end == ';') && id > 0;
	free(out);
	if (!ok)
		return mu__diag(diag, MU_ESTATE, "sbatch", 0, 0, "job %s: exit %d: %s", j->name,
				st, err);
	if (i == 0)
		r->map.first = id;
	int64_t k = id - r->map.first;
	if (k < 0 || (uint64_t)k >= r->map.n)
		return mu__diag(diag, MU_ESTATE, "sbatch", 0, 0,
				"job %s: id %lld out of the expected range", j->name, id);
	r->map.idx[k] = (int32_t)i;
	r->side->recs[i].submit_s = mu__slurm_mono() - r->t0; /* until Slurm's own */
	return MU_OK;
}

/* One `squeue -h -o "%i %t %S"`: counts, and the first expected start of
 * each pending job.  Returns MU_OK, or an error when squeue failed. */
static int poll_queue(run_t *r, mu_diag_t *diag)
{
	char *argv[] = {NULL, "-h", "-o", "%i %t %S", NULL}, *out, err[256];
	int st;
	int rc = mu__slurm_cmd(r->cl, MU__SL_SQUEUE, argv, 20, &out, &st, err, sizeof err);
	if (rc != MU_OK)
		return mu__diag(diag, rc, "squeue", 0, 0, "could not run it");
	if (st != 0) {
		free(out);
		return mu__diag(diag, MU_ESTATE, "squeue", 0, 0, "exit %d: %s", st, err);
	}
	r->pending = r->running = 0;
	char *save = NULL;
	for (char *l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *e1;
		long long id = strtoll(l, &e1, 10);
		if (e1 == l || *e1 != ' ')
			continue;
		char *st2 = e1 + 1, *sp = strchr(st2, ' ');
		if (!sp)
			continue;
		bool pd = sp - st2 == 2 && !strncmp(st2, "PD", 2);
		r->pending += pd;
		r->running += !pd;
		int32_t i = idmap_get(&r->map, id);
		int64_t t;
		if (pd && i >= 0 && r->side->recs[i].est_s < 0 &&
		    mu_slurm_parse_time(sp + 1, strlen(sp + 1), &t) == MU_OK)
			r->side->recs[i].est_s = (double)t - r->wall0;
	}
	free(out);
	return MU_OK;
}

/* Applies one job line (job completion log or scontrol) to the records. */
static void apply_line(run_t *r, const char *l, size_t n, bool scontrol)
{
	mu_slurm_line_t x;
	if (mu_slurm_parse_line(l, n, &x) != MU_OK)
		return;
	int32_t i = idmap_get(&r->map, x.id);
	if (i < 0)
		return;
	mu_slurm_rec_t *rec = &r->side->recs[i];
	if (scontrol) {
		rec->by_backfill = x.backfill;
		if (rec->start_s >= 0)
			return; /* the completion log had it */
	}
	if (x.submit >= 0)
		rec->submit_s = (double)x.submit - r->wall0;
	if (x.start >= 0)
		rec->start_s = (double)x.start - r->wall0;
	if (x.end >= 0 && (x.completed || scontrol))
		rec->end_s = (double)x.end - r->wall0;
}

static void apply_text(run_t *r, char *text, bool scontrol)
{
	char *save = NULL;
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		apply_line(r, l, strlen(l), scontrol);
}

/* Reads the job completion log and scontrol's job records. */
static int collect(run_t *r, mu_diag_t *diag)
{
	char path[MU__SLURM_PATH + 32];
	snprintf(path, sizeof path, "%s/jobcomp.txt", r->cl->dir);
	FILE *f = fopen(path, "r");
	if (!f)
		return mu__diag(diag, MU_EIO, path, 0, 0, "no job completion log");
	char *line = NULL;
	size_t cap = 0;
	ssize_t got;
	while ((got = getline(&line, &cap, f)) > 0)
		apply_line(r, line, (size_t)got, false);
	free(line);
	fclose(f);
	char *argv[] = {NULL, "-o", "show", "job", NULL}, *out, err[256];
	int st;
	int rc = mu__slurm_cmd(r->cl, MU__SL_SCONTROL, argv, 60, &out, &st, err, sizeof err);
	if (rc != MU_OK)
		return mu__diag(diag, rc, "scontrol", 0, 0, "could not run it");
	if (st == 0)
		apply_text(r, out, true);
	free(out);
	return st == 0 ? MU_OK : mu__diag(diag, MU_ESTATE, "scontrol", 0, 0, "exit %d: %s",
					  st, err);
}

/* `scontrol --version` ("slurm-wlm 22.05.8") into ev->slurm_version. */
static void version(run_t *r)
{
	char *argv[] = {NULL, "--version", NULL}, *out;
	int st;
	if (mu__slurm_cmd(r->cl, MU__SL_SCONTROL, argv, 10, &out, &st, NULL, 0) != MU_OK)
		return;
	if (st == 0)
		snprintf(r->ev->slurm_version, sizeof r->ev->slurm_version, "%.*s",
			 (int)strcspn(out, "\n"), out);
	free(out);
}

static void progress(run_t *r, const char *label, bool final)
{
	const mu_slurm_opts_t *o = &r->ev->opts;
	if (!o->progress)
		return;
	char line[256], a[32], b[32];
	mu__fmt_duration(a, sizeof a, mu__slurm_mono() - r->t0);
	mu__fmt_duration(b, sizeof b, r->ev->span_s);
	snprintf(line, sizeof line, "%s: %zu/%zu submitted, %d running, %d pending, %s (arrivals "
		 "end at %s)", label, r->next, r->ev->njobs, r->running, r->pending, a, b);
	o->progress(o->progress_ctx, line, final);
}

/* Submits and polls until every job is done or the time is up. */
static int drive(run_t *r, const char *label, mu_diag_t *diag)
{
	const mu_slurm_opts_t *o = &r->ev->opts;
	double limit = o->timeout_s > 0 ? o->timeout_s : 3 * r->ev->span_s + 120;
	double next_poll = 0;
	int rc = MU_OK;
	for (;;) {
		double now = mu__slurm_mono() - r->t0;
		while (r->next < r->ev->njobs && r->ev->jobs[r->next].submit_s <= now) {
			if ((rc = submit(r, r->next, diag)) != MU_OK)
				return rc;
			r->next++;
			now = mu__slurm_mono() - r->t0;
		}
		if (now >= next_poll) {
			if ((rc = poll_queue(r, diag)) != MU_OK || (rc = mu__slurm_alive(r->cl, diag)))
				return rc;
			progress(r, label, false);
			if (r->next == r->ev->njobs && r->pending + r->running == 0)
				return MU_OK;
			next_poll = floor(now / o->poll_s + 1) * o->poll_s;
		}
		if (now > limit)
			return mu__diag(diag, MU_ESTATE, "slurm", 0, 0,
					"%s: not done after %.0f s (%d jobs still queued)", label,
					limit, r->pending + r->running);
		double wake = next_poll;
		if (r->next < r->ev->njobs && r->ev->jobs[r->next].submit_s < wake)
			wake = r->ev->jobs[r->next].submit_s;
		if (mu__slurm_sleep(r->cl, wake - (mu__slurm_mono() - r->t0)))
			return mu__diag(diag, MU_ESTATE, "slurm", 0, 0, "interrupted");
	}
}

int mu__slurm_run(mu_slurm_eval_t *ev, const char *sched_params, mu_slurm_side_t *side,
		  mu_diag_t *diag)
{
	run_t r = {.ev = ev, .side = side};
	mu__slurm_cl_t *cl = calloc(1, sizeof *cl);
	r.map.n = ev->njobs;
	r.map.idx = malloc((ev->njobs ? ev->njobs : 1) * sizeof *r.map.idx);
	side->recs = malloc((ev->njobs ? ev->njobs : 1) * sizeof *side->recs);
	if (!cl || !r.map.idx || !side->recs) {
		free(cl);
		free(r.map.idx);
		return MU_ENOMEM;
	}
	for (size_t i = 0; i < ev->njobs; i++) {
		r.map.idx[i] = -1;
		side->recs[i] = (mu_slurm_rec_t){-1, -1, -1, -1, false};
	}
	r.cl = cl;
	sigset_t old;
	sigemptyset(&cl->sigs);
	sigaddset(&cl->sigs, SIGINT);
	sigaddset(&cl->sigs, SIGTERM);
	sigaddset(&cl->sigs, SIGHUP);
	sigprocmask(SIG_BLOCK, &cl->sigs, &old);
	char label[128];
	snprintf(label, sizeof label, "Slurm %s", side->label);
	double w0 = mu__slurm_mono();
	int rc = mu__slurm_start(cl, &ev->opts, ev->win.nodes, sched_params, diag);
	if (rc == MU_OK) {
		snprintf(ev->slurm_conf, sizeof ev->slurm_conf, "%s", cl->conf_text);
		version(&r);
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		r.wall0 = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
		r.t0 = mu__slurm_mono();
		rc = drive(&r, label, diag);
		progress(&r, label, true);
	}
	if (rc == MU_OK)
		rc = collect(&r, diag);
	mu__slurm_stop(cl);
	side->wall_s = mu__slurm_mono() - w0;
	sigprocmask(SIG_SETMASK, &old, NULL);
	free(cl);
	free(r.map.idx);
	return rc;
}

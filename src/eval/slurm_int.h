/*
 * slurm_int.h - the inside of `muster eval slurm`, shared by its files:
 * a Slurm cluster on loopback that this process owns (slurm_cluster.c),
 * the commands run against it, and the configuration text (pure, so that
 * tests can check it).  Nothing here is public.
 */
#ifndef MUSTER_EVAL_SLURM_INT_H
#define MUSTER_EVAL_SLURM_INT_H

#include <limits.h>
#include <signal.h>
#include <sys/types.h>

#include "muster/eval_slurm.h"

#define MU__SLURM_PATH 512

/* Slurm's programs, found on PATH (or /usr/sbin, /sbin). */
enum { MU__SL_CTLD, MU__SL_SLURMD, MU__SL_SBATCH, MU__SL_SQUEUE, MU__SL_SCONTROL,
       MU__SL_SCANCEL, MU__SL_SINFO, MU__SL_NPROGS };

/* What a slurm.conf is written from. */
typedef struct mu__slurm_conf {
	const char *dir;          /* the cluster's directory */
	const char *user;         /* SlurmUser and SlurmdUser */
	int ctld_port;
	const int *ports;         /* one per node */
	int nodes;
	int gpus_per_node;
	int cpus_per_node;
	const char *sched_params; /* SchedulerParameters */
} mu__slurm_conf_t;

/* Writes slurm.conf (into buf, always NUL-terminated); returns the length
 * it wanted, as snprintf does.  Pure. */
int mu__slurm_conf_text(const mu__slurm_conf_t *c, char *buf, size_t len);
/* gres.conf: GPUs on stand-in device files DIR/gpu0.. (symlinks to
 * /dev/null), no autodetection. */
int mu__slurm_gres_text(const mu__slurm_conf_t *c, char *buf, size_t len);

/* A running cluster.  All of it is owned by the struct. */
typedef struct mu__slurm_cl {
	char dir[MU__SLURM_PATH];
	char conf[MU__SLURM_PATH + 32];
	char prog[MU__SL_NPROGS][MU__SLURM_PATH];
	char **envp;              /* environ without SLURM_*, plus SLURM_CONF */
	pid_t ctld;               /* 0 when not running */
	pid_t *slurmd;            /* nodes of them */
	int nodes;
	bool keep;
	sigset_t sigs;            /* the blocked signals that interrupt */
	char conf_text[4096];
} mu__slurm_cl_t;

/* Finds the programs into cl->prog; NULL when all are there, else the name
 * of the first missing one. */
const char *mu__slurm_find(mu__slurm_cl_t *cl);

/* Sets up and starts a cluster of `nodes` nodes with sched_params, and
 * waits until every node is idle (at most 60 s).  On error everything
 * started is stopped again (mu__slurm_stop is still safe to call).
 * MU_ESTATE with a message when a daemon fails. */
int mu__slurm_start(mu__slurm_cl_t *cl, const mu_slurm_opts_t *o, int nodes,
		    const char *sched_params, mu_diag_t *diag);
/* Cancels every job, stops every daemon (SIGTERM, then SIGKILL after a
 * few seconds), kills what is left of the jobs (processes whose
 * environment names this cluster's SLURM_CONF) and removes the directory
 * unless kept.  Safe on a half-started or stopped cluster. */
void mu__slurm_stop(mu__slurm_cl_t *cl);

/* Runs Slurm command `prog` with argv (argv[0] is replaced by the
 * program's path), waits at most timeout_s, and gives its stdout in *out
 * (malloc'd, NUL-terminated, the caller's) and its exit status (-1 when
 * killed or timed out).  The first bytes of stderr go into err (may be
 * NULL).  MU_EIO when it could not be run. */
int mu__slurm_cmd(const mu__slurm_cl_t *cl, int prog, char **argv, double timeout_s,
		  char **out, int *status, char *err, size_t errlen);

/* Sleeps up to s seconds; true when one of cl->sigs arrived. */
bool mu__slurm_sleep(const mu__slurm_cl_t *cl, double s);
/* Whether the daemons still run; when not, a message naming the one that
 * stopped into diag. */
int mu__slurm_alive(mu__slurm_cl_t *cl, mu_diag_t *diag);

/* One Slurm run of the workload with sched_params into side. */
int mu__slurm_run(mu_slurm_eval_t *ev, const char *sched_params,
		  mu_slurm_side_t *side, mu_diag_t *diag);

double mu__slurm_mono(void);

#endif

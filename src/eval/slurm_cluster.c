/*
 * slurm_cluster.c - a Slurm cluster on loopback, owned by this process, for
 * `muster eval slurm`.
 *
 * mu__slurm_start() makes a temporary directory, writes slurm.conf and
 * gres.conf into it (the text comes from mu__slurm_conf_text), stand-in GPU
 * device files (symlinks to /dev/null: Slurm wants a device per GPU, and
 * the jobs never open them), picks free loopback ports, and starts one
 * slurmctld and one slurmd per node (`slurmd -D -N nNNN`, each with its own
 * port), all in the foreground as children of this process, in their own
 * process group (a terminal's Ctrl-C reaches only muster, which then stops
 * them in order) and with PR_SET_PDEATHSIG, so that they die with muster
 * even when it is killed.  Every daemon binds to 127.0.0.1 only
 * (CommunicationParameters=NoCtldInAddrAny,NoInAddrAny).
 *
 * Client commands run with a timeout and their output captured.  The
 * children get the environment without SLURM_* variables plus SLURM_CONF;
 * mu__slurm_stop() uses that SLURM_CONF to find what is left of the jobs
 * (slurmstepd, the job's shell and its sleep) and kills those processes by
 * pid.  Every system call's result is checked.
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <ftw.h>
#include <time.h>
#include <unistd.h>

#include "eval/slurm_int.h"
#include "muster/util.h"

extern char **environ;

#define CMD_OUT_MAX (64u << 20) /* most stdout one command may print */

static const char *const prog_names[MU__SL_NPROGS] = {
	"slurmctld", "slurmd", "sbatch", "squeue", "scontrol", "scancel", "sinfo",
};

double mu__slurm_mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* --- Configuration text ------------------------------------------------------ */

int mu__slurm_conf_text(const mu__slurm_conf_t *c, char *buf, size_t len)
{
	size_t n = 0;
	int w;
#define PUT(...)                                                            \
	do {                                                                \
		w = snprintf(buf + (n < len ? n : len), n < len ? len - n : 0, \
			     __VA_ARGS__);                                  \
		if (w < 0)                                                  \
			return w;                                           \
		n += (size_t)w;                                             \
	} while (0)
	PUT("# Written by muster eval slurm for one run; see docs/evaluation.md.\n"
	    "ClusterName=muster\nSlurmctldHost=localhost(127.0.0.1)\n"
	    "SlurmctldPort=%d\nCommunicationParameters=NoCtldInAddrAny,NoInAddrAny\n"
	    "AuthType=auth/none\nCredType=cred/none\n"
	    "SlurmUser=%s\nSlurmdUser=%s\n", c->ctld_port, c->user, c->user);
	PUT("StateSaveLocation=%s/state\nSlurmdSpoolDir=%s/spool/%%n\n"
	    "SlurmctldPidFile=%s/slurmctld.pid\nSlurmdPidFile=%s/spool/%%n/slurmd.pid\n"
	    "SlurmctldLogFile=%s/log/slurmctld.log\nSlurmdLogFile=%s/log/slurmd.%%n.log\n"
	    "SlurmctldDebug=info\nSlurmdDebug=error\n", c->dir, c->dir, c->dir, c->dir,
	    c->dir, c->dir);
	PUT("ProctrackType=proctrack/pgid\nTaskPlugin=task/none\n"
	    "JobAcctGatherType=jobacct_gather/none\n"
	    "AccountingStorageType=accounting_storage/none\n"
	    "JobCompType=jobcomp/filetxt\nJobCompLoc=%s/jobcomp.txt\n"
	    "MpiDefault=none\nMailProg=/bin/true\nReturnToService=2\n"
	    "SlurmdParameters=config_overrides\nMinJobAge=86400\nMaxJobCount=100000\n"
	    "JobRequeue=0\nOverTimeLimit=1\nKillWait=2\nInactiveLimit=0\n", c->dir);
	PUT("SchedulerType=sched/backfill\nSchedulerParameters=%s\n"
	    "SelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n"
	    "PriorityType=priority/basic\nPreemptType=preempt/none\nGresTypes=gpu\n",
	    c->sched_params);
	for (int i = 0; i < c->nodes; i++)
		PUT("NodeName=n%03d NodeHostname=localhost NodeAddr=127.0.0.1 Port=%d "
		    "CPUs=%d RealMemory=%d Gres=gpu:%d State=UNKNOWN\n", i + 1, c->ports[i],
		    c->cpus_per_node, 64 * 1024 * c->gpus_per_node, c->gpus_per_node);
	PUT("PartitionName=gpu Nodes=ALL Default=YES MaxTime=INFINITE State=UP "
	    "OverSubscribe=NO\n");
#undef PUT
	return (int)n;
}

int mu__slurm_gres_text(const mu__slurm_conf_t *c, char *buf, size_t len)
{
	return snprintf(buf, len, "AutoDetect=off\nName=gpu File=%s/gpu[0-%d]\n", c->dir,
			c->gpus_per_node - 1);
}

/* --- Programs ----------------------------------------------------------------- */

/* The first executable `name` in PATH, /usr/sbin or /sbin into out. */
static bool find_prog(const char *name, char *out, size_t len)
{
	const char *path = getenv("PATH");
	char dirs[4096];
	snprintf(dirs, sizeof dirs, "%s:/usr/sbin:/sbin", path ? path : "/usr/bin:/bin");
	char *save = NULL;
	for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		int w = snprintf(out, len, "%s/%s", d, name);
		if (w > 0 && (size_t)w < len && access(out, X_OK) == 0)
			return true;
	}
	return false;
}

const char *mu__slurm_find(mu__slurm_cl_t *cl)
{
	for (int i = 0; i < MU__SL_NPROGS; i++)
		if (!find_prog(prog_names[i], cl->prog[i], sizeof cl->prog[i]))
			return prog_names[i];
	return NULL;
}

const char *mu_slurm_missing(void)
{
	mu__slurm_cl_t *cl = calloc(1, sizeof *cl);
	if (!cl)
		return "memory";
	const char *m = mu__slurm_find(cl);
	free(cl);
	return m;
}

/* environ without SLURM_* plus SLURM_CONF=conf; NULL on ENOMEM. */
static char **make_env(const char *conf)
{
	size_t n = 0;
	while (environ && environ[n])
		n++;
	char **e = calloc(n + 2, sizeof *e);
	size_t k = 0;
	if (!e)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "SLURM_", 6) != 0)
			e[k++] = environ[i];
	size_t l = strlen(conf) + sizeof "SLURM_CONF=";
	char *s = malloc(l);
	if (!s) {
		free(e);
		return NULL;
	}
	snprintf(s, l, "SLURM_CONF=%s", conf);
	e[k] = s;
	return e;
}

static void free_env(char **e)
{
	if (!e)
		return;
	size_t k = 0;
	while (e[k])
		k++;
	if (k)
		free(e[k - 1]); /* only SLURM_CONF, the last, is ours */
	free(e);
}

/* --- Processes ------------------------------------------------------------------ */

/* fork + exec of path with argv and envp: stdin from /dev/null, stdout
 * and stderr to out_fd and err_fd (-1: /dev/null), in its own process
 * group, killed when this process dies, with no blocked signals. */
static int spawn(const char *path, char *const argv[], char *const envp[], int out_fd,
		 int err_fd, pid_t *pid)
{
	pid_t parent = getpid();
	pid_t p = fork();
	if (p < 0)
		return MU_EIO;
	if (p == 0) {
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		setpgid(0, 0);
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
			_exit(127);
		int nul = open("/dev/null", O_RDWR);
		if (nul < 0 || dup2(nul, 0) < 0 || dup2(out_fd >= 0 ? out_fd : nul, 1) < 0 ||
		    dup2(err_fd >= 0 ? err_fd : nul, 2) < 0)
			_exit(127);
		execve(path, argv, envp);
		_exit(127);
	}
	*pid = p;
	return MU_OK;
}

/* Waits up to timeout_s for pid; kills it with SIGKILL after that.
 * Returns its exit status, or -1 when it was killed or did not exit. */
static int reap(pid_t pid, double timeout_s)
{
	double end = mu__slurm_mono() + timeout_s;
	int st;
	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
		if (r < 0 && errno != EINTR)
			return -1;
		if (mu__slurm_mono() > end) {
			kill(pid, SIGKILL);
			while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
				;
			return -1;
		}
		struct timespec ts = {0, 5 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
}

static int cloexec_pipe(int fd[2])
{
	if (pipe(fd) != 0)
		return MU_EIO;
	if (fcntl(fd[0], F_SETFD, FD_CLOEXEC) != 0 || fcntl(fd[1], F_SETFD, FD_CLOEXEC) != 0) {
		close(fd[0]);
		close(fd[1]);
		return MU_EIO;
	}
	return MU_OK;
}

/* Reads fd[0] (stdout) and ed[0] (stderr) until both close or the
 * deadline; stdout grows *buf, stderr fills err.  Returns false on
 * timeout or ENOMEM. */
static bool drain(int fd, int efd, double end, char **buf, size_t *n, char *err,
		  size_t errlen)
{
	size_t cap = 4096, en = 0;
	*buf = malloc(cap);
	*n = 0;
	if (!*buf)
		return false;
	struct pollfd p[2] = {{fd, POLLIN, 0}, {efd, POLLIN, 0}};
	while (p[0].fd >= 0 || p[1].fd >= 0) {
		int ms = (int)((end - mu__slurm_mono()) * 1000);
		if (ms <= 0)
			return false;
		int r = poll(p, 2, ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		for (int k = 0; k < 2; k++) {
			if (p[k].fd < 0 || !p[k].revents)
				continue;
			char tmp[4096];
			ssize_t got = read(p[k].fd, tmp, sizeof tmp);
			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0) {
				p[k].fd = -1;
				continue;
			}
			if (k == 1) {
				size_t room = errlen > en + 1 ? errlen - en - 1 : 0;
				size_t c = (size_t)got < room ? (size_t)got : room;
				if (err && c) {
					memcpy(err + en, tmp, c);
					en += c;
					err[en] = 0;
				}
				continue;
			}
			if (*n + (size_t)got + 1 > cap) {
				if (cap >= CMD_OUT_MAX)
					return false;
				cap = cap * 2 > *n + (size_t)got + 1 ? cap * 2 : *n + (size_t)got + 1;
				char *nb = realloc(*buf, cap);
				if (!nb)
					return false;
				*buf = nb;
			}
			memcpy(*buf + *n, tmp, (size_t)got);
			*n += (size_t)got;
		}
	}
	(*buf)[*n] = 0;
	return true;
}

int mu__slurm_cmd(const mu__slurm_cl_t *cl, int prog, char **argv, double timeout_s,
		  char **out, int *status, char *err, size_t errlen)
{
	int o[2], e[2];
	pid_t pid;
	*out = NULL;
	*status = -1;
	if (err && errlen)
		err[0] = 0;
	if (cloexec_pipe(o) != MU_OK)
		return MU_EIO;
	if (cloexec_pipe(e) != MU_OK) {
		close(o[0]);
		close(o[1]);
		return MU_EIO;
	}
	argv[0] = (char *)cl->prog[prog];
	int rc = spawn(cl->prog[prog], argv, cl->envp, o[1], e[1], &pid);
	close(o[1]);
	close(e[1]);
	if (rc != MU_OK) {
		close(o[0]);
		close(e[0]);
		return rc;
	}
	double end = mu__slurm_mono() + timeout_s;
	size_t n;
	bool ok = drain(o[0], e[0], end, out, &n, err, errlen);
	close(o[0]);
	close(e[0]);
	double left = end - mu__slurm_mono();
	*status = reap(pid, ok ? (left > 0.5 ? left : 0.5) : 0);
	if (!ok) {
		*status = -1;
		if (*out)
			(*out)[0] = 0;
	}
	if (!*out) {
		*out = calloc(1, 1);
		if (!*out)
			return MU_ENOMEM;
	}
	return MU_OK;
}

bool mu__slurm_sleep(const mu__slurm_cl_t *cl, double s)
{
	if (s <= 0)
		s = 0;
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
	siginfo_t info;
	for (;;) {
		int r = sigtimedwait(&cl->sigs, &info, &ts);
		if (r > 0)
			return true;
		if (r < 0 && errno == EINTR)
			continue; /* an unrelated signal: sleep a little less well */
		return false;
	}
}

/* The last line of a daemon's log, for messages. */
static void last_log_line(const char *path, char *buf, size_t len)
{
	buf[0] = 0;
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	char line[512];
	while (fgets(line, sizeof line, f))
		if (strstr(line, "error") || strstr(line, "fatal"))
			snprintf(buf, len, "%s", line);
	fclose(f);
	size_t l = strlen(buf);
	if (l && buf[l - 1] == '\n')
		buf[l - 1] = 0;
}

int mu__slurm_alive(mu__slurm_cl_t *cl, mu_diag_t *diag)
{
	int st;
	char log[MU__SLURM_PATH + 32], last[512];
	if (cl->ctld > 0 && waitpid(cl->ctld, &st, WNOHANG) == cl->ctld) {
		cl->ctld = 0;
		snprintf(log, sizeof log, "%s/log/slurmctld.log", cl->dir);
		last_log_line(log, last, sizeof last);
		return mu__diag(diag, MU_ESTATE, "slurm", 0, 0,
				"slurmctld stopped (exit %d)%s%s", WIFEXITED(st) ?
				WEXITSTATUS(st) : -1, last[0] ? ": " : "", last);
	}
	for (int i = 0; i < cl->nodes; i++) {
		if (cl->slurmd[i] > 0 && waitpid(cl->slurmd[i], &st, WNOHANG) == cl->slurmd[i]) {
			cl->slurmd[i] = 0;
			snprintf(log, sizeof log, "%s/log/slurmd.n%03d.log", cl->dir, i + 1);
			last_log_line(log, last, sizeof last);
			return mu__diag(diag, MU_ESTATE, "slurm", 0, 0,
					"slurmd n%03d stopped%s%s", i + 1, last[0] ? ": " : "", last);
		}
	}
	return MU_OK;
}

/* --- Set-up ---------------------------------------------------------------------- */

/* n distinct free TCP ports on 127.0.0.1 (held open until all are
 * chosen). */
static int free_ports(int *ports, int n)
{
	int *fds = malloc((size_t)n * sizeof *fds), rc = MU_OK, k;
	if (!fds)
		return MU_ENOMEM;
	for (k = 0; k < n && rc == MU_OK; k++) {
		struct sockaddr_in a = {0};
		socklen_t al = sizeof a;
		a.sin_family = AF_INET;
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		fds[k] = socket(AF_INET, SOCK_STREAM, 0);
		if (fds[k] < 0 || bind(fds[k], (struct sockaddr *)&a, sizeof a) != 0 ||
		    getsockname(fds[k], (struct sockaddr *)&a, &al) != 0)
			rc = MU_EIO;
		else
			ports[k] = ntohs(a.sin_port);
	}
	for (int i = 0; i < k; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
	return rc;
}

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return MU_EIO;
	int bad = fputs(text, f) < 0;
	bad |= fclose(f) != 0;
	return bad ? MU_EIO : MU_OK;
}

/* The directory tree: state, spool/nNNN, log, gpu0.. and the two files. */
static int make_tree(mu__slurm_cl_t *cl, const mu__slurm_conf_t *c, mu_diag_t *diag)
{
	char p[MU__SLURM_PATH + 64], text[2048];
	static const char *const subs[] = {"state", "spool", "log"};
	for (size_t i = 0; i < 3; i++) {
		snprintf(p, sizeof p, "%s/%s", cl->dir, subs[i]);
		if (mkdir(p, 0700) != 0)
			return mu__diag(diag, MU_EIO, p, 0, 0, "%s", strerror(errno));
	}
	for (int i = 0; i < c->nodes; i++) {
		snprintf(p, sizeof p, "%s/spool/n%03d", cl->dir, i + 1);
		if (mkdir(p, 0700) != 0)
			return mu__diag(diag, MU_EIO, p, 0, 0, "%s", strerror(errno));
	}
	for (int g = 0; g < c->gpus_per_node; g++) {
		snprintf(p, sizeof p, "%s/gpu%d", cl->dir, g);
		if (symlink("/dev/null", p) != 0)
			return mu__diag(diag, MU_EIO, p, 0, 0, "%s", strerror(errno));
	}
	int w = mu__slurm_conf_text(c, cl->conf_text, sizeof cl->conf_text);
	if (w < 0 || (size_t)w >= sizeof cl->conf_text)
		return mu__diag(diag, MU_ELIMIT, "slurm.conf", 0, 0, "too long");
	if (write_file(cl->conf, cl->conf_text) != MU_OK)
		return mu__diag(diag, MU_EIO, cl->conf, 0, 0, "%s", strerror(errno));
	mu__slurm_gres_text(c, text, sizeof text);
	snprintf(p, sizeof p, "%s/gres.conf", cl->dir);
	if (write_file(p, text) != MU_OK)
		return mu__diag(diag, MU_EIO, p, 0, 0, "%s", strerror(errno));
	return MU_OK;
}

/* Idle nodes, from `sinfo -h -N -o %T` (one state per node line). */
static int idle_nodes(const mu__slurm_cl_t *cl)
{
	char *argv[] = {NULL, "-h", "-N", "-o", "%T", NULL}, *out;
	int st, n = 0;
	if (mu__slurm_cmd(cl, MU__SL_SINFO, argv, 10, &out, &st, NULL, 0) != MU_OK)
		return -1;
	for (char *s = out; st == 0 && (s = strstr(s, "idle")) != NULL; s += 4)
		n++;
	free(out);
	return n;
}

/* Starts the daemons and waits for idle nodes. */
static int start_daemons(mu__slurm_cl_t *cl, mu_diag_t *diag)
{
	char log[MU__SLURM_PATH + 32];
	snprintf(log, sizeof log, "%s/log/daemons.out", cl->dir);
	int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0)
		return mu__diag(diag, MU_EIO, log, 0, 0, "%s", strerror(errno));
	char *cargv[] = {cl->prog[MU__SL_CTLD], "-D", "-c", "-f", cl->conf, NULL};
	int rc = spawn(cl->prog[MU__SL_CTLD], cargv, cl->envp, fd, fd, &cl->ctld);
	for (int i = 0; i < cl->nodes && rc == MU_OK; i++) {
		char name[16];
		snprintf(name, sizeof name, "n%03d", i + 1);
		char *dargv[] = {cl->prog[MU__SL_SLURMD], "-D", "-N", name, "-f", cl->conf, NULL};
		rc = spawn(cl->prog[MU__SL_SLURMD], dargv, cl->envp, fd, fd, &cl->slurmd[i]);
	}
	close(fd);
	if (rc != MU_OK)
		return mu__diag(diag, rc, "slurm", 0, 0, "could not start a daemon: %s",
				strerror(errno));
	double end = mu__slurm_mono() + 60;
	while (mu__slurm_mono() < end) {
		if ((rc = mu__slurm_alive(cl, diag)) != MU_OK)
			return rc;
		if (idle_nodes(cl) == cl->nodes)
			return MU_OK;
		if (mu__slurm_sleep(cl, 0.25))
			return mu__diag(diag, MU_ESTATE, "slurm", 0, 0, "interrupted");
	}
	return mu__diag(diag, MU_ESTATE, "slurm", 0, 0,
			"the %d nodes were not all idle after 60 s (logs in %s/log)",
			cl->nodes, cl->dir);
}

int mu__slurm_start(mu__slurm_cl_t *cl, const mu_slurm_opts_t *o, int nodes,
		    const char *sched_params, mu_diag_t *diag)
{
	const char *miss = mu__slurm_find(cl);
	if (miss)
		return mu__diag(diag, MU_ENOENT, "slurm", 0, 0,
				"%s not found on PATH (scripts/install-deps.sh installs Slurm)",
				miss);
	const char *parent = o->tmp_parent ? o->tmp_parent : getenv("TMPDIR");
	snprintf(cl->dir, sizeof cl->dir, "%s/muster-slurm-XXXXXX",
		 parent && *parent ? parent : "/tmp");
	if (strlen(cl->dir) > 60)
		return mu__diag(diag, MU_EINVAL, cl->dir, 0, 0,
				"too long for Slurm's socket paths; set TMPDIR shorter");
	if (!mkdtemp(cl->dir)) {
		int e = errno;
		cl->dir[0] = 0;
		return mu__diag(diag, MU_EIO, "mkdtemp", 0, 0, "%s", strerror(e));
	}
	cl->keep = o->keep;
	cl->nodes = nodes;
	snprintf(cl->conf, sizeof cl->conf, "%s/slurm.conf", cl->dir);
	cl->slurmd = calloc((size_t)nodes, sizeof *cl->slurmd);
	int *ports = calloc((size_t)nodes + 1, sizeof *ports);
	cl->envp = make_env(cl->conf);
	if (!cl->slurmd || !ports || !cl->envp) {
		free(ports);
		return MU_ENOMEM;
	}
	struct passwd *pw = getpwuid(geteuid());
	mu__slurm_conf_t c = {
		.dir = cl->dir, .user = pw ? pw->pw_name : "root", .nodes = nodes,
		.gpus_per_node = o->gpus_per_node, .cpus_per_node = 8 * o->gpus_per_node,
		.sched_params = sched_params,
	};
	int rc = free_ports(ports, nodes + 1);
	if (rc != MU_OK) {
		free(ports);
		return mu__diag(diag, rc, "slurm", 0, 0, "no free loopback port");
	}
	c.ctld_port = ports[nodes];
	c.ports = ports;
	rc = make_tree(cl, &c, diag);
	free(ports);
	return rc == MU_OK ? start_daemons(cl, diag) : rc;
}

/* --- Tear-down ------------------------------------------------------------------ */

/* Whether /proc/pid/environ holds the entry want. */
static bool env_has(const char *pid, const char *want)
{
	char path[300];
	snprintf(path, sizeof path, "/proc/%s/environ", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	bool hit = false;
	size_t wl = strlen(want), k = 0;
	int ch;
	bool at_start = true;
	while (!hit && (ch = fgetc(f)) != EOF) {
		if (ch == 0) {
			hit = k == wl;
			k = 0;
			at_start = true;
			continue;
		}
		if (at_start && k < wl && (char)ch == want[k])
			k++;
		else {
			at_start = false;
			k = wl + 1;
		}
	}
	fclose(f);
	return hit;
}

/* SIGKILL to every process (but this one) whose environment has this
 * cluster's SLURM_CONF: what the jobs left behind.  Returns the count. */
static int sweep(const mu__slurm_cl_t *cl)
{
	char want[MU__SLURM_PATH + 64];
	snprintf(want, sizeof want, "SLURM_CONF=%s", cl->conf);
	DIR *d = opendir("/proc");
	int n = 0;
	if (!d)
		return 0;
	struct dirent *de;
	pid_t self = getpid();
	while ((de = readdir(d)) != NULL) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 1 || pid == self)
			continue;
		if (env_has(de->d_name, want) && kill((pid_t)pid, SIGKILL) == 0)
			n++;
	}
	closedir(d);
	return n;
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	if (flag == FTW_DP)
		return rmdir(path) == 0 ? 0 : -1;
	return unlink(path) == 0 ? 0 : -1;
}

/* SIGTERM to pid, then up to `wait` seconds, then SIGKILL; reaps it. */
static void stop_pid(pid_t *pid)
{
	if (*pid <= 0)
		return;
	kill(*pid, SIGTERM);
	reap(*pid, 5);
	*pid = 0;
}

void mu__slurm_stop(mu__slurm_cl_t *cl)
{
	if (cl->ctld > 0) {
		char *argv[] = {NULL, "--partition=gpu", NULL}, *out;
		int st;
		if (mu__slurm_cmd(cl, MU__SL_SCANCEL, argv, 10, &out, &st, NULL, 0) == MU_OK)
			free(out);
	}
	for (int i = 0; cl->slurmd && i < cl->nodes; i++)
		if (cl->slurmd[i] > 0)
			kill(cl->slurmd[i], SIGTERM);
	for (int i = 0; cl->slurmd && i < cl->nodes; i++)
		stop_pid(&cl->slurmd[i]);
	stop_pid(&cl->ctld);
	if (cl->conf[0]) {
		sweep(cl);
		struct timespec ts = {0, 100 * 1000 * 1000};
		nanosleep(&ts, NULL);
		sweep(cl); /* what forked while the first sweep ran */
	}
	if (cl->dir[0] && !cl->keep)
		nftw(cl->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(cl->slurmd);
	cl->slurmd = NULL;
	free_env(cl->envp);
	cl->envp = NULL;
}

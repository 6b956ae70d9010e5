/*
 * daemon.c - what the CLI's long-running commands (`muster up`, `muster
 * scheduler`, `muster dispatch` and its agent) share: the flag that SIGINT
 * and SIGTERM raise, and an identity for leader election.
 *
 * A signal handler can only set a flag of static storage, so this file holds
 * the one such flag of the program (a process runs one daemon).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

static volatile sig_atomic_t stop_flag;

static void on_stop_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

/* Installs the SIGINT/SIGTERM handlers (SIGPIPE ignored) and returns the
 * flag they raise; the caller polls it and owns nothing.  O(1). */
volatile sig_atomic_t *mu__cli_stop_on_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	return &stop_flag;
}

/* HOST-PID (or PREFIX-PID when the host name is unknown) into buf: two
 * replicas never share a lease identity.  Returns buf. */
const char *mu__cli_daemon_id(const char *prefix, char *buf, size_t len)
{
	char host[256];
	snprintf(host, sizeof host, "%s", prefix);
	gethostname(host, sizeof host - 1);
	host[sizeof host - 1] = 0;
	snprintf(buf, len, "%s-%ld", host, (long)getpid());
	return buf;
}

/*
 * fsio.c - bounded file and directory reading for the node agent.
 *
 * A sysfs tree may be a recording made elsewhere, so nothing in it is
 * trusted: files are opened non-blocking and must be regular, reads stop at
 * the caller's capacity, and directory listings stop at MU_TOPO_MAX_DIRENT
 * entries.  Listings are sorted so that output never depends on readdir()
 * order.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/sysfs.h"

int mu__path(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len ? MU_ELIMIT : MU_OK;
}

/* Reads fd to EOF into buf[0..cap-1); the caller closes fd. */
static int read_all(int fd, char *buf, size_t cap, size_t *len)
{
	size_t n = 0;
	for (;;) {
		if (n == cap - 1) {
			char extra;
			ssize_t r = read(fd, &extra, 1);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				return MU_EIO;
			if (r > 0)
				return MU_ELIMIT;
			break;
		}
		ssize_t r = read(fd, buf + n, cap - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return MU_EIO;
		if (r == 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	*len = n;
	return MU_OK;
}

int mu__read_file(const char *path, char *buf, size_t cap, size_t *len)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR ? MU_ENOENT : MU_EIO;
	struct stat st;
	int rc;
	if (fstat(fd, &st) != 0)
		rc = MU_EIO;
	else if (!S_ISREG(st.st_mode))
		rc = MU_EINVAL;
	else
		rc = read_all(fd, buf, cap, len);
	int saved = errno;
	close(fd);
	errno = saved;
	return rc;
}

void mu__names_release(mu__names_t *l)
{
	for (int32_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof *l);
}

/* Appends a copy of name. */
static int names_push(mu__names_t *l, const char *name)
{
	if (l->n == MU_TOPO_MAX_DIRENT)
		return MU_ELIMIT;
	if (l->n == l->cap) {
		int32_t ncap = l->cap ? l->cap * 2 : 16;
		char **nv = realloc(l->v, (size_t)ncap * sizeof *nv);
		if (!nv)
			return MU_ENOMEM;
		l->v = nv;
		l->cap = ncap;
	}
	size_t n = strlen(name);
	char *c = malloc(n + 1);
	if (!c)
		return MU_ENOMEM;
	memcpy(c, name, n + 1);
	l->v[l->n++] = c;
	return MU_OK;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int mu__list_dir(const char *path, mu__names_t *l)
{
	DIR *d = opendir(path);
	if (!d)
		return errno == ENOENT || errno == ENOTDIR ? MU_ENOENT : MU_EIO;
	int rc = MU_OK;
	for (;;) {
		errno = 0;
		struct dirent *de = readdir(d);
		if (!de) {
			if (errno)
				rc = MU_EIO;
			break;
		}
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		rc = names_push(l, de->d_name);
		if (rc != MU_OK)
			break;
	}
	closedir(d);
	if (rc != MU_OK) {
		mu__names_release(l);
		return rc;
	}
	if (l->n > 1)
		qsort(l->v, (size_t)l->n, sizeof *l->v, name_cmp);
	return MU_OK;
}

void mu__topo_note(mu_topo_t *t, const char *fmt, ...)
{
	size_t n = strlen(t->notes);
	char one[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(one, sizeof one, fmt, ap);
	va_end(ap);
	const char *sep = n ? "; " : "";
	if (n + strlen(sep) + strlen(one) < sizeof t->notes)
		snprintf(t->notes + n, sizeof t->notes - n, "%s%s", sep, one);
}

int mu__disc_err(mu__disc_t *d, int err, const char *path, const char *fmt,
		 ...)
{
	if (!d->diag)
		return err;
	int n = snprintf(d->diag->msg, sizeof d->diag->msg, "%s: ", path);
	if (n < 0 || (size_t)n >= sizeof d->diag->msg)
		n = 0;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(d->diag->msg + n, sizeof d->diag->msg - (size_t)n, fmt, ap);
	va_end(ap);
	return err;
}

int mu__disc_read(mu__disc_t *d, const char *path, bool optional)
{
	int rc = mu__read_file(path, d->buf, MU_TOPO_MAX_FILE, &d->len);
	if (rc == MU_OK || (rc == MU_ENOENT && optional))
		return rc;
	switch (rc) {
	case MU_ENOENT:
		return mu__disc_err(d, rc, path, "missing");
	case MU_EINVAL:
		return mu__disc_err(d, rc, path, "not a regular file");
	case MU_ELIMIT:
		return mu__disc_err(d, rc, path, "larger than %d bytes",
				    MU_TOPO_MAX_FILE - 1);
	default:
		return mu__disc_err(d, rc, path, "cannot read: %s",
				    strerror(errno));
	}
}

int mu__disc_bad(mu__disc_t *d, int err, const char *path, const char *what)
{
	char q[48];
	size_t k = 0, i = 0, n = d->len;
	if (err == MU_ENOMEM)
		return mu__disc_err(d, err, path, "out of memory");
	while (n && d->buf[n - 1] == '\n')
		n--;
	for (; i < n && k + 5 < sizeof q; i++) {
		unsigned char c = (unsigned char)d->buf[i];
		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
			q[k++] = (char)c;
		else if (c == '\n')
			k += (size_t)snprintf(q + k, sizeof q - k, "\\n");
		else
			k += (size_t)snprintf(q + k, sizeof q - k, "\\x%02x", c);
	}
	q[k] = '\0';
	return mu__disc_err(d, err, path, "%s %s: \"%s%s\"",
			    err == MU_ERANGE ? "out-of-range" : "not a valid",
			    what, q, i < n ? "..." : "");
}

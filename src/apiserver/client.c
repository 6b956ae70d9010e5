/*
 * client.c - a minimal blocking HTTP/1.1 client for `muster node` and the
 * benchmark: one request per connection (Connection: close), plain HTTP to
 * an IPv4 address, the whole answer read into memory and de-chunked.
 * Bounded by a timeout on every socket operation and a 256 MiB answer cap.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "apiserver/apiserver_int.h"

#define MAX_ANSWER ((size_t)256 << 20)

int mu_apiclient_parse_url(const char *url, char *host, size_t hostlen, int *port)
{
	if (strncmp(url, "http://", 7))
		return MU_EINVAL;
	const char *h = url + 7, *colon = strchr(h, ':');
	if (!colon || (size_t)(colon - h) >= hostlen)
		return MU_EINVAL;
	memcpy(host, h, (size_t)(colon - h));
	host[colon - h] = '\0';
	if (!strcmp(host, "localhost"))
		snprintf(host, hostlen, "127.0.0.1");
	char *end;
	long p = strtol(colon + 1, &end, 10);
	if (end == colon + 1 || (*end && strcmp(end, "/")) || p <= 0 || p > 65535)
		return MU_EINVAL;
	struct in_addr a;
	if (inet_pton(AF_INET, host, &a) != 1)
		return MU_EINVAL;
	*port = (int)p;
	return MU_OK;
}

static int dial(const char *host, int port, int timeout_ms)
{
	struct sockaddr_in sa;
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
		return -1;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return MU_EIO;
		p += w;
		n -= (size_t)w;
	}
	return MU_OK;
}

/* Decodes a chunked body in place; returns its length or -1. */
static long dechunk(char *b, size_t n)
{
	size_t in = 0, out = 0;
	for (;;) {
		char *end;
		if (in >= n)
			return -1;
		unsigned long sz = strtoul(b + in, &end, 16);
		char *nl = memchr(b + in, '\n', n - in);
		if (!nl || end == b + in || sz > n)
			return -1;
		in = (size_t)(nl - b) + 1;
		if (sz == 0)
			return (long)out;
		if (in + sz > n)
			return -1;
		memmove(b + out, b + in, sz);
		out += sz;
		in += sz;
		if (in < n && b[in] == '\r')
			in++;
		if (in < n && b[in] == '\n')
			in++;
	}
}

int mu_apiclient_do(const char *host, int port, const char *method, const char *path, const char *ctype,
		    const char *body, const char *token, int timeout_ms, mu_apiclient_resp_t *out)
{
	memset(out, 0, sizeof *out);
	int fd = dial(host, port, timeout_ms);
	if (fd < 0)
		return MU_EIO;
	char head[2048];
	size_t blen = body ? strlen(body) : 0;
	int hl = snprintf(head, sizeof head,
			  "%s %s HTTP/1.1\r\nHost: %s:%d\r\nUser-Agent: muster\r\nAccept: application/json\r\n"
			  "Connection: close\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s%s%s\r\n",
			  method, path, host, port, ctype ? ctype : "application/json", blen,
			  token ? "Authorization: Bearer " : "", token ? token : "", token ? "\r\n" : "");
	if (hl < 0 || (size_t)hl >= sizeof head || send_all(fd, head, (size_t)hl) != MU_OK ||
	    (blen && send_all(fd, body, blen) != MU_OK)) {
		close(fd);
		return MU_EIO;
	}
	size_t len = 0, cap = 65536;
	char *buf = malloc(cap + 1);
	int rc = buf ? MU_OK : MU_ENOMEM;
	while (rc == MU_OK) {
		if (len == cap) {
			if (cap >= MAX_ANSWER) {
				rc = MU_ELIMIT;
				break;
			}
			char *nb = realloc(buf, cap * 2 + 1);
			if (!nb) {
				rc = MU_ENOMEM;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		ssize_t r = recv(fd, buf + len, cap - len, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			rc = MU_EIO;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	mu__head_t h;
	if (rc == MU_OK && mu__parse_head(buf, len, &h) != MU_OK)
		rc = MU_EPARSE;
	if (rc != MU_OK) {
		free(buf);
		return rc;
	}
	out->status = atoi(h.start[1]);
	size_t n = len - h.head_len;
	memmove(buf, buf + h.head_len, n);
	const char *te = mu__head_get(&h, "Transfer-Encoding");
	if (te && strstr(te, "chunked")) {
		long d = dechunk(buf, n);
		if (d < 0) {
			free(buf);
			return MU_EPARSE;
		}
		n = (size_t)d;
	}
	buf[n] = '\0';
	out->body = buf;
	out->len = n;
	return MU_OK;
}

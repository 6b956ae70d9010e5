/*
 * mhd.c - the UI over libmicrohttpd: query arguments and the
 * Authorization header from the connection, the answer from mu_web_get(),
 * and Server-Sent Events as a callback response that blocks (the server
 * must run a thread per connection) in mu_web_stream_next() for at most
 * 15 s at a time, sending a comment line when nothing changed so proxies
 * and the connection timeout see traffic.
 */
#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>

#include "web/web_int.h"

typedef struct stream {
	mu_web_t *w;
	uint64_t seq;
	char buf[1024];
	size_t len, at;
} stream_t;

static const char *mhd_arg(void *ctx, const char *key)
{
	return MHD_lookup_connection_value(ctx, MHD_GET_ARGUMENT_KIND, key);
}

static ssize_t stream_read(void *cls, uint64_t pos, char *out, size_t max)
{
	(void)pos;
	stream_t *s = cls;
	if (s->at == s->len) {
		int n = mu_web_stream_next(s->w, &s->seq, 15000, s->buf, sizeof s->buf);
		if (n < 0)
			return MHD_CONTENT_READER_END_OF_STREAM;
		s->len = (size_t)n;
		s->at = 0;
	}
	size_t n = s->len - s->at < max ? s->len - s->at : max;
	memcpy(out, s->buf + s->at, n);
	s->at += n;
	return (ssize_t)n;
}

int mu_web_mhd_answer(mu_web_t *w, struct MHD_Connection *c, const char *url)
{
	const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
	mu_web_resp_t r;
	mu_web_get(w, url, mhd_arg, c, auth, &r);
	struct MHD_Response *resp;
	if (r.stream) {
		stream_t *s = calloc(1, sizeof *s);
		if (!s)
			return MHD_NO;
		s->w = w;
		resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, sizeof s->buf, stream_read, s,
							 free);
		if (!resp) {
			free(s);
			return MHD_NO;
		}
		MHD_add_response_header(resp, "Cache-Control", "no-store");
	} else {
		resp = MHD_create_response_from_buffer(r.len, r.body ? r.body : (char *)"",
						       r.is_static || !r.body ? MHD_RESPMEM_PERSISTENT :
						       MHD_RESPMEM_MUST_FREE);
		if (!resp) {
			mu_web_resp_release(&r);
			return MHD_NO;
		}
		MHD_add_response_header(resp, "Cache-Control", r.is_static ? "max-age=60" : "no-store");
	}
	MHD_add_response_header(resp, "Content-Type", r.ctype ? r.ctype : "text/plain");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, "Content-Security-Policy",
				"default-src 'self'; img-src 'self' data:; style-src 'self'; "
				"script-src 'self'; connect-src 'self'; frame-ancestors 'none'");
	int ret = MHD_queue_response(c, (unsigned)r.status, resp);
	MHD_destroy_response(resp);
	return ret;
}

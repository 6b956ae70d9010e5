/*
 * pubclient.c - the plain API client of kube.h (mu_kube_client_t): one
 * libcurl connection (client.c) with its own credentials, for callers
 * outside the scheduler daemon such as the hub daemon (src/dispatch), which
 * talks to a hub and to every worker cluster, each with its own
 * kubeconfig.
 */
#include <stdlib.h>
#include <string.h>

#include "kube/kube_int.h"

struct mu_kube_client {
	mu__kauth_t auth;
	mu__kc_t *kc;
};

int mu_kube_client_new(const mu_kube_config_t *cfg, mu_kube_client_t **out)
{
	mu_kube_client_t *c = calloc(1, sizeof *c);
	if (!c)
		return MU_ENOMEM;
	if (mu__kauth_init(&c->auth, cfg)) {
		free(c);
		return MU_ENOMEM;
	}
	if (mu__kc_new(&c->auth, &c->kc)) {
		mu__kauth_release(&c->auth);
		free(c);
		return MU_ENOMEM;
	}
	*out = c;
	return MU_OK;
}

void mu_kube_client_free(mu_kube_client_t *c)
{
	if (!c)
		return;
	mu__kc_free(c->kc);
	mu__kauth_release(&c->auth);
	free(c);
}

int mu_kube_client_do(mu_kube_client_t *c, const char *method, const char *path,
		      const char *ctype, const char *body, long timeout_ms,
		      long *status, char **answer)
{
	mu__kresp_t r = {0};
	int rc = mu__kc_do(c->kc, method, path, ctype, body, timeout_ms, &r);
	*status = r.status;
	if (answer) {
		*answer = r.body;
		r.body = NULL;
		if (!*answer)
			*answer = calloc(1, 1);
	}
	mu__kresp_release(&r);
	return rc;
}

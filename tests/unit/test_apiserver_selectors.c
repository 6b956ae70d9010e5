/*
 * test_apiserver_selectors.c - label and field selectors (parsing, errors,
 * matching against an object version), and the socket-free request
 * parsers: targets into routes and query options, heads, content types.
 */
#include "apiserver/apiserver_int.h"
#include "check.h"

static mu__obj_t *pod(void)
{
	json_t *j = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s, s:s}}, s:{s:s, s:s}, s:{s:s}}",
			      "apiVersion", "v1", "kind", "Pod", "metadata", "name", "p1", "namespace", "ns1",
			      "labels", "app", "web", "tier", "front", "gen", "7", "spec", "nodeName", "n1",
			      "schedulerName", "muster", "status", "phase", "Running");
	int n;
	mu__obj_t *o = mu__obj_new(MU__RT_PODS, &mu__rtypes(&n)[MU__RT_PODS], j, 5);
	json_decref(j);
	return o;
}

/* Parses text as a label (or field) selector and matches it against o. */
static int match(const char *text, bool fields, const mu__obj_t *o)
{
	mu__sel_t *s;
	char err[128];
	if (mu__sel_parse(text, fields, &s, err, sizeof err) != MU_OK)
		return -1;
	bool m = fields ? mu__sel_match_fields(s, o) : mu__sel_match_labels(s, o);
	mu__sel_free(s);
	return m;
}

static void test_labels(mu_t_t *t)
{
	mu__obj_t *o = pod();
	CHECK_EQ_INT(t, match("", false, o), 1);
	CHECK_EQ_INT(t, match("app=web", false, o), 1);
	CHECK_EQ_INT(t, match("app==web", false, o), 1);
	CHECK_EQ_INT(t, match("app=api", false, o), 0);
	CHECK_EQ_INT(t, match("app!=api", false, o), 1);
	CHECK_EQ_INT(t, match("app!=web", false, o), 0);
	CHECK_EQ_INT(t, match("missing!=x", false, o), 1);
	CHECK_EQ_INT(t, match("app in (api, web)", false, o), 1);
	CHECK_EQ_INT(t, match("app notin (api,web)", false, o), 0);
	CHECK_EQ_INT(t, match("tier", false, o), 1);
	CHECK_EQ_INT(t, match("!tier", false, o), 0);
	CHECK_EQ_INT(t, match("!nope", false, o), 1);
	CHECK_EQ_INT(t, match("gen>5,gen<8", false, o), 1);
	CHECK_EQ_INT(t, match("gen>7", false, o), 0);
	CHECK_EQ_INT(t, match(" app = web , tier=front ", false, o), 1);
	CHECK_EQ_INT(t, match("app=web,tier=back", false, o), 0);
	/* errors */
	CHECK_EQ_INT(t, match("app in web", false, o), -1);
	CHECK_EQ_INT(t, match("app in (web", false, o), -1);
	CHECK_EQ_INT(t, match("app=web,", false, o), -1);
	CHECK_EQ_INT(t, match("=x", false, o), -1);
	CHECK_EQ_INT(t, match("gen>x", false, o), -1);
	CHECK_EQ_INT(t, match("a b", false, o), -1);
	mu__obj_unref(o);
}

static void test_fields(mu_t_t *t)
{
	mu__obj_t *o = pod();
	CHECK_EQ_INT(t, match("spec.nodeName=n1", true, o), 1);
	CHECK_EQ_INT(t, match("spec.nodeName==n1", true, o), 1);
	CHECK_EQ_INT(t, match("spec.nodeName!=n1", true, o), 0);
	CHECK_EQ_INT(t, match("spec.nodeName=", true, o), 0);
	CHECK_EQ_INT(t, match("status.phase!=Succeeded,status.phase!=Failed", true, o), 1);
	CHECK_EQ_INT(t, match("metadata.name=p1,metadata.namespace=ns1", true, o), 1);
	CHECK_EQ_INT(t, match("spec.schedulerName=muster", true, o), 1);
	CHECK_EQ_INT(t, match("spec.restartPolicy=", true, o), 1); /* absent = "" */
	CHECK_EQ_INT(t, match("spec.nodeName", true, o), -1);
	CHECK_EQ_INT(t, match("metadata.name=a\\,b", true, o), 0);
	mu__sel_t *s;
	char err[128];
	int n;
	CHECK_EQ_INT(t, mu__sel_parse("spec.bogus=1", true, &s, err, sizeof err), MU_OK);
	CHECK_EQ_INT(t, mu__sel_check_fields(s, &mu__rtypes(&n)[MU__RT_PODS], err, sizeof err), MU_EINVAL);
	CHECK(t, strstr(err, "spec.bogus") != NULL);
	mu__sel_free(s);
	CHECK_EQ_INT(t, mu__sel_parse("involvedObject.name=p1", true, &s, err, sizeof err), MU_OK);
	CHECK_EQ_INT(t, mu__sel_check_fields(s, &mu__rtypes(&n)[MU__RT_EVENTS], err, sizeof err), MU_OK);
	mu__sel_free(s);
	mu__obj_unref(o);
}

static void test_targets(mu_t_t *t)
{
	mu__route_t r;
	mu__query_t q;
	char err[128];
	CHECK_EQ_INT(t, mu__parse_target("/api/v1/namespaces/default/pods?limit=500&labelSelector=app%3Dweb", &r, &q, err, sizeof err), MU_OK);
	CHECK_EQ_INT(t, r.kind, MU__R_RESOURCE);
	CHECK(t, r.core);
	CHECK_STR(t, r.ns, "default");
	CHECK_STR(t, r.plural, "pods");
	CHECK_EQ_INT(t, q.limit, 500);
	CHECK_STR(t, q.label_sel, "app=web");
	CHECK_EQ_INT(t, mu__parse_target("/apis/batch/v1/namespaces/x/jobs/j1/status?dryRun=All", &r, &q, err, sizeof err), MU_OK);
	CHECK_STR(t, r.group, "batch");
	CHECK_STR(t, r.name, "j1");
	CHECK_STR(t, r.sub, "status");
	CHECK(t, q.dry_run);
	CHECK_EQ_INT(t, mu__parse_target("/api/v1/namespaces/ns1", &r, &q, err, sizeof err), MU_OK);
	CHECK_STR(t, r.plural, "namespaces");
	CHECK_STR(t, r.name, "ns1");
	CHECK_EQ_INT(t, mu__parse_target("/api/v1/watch/namespaces/a/pods?resourceVersion=7&allowWatchBookmarks=true", &r, &q, err, sizeof err), MU_OK);
	CHECK(t, q.watch && q.bookmarks && q.has_rv);
	CHECK_STR(t, q.rv, "7");
	CHECK_EQ_INT(t, mu__parse_target("/version", &r, &q, err, sizeof err), MU_OK);
	CHECK_EQ_INT(t, r.kind, MU__R_VERSION);
	CHECK_EQ_INT(t, mu__parse_target("/apis", &r, &q, err, sizeof err), MU_OK);
	CHECK_EQ_INT(t, r.kind, MU__R_APIS);
	CHECK_EQ_INT(t, mu__parse_target("/openapi/v2?timeout=32s", &r, &q, err, sizeof err), MU_OK);
	CHECK_EQ_INT(t, r.kind, MU__R_OPENAPI_V2);
	CHECK_EQ_INT(t, mu__parse_target("/api/v1/pods?fieldSelector=spec.nodeName%3D%2Cstatus.phase%21%3DFailed", &r, &q, err, sizeof err), MU_OK);
	CHECK_STR(t, q.field_sel, "spec.nodeName=,status.phase!=Failed");
	/* errors */
	CHECK_EQ_INT(t, mu__parse_target("api", &r, &q, err, sizeof err), MU_EPARSE);
	CHECK_EQ_INT(t, mu__parse_target("/api/v1/pods/%zz", &r, &q, err, sizeof err), MU_EPARSE);
	CHECK_EQ_INT(t, mu__parse_target("/api/v1/pods/a%00b", &r, &q, err, sizeof err), MU_EPARSE);
	CHECK_EQ_INT(t, mu__parse_target("/api/v1/pods/a%2Fb", &r, &q, err, sizeof err), MU_EPARSE);
	CHECK_EQ_INT(t, mu__parse_target("/api/v1/pods?limit=-1", &r, &q, err, sizeof err), MU_EPARSE);
	CHECK_EQ_INT(t, mu__parse_target("/api/v1/pods?limit=%", &r, &q, err, sizeof err), MU_EPARSE);
	CHECK_EQ_INT(t, mu__parse_target("/api/v1/a/b/c/d/e", &r, &q, err, sizeof err), MU_EPARSE);
}

static void test_heads(mu_t_t *t)
{
	mu__head_t h;
	const char *req = "GET /api/v1/pods HTTP/1.1\r\nHost: x\r\nAccept:  application/json \r\n\r\nbody";
	CHECK_EQ_INT(t, mu__parse_head(req, strlen(req), &h), MU_OK);
	CHECK_STR(t, h.start[0], "GET");
	CHECK_STR(t, h.start[1], "/api/v1/pods");
	CHECK_STR(t, mu__head_get(&h, "accept"), "application/json");
	CHECK_EQ_INT(t, h.head_len, strlen(req) - 4);
	const char *resp = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
	CHECK_EQ_INT(t, mu__parse_head(resp, strlen(resp), &h), MU_OK);
	CHECK_STR(t, h.start[2], "Not Found");
	CHECK_EQ_INT(t, mu__parse_head("GET / HTTP/1.1\r\nHost: x\r\n", 25, &h), 1);
	CHECK_EQ_INT(t, mu__parse_head("GET / HTTP/1.1\r\nbad header\r\n\r\n", 30, &h), MU_EPARSE);
	CHECK_EQ_INT(t, mu__content_type("application/strategic-merge-patch+json; charset=utf-8"), MU__CT_STRATEGIC);
	CHECK_EQ_INT(t, mu__content_type("application/merge-patch+json"), MU__CT_MERGE);
	CHECK_EQ_INT(t, mu__content_type(NULL), MU__CT_JSON);
	CHECK_EQ_INT(t, mu__content_type("application/vnd.kubernetes.protobuf"), MU__CT_PROTOBUF);
	CHECK_EQ_INT(t, mu__content_type("application/cbor"), MU__CT_OTHER);
	CHECK(t, mu__accept_table("application/json;as=Table;v=v1;g=meta.k8s.io,application/json"));
	CHECK(t, !mu__accept_table("application/json"));
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_labels);
	MU_RUN(&t, test_fields);
	MU_RUN(&t, test_targets);
	MU_RUN(&t, test_heads);
	return mu_t_done(&t);
}

/*
 * test_apiserver_crd.c - CustomResourceDefinitions: the CRD check, the
 * registry of custom types, and pruning, defaulting and validation of
 * custom objects against a structural schema, with kube-apiserver's
 * messages.
 */
#include <stdlib.h>

#include "apiserver/crd.h"
#include "check.h"

static const char *const crd_text =
	"{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
	"\"metadata\":{\"name\":\"widgets.example.com\"},\"spec\":{\"group\":\"example.com\",\"scope\":\"Namespaced\","
	"\"names\":{\"plural\":\"widgets\",\"kind\":\"Widget\",\"shortNames\":[\"wd\"],\"categories\":[\"all\"]},"
	"\"versions\":[{\"name\":\"v1\",\"served\":true,\"storage\":true,\"subresources\":{\"status\":{}},"
	"\"additionalPrinterColumns\":[{\"name\":\"Size\",\"type\":\"integer\",\"jsonPath\":\".spec.size\"}],"
	"\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\",\"properties\":{"
	"\"spec\":{\"type\":\"object\",\"required\":[\"color\"],\"properties\":{"
	"\"size\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":10,\"default\":3},"
	"\"color\":{\"type\":\"string\",\"enum\":[\"red\",\"blue\"]},"
	"\"tag\":{\"type\":\"string\",\"pattern\":\"^[a-z]+$\",\"maxLength\":5},"
	"\"port\":{\"x-kubernetes-int-or-string\":true},"
	"\"items\":{\"type\":\"array\",\"x-kubernetes-list-type\":\"map\",\"x-kubernetes-list-map-keys\":[\"name\"],"
	"\"items\":{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}}}},"
	"\"extra\":{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true},"
	"\"opt\":{\"type\":\"string\",\"nullable\":true}}},"
	"\"status\":{\"type\":\"object\",\"properties\":{\"phase\":{\"type\":\"string\"}}}}}}},"
	"{\"name\":\"v1beta1\",\"served\":true,\"storage\":false,\"schema\":{\"openAPIV3Schema\":"
	"{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true}}}]}}";

/* Registers the test CRD in r; returns its type. */
static const mu__crdtype_t *widgets(mu_t_t *t, mu__types_t *r)
{
	json_t *crd = json_loads(crd_text, 0, NULL);
	mu__verr_t e = {0};
	mu__validate_crd(crd, NULL, &e);
	CHECK_EQ_INT(t, e.n, 0);
	char err[200];
	int rt = mu__types_put(r, crd, err, sizeof err);
	CHECK(t, rt >= MU__RT_COUNT);
	json_decref(crd);
	return mu__crdtype(mu__type(r, rt));
}

static void test_registry(mu_t_t *t)
{
	mu__types_t *r;
	CHECK_EQ_INT(t, mu__types_new(&r), MU_OK);
	const mu__crdtype_t *c = widgets(t, r);
	CHECK(t, c != NULL);
	CHECK_STR(t, c->t.kind, "Widget");
	CHECK_STR(t, c->t.singular, "widget");
	CHECK(t, c->t.namespaced && (c->t.subs & MU__SUB_STATUS));
	CHECK_EQ_INT(t, c->t.ncols, 3); /* Name, Size, Age */
	int rt = mu__type_find(r, "example.com", "v1beta1", "widgets");
	CHECK(t, rt >= MU__RT_COUNT && mu__type_find(r, "example.com", "v2", "widgets") < 0);
	CHECK_EQ_INT(t, mu__type_by_res(r, "example.com/widgets"), rt);
	CHECK_EQ_INT(t, mu__type_find(r, "", "v1", "pods"), MU__RT_PODS);
	/* the same spec again keeps the type; a CRD for muster's own kind is the built-in */
	json_t *crd = json_loads(crd_text, 0, NULL);
	char err[200];
	CHECK_EQ_INT(t, mu__types_put(r, crd, err, sizeof err), rt);
	CHECK(t, mu__crdtype(mu__type(r, rt)) == c);
	json_object_set_new(json_object_get(crd, "spec"), "group", json_string("muster.io"));
	json_object_set_new(json_object_get(json_object_get(crd, "spec"), "names"), "plural", json_string("queues"));
	CHECK_EQ_INT(t, mu__types_put(r, crd, err, sizeof err), MU__RT_QUEUES);
	json_decref(crd);
	mu__types_unserve(r, rt);
	CHECK(t, !mu__type_served(r, rt));
	CHECK_EQ_INT(t, mu__type_find(r, "example.com", "v1", "widgets"), -1);
	mu__types_free(r);
}

/* Prunes and validates text as a v1 Widget; returns the causes, the
 * pruned object in *out (caller owns) and the unknown fields in u. */
static int widget(const mu__crdtype_t *c, const char *text, json_t **out, mu__unknown_t *u, mu__verr_t *e)
{
	json_t *o = json_loads(text, 0, NULL);
	memset(e, 0, sizeof *e);
	mu__crd_prune(c, 0, o, true, u);
	mu__crd_validate(c, 0, o, NULL, e);
	*out = o;
	return e->n;
}

static void test_objects(mu_t_t *t)
{
	mu__types_t *r;
	mu__types_new(&r);
	const mu__crdtype_t *c = widgets(t, r);
	json_t *o;
	mu__unknown_t u;
	mu__verr_t e;
	CHECK_EQ_INT(t, widget(c, "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":{\"name\":\"w\","
			       "\"labels\":{\"a\":\"b\"}},\"spec\":{\"color\":\"red\",\"bogus\":1,\"port\":\"http\","
			       "\"extra\":{\"any\":{\"thing\":1}},\"opt\":null}}", &o, &u, &e), 0);
	CHECK_EQ_INT(t, u.n, 1);
	CHECK_STR(t, u.text, "unknown field \"spec.bogus\"");
	CHECK_EQ_INT(t, (int)json_integer_value(mu__jget(o, "spec.size")), 3); /* defaulted */
	CHECK(t, mu__jget(o, "spec.extra.any.thing") != NULL);                  /* preserved */
	CHECK(t, json_is_null(mu__jget(o, "spec.opt")));                          /* nullable */
	CHECK(t, mu__jget(o, "metadata.labels.a") != NULL);
	json_t *cells = json_array();
	mu__crd_row(c, o, 0, cells);
	CHECK_EQ_INT(t, (int)json_integer_value(json_array_get(cells, 1)), 3);
	json_decref(cells);
	json_decref(o);

	CHECK_EQ_INT(t, widget(c, "{\"spec\":{\"size\":\"big\",\"color\":\"green\",\"tag\":\"ABCDEFG\","
			       "\"port\":1.5,\"items\":[{\"name\":\"a\"},{\"name\":\"a\"}]}}", &o, &u, &e), 6);
	CHECK_STR(t, e.c[0].field, "spec.size");
	CHECK_STR(t, e.c[0].msg, "Invalid value: \"string\": spec.size in body must be of type integer: \"big\"");
	CHECK_STR(t, e.c[1].msg, "Unsupported value: \"green\": supported values: \"red\", \"blue\"");
	CHECK_STR(t, e.c[2].msg, "Too long: may not be longer than 5");
	CHECK_STR(t, e.c[3].msg, "Invalid value: \"ABCDEFG\": spec.tag in body should match '^[a-z]+$'");
	CHECK_STR(t, e.c[4].field, "spec.port");
	CHECK_STR(t, e.c[5].field, "spec.items[1]");
	CHECK_STR(t, e.c[5].reason, "FieldValueDuplicate");
	json_decref(o);

	CHECK_EQ_INT(t, widget(c, "{\"spec\":{\"size\":11,\"color\":null}}", &o, &u, &e), 2);
	CHECK_STR(t, e.c[0].field, "spec.color"); /* the null was pruned: then it is missing */
	CHECK_STR(t, e.c[0].msg, "Required value");
	CHECK_STR(t, e.c[1].msg, "Invalid value: 11: spec.size in body should be less than or equal to 10");
	json_decref(o);
	mu__types_free(r);
}

static void test_crd_checks(mu_t_t *t)
{
	json_t *crd = json_loads(crd_text, 0, NULL);
	json_t *spec = json_object_get(crd, "spec");
	mu__verr_t e = {0};
	json_object_set_new(spec, "group", json_string("nodots"));
	json_object_set_new(spec, "scope", json_string("Everywhere"));
	json_object_set_new(json_array_get(json_object_get(spec, "versions"), 1), "storage", json_true());
	json_object_set_new(mu__jget(crd, "spec.versions"), "x", json_null());
	json_t *props = mu__jget(json_array_get(json_object_get(spec, "versions"), 0), "schema.openAPIV3Schema.properties");
	json_object_set_new(props, "untyped", json_pack("{s:{}}", "properties"));
	mu__validate_crd(crd, NULL, &e);
	CHECK_EQ_INT(t, e.n, 5);
	CHECK_STR(t, e.c[0].field, "spec.group");
	CHECK_STR(t, e.c[0].msg, "Invalid value: \"nodots\": should be a domain with at least one dot");
	CHECK_STR(t, e.c[1].field, "metadata.name");
	CHECK_STR(t, e.c[2].field, "spec.scope");
	CHECK_STR(t, e.c[3].field, "spec.versions[0].schema.openAPIV3Schema.properties[untyped].type");
	CHECK_STR(t, e.c[4].msg, "Invalid value: must have exactly one version marked as storage version");
	json_decref(crd);
	/* the status the apiextensions controllers write */
	crd = json_loads(crd_text, 0, NULL);
	mu__crd_status(crd, NULL);
	CHECK_STR(t, mu__jstr(crd, "status.acceptedNames.listKind"), "WidgetList");
	CHECK_STR(t, json_string_value(json_array_get(mu__jget(crd, "status.storedVersions"), 0)), "v1");
	CHECK_STR(t, mu__jstr(json_array_get(mu__jget(crd, "status.conditions"), 1), "type"), "Established");
	json_decref(crd);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_registry);
	MU_RUN(&t, test_objects);
	MU_RUN(&t, test_crd_checks);
	return mu_t_done(&t);
}

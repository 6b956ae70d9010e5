/*
 * test_apiserver_crd.c - CustomResourceDefinitions: the CRD check, the
 * registry of custom types, and pruning, defaulting and validation of
 * custom objects against a structural schema, with kube-apiserver's
 * messages.
 */
#include <stdio.h>
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
	"\"items\":{\"type\":\"object\",\"required\":[\"name\"],\"properties\":{\"name\":{\"type\":\"string\"}}}},"
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
	/* x-kubernetes-list-type and x-kubernetes-map-type on the CRD */
	crd = json_loads(crd_text, 0, NULL);
	props = mu__jget(json_array_get(mu__jget(crd, "spec.versions"), 0), "schema.openAPIV3Schema.properties");
	json_object_set_new(props, "m", json_pack("{s:s, s:s}", "type", "object", "x-kubernetes-map-type", "weird"));
	json_object_set_new(props, "l", json_pack("{s:s, s:s, s:{s:s, s:{s:{s:s}}}, s:[s]}", "type", "array",
						  "x-kubernetes-list-type", "map", "items", "type", "object",
						  "properties", "k", "type", "string", "x-kubernetes-list-map-keys", "k"));
	e.n = 0;
	mu__validate_crd(crd, NULL, &e);
	CHECK_EQ_INT(t, e.n, 2);
	CHECK_STR(t, e.c[0].field, "spec.versions[0].schema.openAPIV3Schema.properties[m].x-kubernetes-map-type");
	CHECK_STR(t, e.c[0].msg, "Unsupported value: \"weird\": supported values: \"atomic\", \"granular\"");
	CHECK_STR(t, e.c[1].field, "spec.versions[0].schema.openAPIV3Schema.properties[l].items.properties[k].default");
	CHECK_STR(t, e.c[1].msg, "Required value: this property is in x-kubernetes-list-map-keys, so it must have a "
		  "default or be a required property");
	json_decref(crd);
	/* the status the apiextensions controllers write */
	crd = json_loads(crd_text, 0, NULL);
	mu__crd_status(crd, NULL, false);
	CHECK_STR(t, mu__jstr(crd, "status.acceptedNames.listKind"), "WidgetList");
	CHECK_STR(t, json_string_value(json_array_get(mu__jget(crd, "status.storedVersions"), 0)), "v1");
	CHECK_STR(t, mu__jstr(json_array_get(mu__jget(crd, "status.conditions"), 1), "type"), "Established");
	json_decref(crd);
}

/* The formats kube-apiserver validates, each with values strfmt takes and
 * refuses; unsupported formats are not checked. */
static void test_formats(mu_t_t *t)
{
	static const struct {
		const char *format, *value;
		bool ok;
	} cases[] = {
		{"date-time", "2026-11-27T09:30:00Z", true},
		{"date-time", "2026-11-27t09:30:00.123+01:00", true},
		{"datetime", "2026-11-27T09:30:00Z", true},
		{"date-time", "2026-11-27T24:00:00Z", false},
		{"date-time", "2026-11-27 09:30:00Z", false},
		{"date-time", "2026-11-27T09:30:00", false},
		{"date", "2024-02-29", true},
		{"date", "2023-02-29", false},
		{"date", "2026-13-01", false},
		{"date", "26-01-01", false},
		{"uuid", "123e4567-e89b-12d3-a456-426614174000", true},
		{"uuid", "123E4567E89B12D3A456426614174000", true},
		{"uuid", "123e4567-e89b-12d3-a456-42661417400", false},
		{"uuid3", "a3bb189e-8bf9-3888-9912-ace4e6543002", true},
		{"uuid3", "a3bb189e-8bf9-4888-9912-ace4e6543002", false},
		{"uuid4", "a3bb189e-8bf9-4888-9912-ace4e6543002", true},
		{"uuid4", "a3bb189e-8bf9-4888-c912-ace4e6543002", false},
		{"uuid5", "a3bb189e-8bf9-5888-a912-ace4e6543002", true},
		{"email", "someone@example.com", true},
		{"email", "Some One <someone@example.com>", true},
		{"email", "someone", false},
		{"email", "some one@example.com", false},
		{"email", "a..b@example.com", false},
		{"hostname", "example.com", true},
		{"hostname", "localhost", true},
		{"hostname", "my-host.example.london", true},
		{"hostname", "-bad.example.com", false},
		{"hostname", "host.c0m", false},
		{"hostname", "under_score.example.com", false},
		{"ipv4", "10.0.0.1", true},
		{"ipv4", "010.000.000.001", true},
		{"ipv4", "256.0.0.1", false},
		{"ipv4", "10.0.0", false},
		{"ipv4", "::1", false},
		{"ipv6", "::1", true},
		{"ipv6", "2001:db8::8a2e:370:7334", true},
		{"ipv6", "2001:db8:::1", false},
		{"ipv6", "10.0.0.1", false},
		{"cidr", "10.0.0.0/8", true},
		{"cidr", "2001:db8::/32", true},
		{"cidr", "10.0.0.0/33", false},
		{"cidr", "10.0.0.0", false},
		{"mac", "00:1a:2b:3c:4d:5e", true},
		{"mac", "00-1A-2B-3C-4D-5E", true},
		{"mac", "001a.2b3c.4d5e", true},
		{"mac", "00:1a:2b:3c:4d", false},
		{"mac", "00:1a-2b:3c:4d:5e", false},
		{"duration", "1h30m", true},
		{"duration", "-1.5s", true},
		{"duration", "300ms", true},
		{"duration", "3 days", true},
		{"duration", "2 weeks 1 hour", true},
		{"duration", "1 fortnight", false},
		{"duration", "1x", false},
		{"duration", "", false},
		{"byte", "aGVsbG8=", true},
		{"byte", "aGVsbG8", false},
		{"byte", "a=bc", false},
		{"uri", "https://example.com/a?b=c", true},
		{"uri", "/relative/path", true},
		{"uri", "example.com/a", false},
		{"uri", "", false},
		{"bsonobjectid", "507f1f77bcf86cd799439011", true},
		{"bsonobjectid", "507f1f77bcf86cd79943901", false},
		{"isbn10", "0-321-75104-3", true},
		{"isbn10", "0321751044", false},
		{"isbn13", "978-0321751041", true},
		{"isbn", "9780321751041", true},
		{"isbn", "9780321751042", false},
		{"creditcard", "4111 1111 1111 1111", true},
		{"creditcard", "4111 1111 1111 1112", false},
		{"ssn", "123-45-6789", true},
		{"ssn", "123456789", false},
		{"hexcolor", "#FFaa00", true},
		{"hexcolor", "fa0", true},
		{"hexcolor", "#ffaa0", false},
		{"rgbcolor", "rgb(255, 0, 12)", true},
		{"rgbcolor", "rgb(256,0,0)", false},
		{"password", "anything at all", true},
		{"int32", "not a number", true}, /* dropped from the schema by kube */
		{"k8s-short-name", "ANY", true},
		{"my-own-format", "x", true},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
		if (mu__crd_format_ok(cases[i].format, cases[i].value) != cases[i].ok) {
			fprintf(stderr, "format %s, \"%s\": want %d\n", cases[i].format, cases[i].value, cases[i].ok);
			CHECK(t, false);
		}
	CHECK(t, mu__crd_format_supported("date-time") && mu__crd_format_supported("uuid5"));
	CHECK(t, !mu__crd_format_supported("int64") && !mu__crd_format_supported("double"));
}

/* format and multipleOf in a custom object, with kube-apiserver's
 * messages. */
static void test_format_multiple(mu_t_t *t)
{
	json_t *s = json_loads("{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\",\"properties\":{"
			       "\"mail\":{\"type\":\"string\",\"format\":\"email\"},"
			       "\"when\":{\"type\":\"string\",\"format\":\"date-time\"},"
			       "\"n\":{\"type\":\"integer\",\"format\":\"int32\",\"multipleOf\":5},"
			       "\"f\":{\"type\":\"number\",\"multipleOf\":0.1},"
			       "\"z\":{\"type\":\"integer\",\"multipleOf\":0}}}}}", 0, NULL);
	json_t *crd = json_loads(crd_text, 0, NULL);
	json_object_set(mu__jget(json_array_get(mu__jget(crd, "spec.versions"), 0), "schema"), "openAPIV3Schema", s);
	mu__types_t *r;
	mu__types_new(&r);
	char err[200];
	const mu__crdtype_t *c = mu__crdtype(mu__type(r, mu__types_put(r, crd, err, sizeof err)));
	CHECK(t, c != NULL);
	json_t *o = json_loads("{\"spec\":{\"mail\":\"nobody\",\"when\":\"yesterday\",\"n\":12,\"f\":0.35,\"z\":1}}",
			       0, NULL);
	mu__verr_t e = {0};
	mu__crd_validate(c, 0, o, NULL, &e);
	CHECK_EQ_INT(t, e.n, 5);
	CHECK_STR(t, e.c[0].field, "spec.mail");
	CHECK_STR(t, e.c[0].msg, "Invalid value: \"nobody\": spec.mail in body must be of type email: \"nobody\"");
	CHECK_STR(t, e.c[1].msg, "Invalid value: \"yesterday\": spec.when in body must be of type date-time: "
		  "\"yesterday\"");
	CHECK_STR(t, e.c[2].msg, "Invalid value: 12: spec.n in body should be a multiple of 5");
	CHECK_STR(t, e.c[3].msg, "Invalid value: 0.35: spec.f in body should be a multiple of 0.1");
	CHECK_STR(t, e.c[4].msg, "Invalid value: 1: factor MultipleOf declared for spec.z must be positive: 0");
	json_decref(o);
	o = json_loads("{\"spec\":{\"mail\":\"a@b.example\",\"when\":\"2026-11-27T09:00:00Z\",\"n\":-15,\"f\":0.3}}",
		       0, NULL);
	e.n = 0;
	mu__crd_validate(c, 0, o, NULL, &e);
	CHECK_EQ_INT(t, e.n, 0);
	json_decref(o);
	json_decref(crd);
	json_decref(s);
	mu__types_free(r);
}

/* A ConversionReview answer as a webhook writes it. */
static int review(const char *text, const char *ver, json_t **out, char *err, size_t errlen)
{
	return mu__crd_conv_response(text, strlen(text), ver, "u-1", out, err, errlen);
}

/* The checks of a conversion webhook's answer (crd_webhook.c), with
 * kube-apiserver's messages. */
static void test_conv_response(mu_t_t *t)
{
	char err[600];
	json_t *out = NULL;
	CHECK_EQ_INT(t, review("{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"ConversionReview\",\"response\":"
			       "{\"uid\":\"u-1\",\"result\":{\"status\":\"Success\"},\"convertedObjects\":[{\"a\":1}]}}",
			       "v1", &out, err, sizeof err), MU_OK);
	CHECK_EQ_INT(t, json_array_size(out), 1);
	json_decref(out);
	CHECK_EQ_INT(t, review("{\"apiVersion\":\"v1\",\"kind\":\"Status\"}", "v1", &out, err, sizeof err), MU_EPARSE);
	CHECK_STR(t, err, "expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got /v1, "
		  "Kind=Status");
	CHECK_EQ_INT(t, review("{}", "v1", &out, err, sizeof err), MU_EPARSE);
	CHECK_STR(t, err, "expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got , Kind=");
	CHECK_EQ_INT(t, review("{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"ConversionReview\"}", "v1", &out,
			       err, sizeof err), MU_EPARSE);
	CHECK_STR(t, err, "no response provided");
	CHECK_EQ_INT(t, review("{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"ConversionReview\",\"response\":"
			       "{\"uid\":\"u-2\",\"result\":{\"status\":\"Success\"}}}", "v1", &out, err, sizeof err),
		     MU_EPARSE);
	CHECK_STR(t, err, "expected response.uid=\"u-1\", got \"u-2\"");
	CHECK_EQ_INT(t, review("{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"ConversionReview\",\"response\":"
			       "{\"uid\":\"u-1\",\"result\":{\"status\":\"Failure\",\"message\":\"no way\"}}}", "v1", &out,
			       err, sizeof err), MU_EPARSE);
	CHECK_STR(t, err, "no way");
	CHECK_EQ_INT(t, review("{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"ConversionReview\",\"response\":"
			       "{\"uid\":\"u-1\",\"result\":{}}}", "v1", &out, err, sizeof err), MU_EPARSE);
	CHECK_STR(t, err, "response.result.status was '', not 'Success'");
	/* v1beta1 answers are not checked for their kind or uid, as in kube */
	CHECK_EQ_INT(t, review("{\"response\":{\"uid\":\"other\",\"result\":{\"status\":\"Success\"}}}", "v1beta1", &out,
			       err, sizeof err), MU_OK);
	CHECK_EQ_INT(t, json_array_size(out), 0);
	json_decref(out);
	CHECK_EQ_INT(t, review("not json", "v1", &out, err, sizeof err), MU_EPARSE);
	CHECK(t, out == NULL);
}

/* The converted objects put in place (crd_webhook.c): count, version, kind,
 * name, namespace and uid checked; metadata kept but labels and
 * annotations. */
static void test_conv_merge(mu_t_t *t)
{
	char err[600];
	json_t *objs = json_loads("[{\"apiVersion\":\"g/v1\",\"kind\":\"K\",\"metadata\":{\"name\":\"a\",\"uid\":\"1\","
				  "\"labels\":{\"x\":\"1\"},\"resourceVersion\":\"5\"},\"spec\":{\"n\":1}},"
				  "{\"apiVersion\":\"g/v2\",\"kind\":\"K\",\"metadata\":{\"name\":\"b\"}}]", 0, NULL);
	json_t *conv = json_loads("[{\"apiVersion\":\"g/v2\",\"kind\":\"K\",\"metadata\":{\"name\":\"a\",\"uid\":\"1\","
				  "\"labels\":{\"y\":\"2\"},\"resourceVersion\":\"99\"},\"spec\":{\"n\":2}}]", 0, NULL);
	CHECK_EQ_INT(t, mu__crd_conv_merge(objs, conv, "g/v2", err, sizeof err), MU_OK);
	const json_t *a = json_array_get(objs, 0);
	CHECK_STR(t, mu__jstr(a, "apiVersion"), "g/v2");
	CHECK_EQ_INT(t, json_integer_value(mu__jget(a, "spec.n")), 2);
	CHECK_STR(t, mu__jstr(a, "metadata.resourceVersion"), "5");
	CHECK_STR(t, mu__jstr(a, "metadata.labels.y"), "2");
	CHECK(t, mu__jget(a, "metadata.labels.x") == NULL);
	json_decref(conv);
	static const struct {
		const char *conv, *msg;
	} bad[] = {
		{"[]", "returned 0 objects, expected 1"},
		{"[{\"apiVersion\":\"g/v3\",\"kind\":\"K\",\"metadata\":{\"name\":\"a\"}}]",
		 "returned invalid converted object at index 1: invalid groupVersion (expected g/v2, received g/v3)"},
		{"[{\"apiVersion\":\"g/v2\",\"kind\":\"L\",\"metadata\":{\"name\":\"a\"}}]",
		 "returned invalid converted object at index 1: invalid kind (expected K, received L)"},
		{"[{\"apiVersion\":\"g/v2\",\"kind\":\"K\",\"metadata\":{\"name\":\"z\"}}]",
		 "returned invalid converted object at index 1: must have the same name: a != z"},
		{"[{\"apiVersion\":\"g/v2\",\"kind\":\"K\",\"metadata\":{\"name\":\"a\",\"namespace\":\"n\"}}]",
		 "returned invalid converted object at index 1: must have the same namespace:  != n"},
		{"[{\"apiVersion\":\"g/v2\",\"kind\":\"K\"}]",
		 "returned invalid converted object at index 1: must have the same name: a != "},
		{"[{\"apiVersion\":\"g/v2\",\"kind\":\"K\",\"metadata\":{\"name\":\"a\",\"labels\":{\"x\":1}}}]",
		 "returned invalid metadata in object at index 1: metadata.labels[x] must be a string, but is float64 in "
		 "converted object"},
		{"[{\"apiVersion\":\"g/v2\",\"kind\":\"K\",\"metadata\":{\"name\":\"a\",\"annotations\":[]}}]",
		 "returned invalid metadata in object at index 1: invalid metadata.annotations of type []interface {} in "
		 "converted object"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		json_t *o = json_loads("[{\"apiVersion\":\"g/v1\",\"kind\":\"K\",\"metadata\":{\"name\":\"a\"}}]", 0, NULL);
		conv = json_loads(bad[i].conv, 0, NULL);
		CHECK_EQ_INT(t, mu__crd_conv_merge(o, conv, "g/v2", err, sizeof err), MU_EINVAL);
		CHECK_STR(t, err, bad[i].msg);
		json_decref(conv);
		json_decref(o);
	}
	json_decref(objs);
	json_t *crd = json_loads("{\"spec\":{\"conversion\":{\"webhook\":{\"conversionReviewVersions\":[\"v9\",\"v1beta1\","
				 "\"v1\"]}}}}", 0, NULL);
	CHECK_STR(t, mu__crd_conv_review_version(crd), "v1beta1");
	json_decref(crd);
}

/* The CRD-level checks of round 11: list-map keys that are not item
 * properties, set items that are not atomic, defaults against their own
 * schema, storedVersions and the webhook URL. */
static void test_crd_level(mu_t_t *t)
{
	static const struct {
		const char *schema, *field, *msg;
	} cases[] = {
		{"{\"type\":\"array\",\"x-kubernetes-list-type\":\"map\",\"x-kubernetes-list-map-keys\":[\"id\",\"id\"],"
		 "\"items\":{\"type\":\"object\",\"required\":[\"id\"],\"properties\":{\"id\":{\"type\":\"string\"}}}}",
		 "s.x-kubernetes-list-map-keys", "Invalid value: [\"id\",\"id\"]: must not contain duplicate entries"},
		{"{\"type\":\"array\",\"x-kubernetes-list-type\":\"map\",\"x-kubernetes-list-map-keys\":[\"k\"],"
		 "\"items\":{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\"}}}}",
		 "s.x-kubernetes-list-map-keys", "Invalid value: [\"k\"]: entries must all be names of item properties"},
		{"{\"type\":\"array\",\"x-kubernetes-list-type\":\"set\",\"items\":{\"type\":\"array\","
		 "\"x-kubernetes-list-type\":\"set\",\"items\":{\"type\":\"string\"}}}",
		 "s.items.x-kubernetes-list-type", "Invalid value: \"set\": must be atomic as item of a list with "
		 "x-kubernetes-list-type=set"},
		{"{\"type\":\"string\",\"maxLength\":2,\"default\":\"abc\"}", "s.default",
		 "Too long: may not be longer than 2"},
		{"{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"}},\"default\":{\"a\":\"x\"}}", "s.default.a",
		 "Invalid value: \"string\": s.default.a in body must be of type integer: \"x\""},
		{"{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"}},\"default\":{\"b\":1}}", "s.default",
		 "Invalid value: {\"b\":1}: must not have unknown fields"},
		/* CEL rules run on a default once it passes the schema, as kube's
		 * ValidateDefaults runs them (self and oldSelf the default) */
		{"{\"type\":\"integer\",\"default\":20,\"x-kubernetes-validations\":[{\"rule\":\"self <= 10\"}]}",
		 "s.default", "Invalid value: \"integer\": failed rule: self <= 10"},
		{"{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\",\"x-kubernetes-validations\":"
		 "[{\"rule\":\"self == oldSelf && self > 1\",\"message\":\"a too small\"}]}},\"default\":{\"a\":1}}",
		 "s.default.a", "Invalid value: \"integer\": a too small"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		json_t *s = json_loads(cases[i].schema, 0, NULL);
		mu__verr_t e = {0};
		mu__crd_check_schema(s, "s", &e);
		bool found = false;
		for (int j = 0; j < e.n; j++)
			found = found || (!strcmp(e.c[j].field, cases[i].field) && !strcmp(e.c[j].msg, cases[i].msg));
		if (!found) {
			fprintf(stderr, "case %zu: %d causes:", i, e.n);
			for (int j = 0; j < e.n; j++)
				fprintf(stderr, " [%s: %s]", e.c[j].field, e.c[j].msg);
			fprintf(stderr, "\n");
		}
		CHECK(t, found);
		json_decref(s);
	}
	/* good: keys that are required or defaulted, atomic set items, valid
	 * pruned defaults */
	json_t *s = json_loads("{\"type\":\"object\",\"properties\":{\"l\":{\"type\":\"array\",\"x-kubernetes-list-type\":"
			       "\"set\",\"items\":{\"type\":\"object\",\"x-kubernetes-map-type\":\"atomic\"}},\"n\":{\"type\":"
			       "\"integer\",\"maximum\":3,\"default\":3},\"o\":{\"type\":\"object\",\"properties\":{\"a\":"
			       "{\"type\":\"string\"}},\"default\":{\"a\":\"x\"}}}}", 0, NULL);
	mu__verr_t e = {0};
	mu__crd_check_schema(s, "s", &e);
	CHECK_EQ_INT(t, e.n, 0);
	json_decref(s);
}

/* Validation ratcheting (kube 1.30+): on an update, a value equal to its
 * correlated old value keeps the errors it had; a changed one does not. */
static void test_ratchet(mu_t_t *t)
{
	mu__types_t *r;
	mu__types_new(&r);
	const mu__crdtype_t *c = widgets(t, r);
	json_t *old = json_loads("{\"metadata\":{\"name\":\"w\"},\"spec\":{\"color\":\"green\",\"size\":11,"
				 "\"items\":[{\"name\":\"a\",\"x\":1},{\"name\":\"b\"}]}}", 0, NULL);
	json_t *nw = json_deep_copy(old);
	mu__verr_t e = {0};
	mu__crd_validate(c, 0, nw, NULL, &e);
	CHECK_EQ_INT(t, e.n, 2); /* as a create: both errors */
	json_object_set_new(json_object_get(nw, "metadata"), "labels", json_pack("{s:s}", "a", "b"));
	memset(&e, 0, sizeof e);
	mu__crd_validate(c, 0, nw, old, &e);
	CHECK_EQ_INT(t, e.n, 0); /* a label edit: spec unchanged */
	/* size changed: its error is back; color, unchanged, stays ratcheted */
	json_object_set_new(json_object_get(nw, "spec"), "size", json_integer(12));
	memset(&e, 0, sizeof e);
	mu__crd_validate(c, 0, nw, old, &e);
	CHECK_EQ_INT(t, e.n, 1);
	CHECK_STR(t, e.c[0].field, "spec.size");
	/* a map list's elements correlate by key: b moved first and a new
	 * element without its required name are judged on their own */
	json_object_set_new(json_object_get(nw, "spec"), "size", json_integer(11));
	json_t *items = mu__jget(nw, "spec.items");
	json_t *b = json_incref(json_array_get(items, 1));
	json_array_remove(items, 1);
	json_array_insert_new(items, 0, b);
	json_array_append_new(items, json_pack("{s:i}", "x", 2));
	memset(&e, 0, sizeof e);
	mu__crd_validate(c, 0, nw, old, &e);
	CHECK_EQ_INT(t, e.n, 1);
	CHECK_STR(t, e.c[0].field, "spec.items[2].name");
	json_decref(nw);
	json_decref(old);
	mu__types_free(r);
}

/* The CRD-level checks kube relaxes on an update when the old CRD broke
 * them already (a set of granular maps here), per check, not per field. */
static void test_crd_ratchet(mu_t_t *t)
{
	json_t *good = json_loads(crd_text, 0, NULL);
	json_t *bad = json_deep_copy(good);
	json_t *props = mu__jget(json_array_get(mu__jget(bad, "spec.versions"), 0),
				 "schema.openAPIV3Schema.properties.spec.properties");
	json_object_set_new(props, "tags", json_pack("{s:s, s:s, s:{s:s}}", "type", "array", "x-kubernetes-list-type",
						     "set", "items", "type", "object"));
	mu__verr_t e = {0};
	mu__validate_crd(bad, NULL, &e);
	CHECK_EQ_INT(t, e.n, 1); /* a create: refused */
	memset(&e, 0, sizeof e);
	mu__validate_crd(bad, good, &e);
	CHECK_EQ_INT(t, e.n, 1); /* an update that breaks it anew: refused */
	json_t *bad2 = json_deep_copy(bad);
	json_object_set_new(props, "more", json_pack("{s:s}", "type", "string"));
	memset(&e, 0, sizeof e);
	mu__validate_crd(bad, bad2, &e);
	CHECK_EQ_INT(t, e.n, 0); /* the old CRD broke it: kept */
	json_decref(bad2);
	json_decref(bad);
	json_decref(good);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_registry);
	MU_RUN(&t, test_objects);
	MU_RUN(&t, test_crd_checks);
	MU_RUN(&t, test_formats);
	MU_RUN(&t, test_format_multiple);
	MU_RUN(&t, test_conv_response);
	MU_RUN(&t, test_conv_merge);
	MU_RUN(&t, test_crd_level);
	MU_RUN(&t, test_ratchet);
	MU_RUN(&t, test_crd_ratchet);
	return mu_t_done(&t);
}

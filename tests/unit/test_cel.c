/*
 * test_cel.c - unit tests of the DRA selector CEL subset (cel.h): the
 * selectors of the Kubernetes DRA docs and examples evaluated on devices,
 * CEL's error absorption by && and ||, and refusals with their reasons;
 * and the subset of CRD validation rules on a small document.
 */
#include <string.h>

#include "check.h"
#include "muster/cel.h"
#include "muster/error.h"

static const mu_cel_attr_t attrs[] = {
	{"gpu.example.com/model", MU_CEL_STRING, 0, false, "A100"},
	{"gpu.example.com/index", MU_CEL_INT, 3, false, NULL},
	{"gpu.example.com/mig", MU_CEL_BOOL, 0, true, NULL},
	{"gpu.example.com/driverVersion", MU_CEL_VERSION, 0, false, "535.104.5"},
};
static const mu_cel_attr_t caps[] = {
	{"gpu.example.com/memory", MU_CEL_QUANTITY, 80LL * 1024 * 1024 * 1024 * 1000, false, NULL},
};
static const mu_cel_device_t dev = {"gpu.example.com", attrs, 4, caps, 1};

/* 1 true, 0 false, or the negative error. */
static int ev(const char *e)
{
	bool m = false;
	char err[256];
	int rc = mu_cel_eval(e, &dev, &m, err, sizeof err);
	return rc ? rc : m;
}

static void test_match(mu_t_t *t)
{
	CHECK_EQ_INT(t, ev("device.driver == \"gpu.example.com\""), 1);
	CHECK_EQ_INT(t, ev("device.driver == 'other.example.com'"), 0);
	CHECK_EQ_INT(t, ev("device.attributes[\"gpu.example.com\"].model == \"A100\""), 1);
	CHECK_EQ_INT(t, ev("device.attributes[\"gpu.example.com\"][\"model\"] != \"A100\""), 0);
	CHECK_EQ_INT(t, ev("device.attributes[\"gpu.example.com\"].index < 4"), 1);
	CHECK_EQ_INT(t, ev("device.attributes[\"gpu.example.com\"].index >= 4"), 0);
	CHECK_EQ_INT(t, ev("device.attributes[\"gpu.example.com\"].mig"), 1);
	CHECK_EQ_INT(t, ev("!device.attributes[\"gpu.example.com\"].mig"), 0);
	CHECK_EQ_INT(t, ev("device.capacity[\"gpu.example.com\"].memory.compareTo(quantity(\"40Gi\")) >= 0"), 1);
	CHECK_EQ_INT(t, ev("device.capacity[\"gpu.example.com\"].memory.isLessThan(quantity(\"40Gi\"))"), 0);
	CHECK_EQ_INT(t, ev("device.attributes[\"gpu.example.com\"].driverVersion.isGreaterThan(semver(\"535.0.0\"))"), 1);
	CHECK_EQ_INT(t, ev("device.driver == \"gpu.example.com\" && (device.attributes[\"gpu.example.com\"].index == 1 || "
			   "device.attributes[\"gpu.example.com\"].index == 3)"), 1);
}

static void test_errors_absorbed(mu_t_t *t)
{
	/* a missing attribute is an error unless the other side decides */
	CHECK_EQ_INT(t, ev("device.attributes[\"x.com\"].a == 1"), MU_ENOENT);
	CHECK_EQ_INT(t, ev("device.attributes[\"x.com\"].a == 1 || device.driver == \"gpu.example.com\""), 1);
	CHECK_EQ_INT(t, ev("device.attributes[\"x.com\"].a == 1 && device.driver == \"nope\""), 0);
	CHECK_EQ_INT(t, ev("device.attributes[\"x.com\"].a == 1 && device.driver == \"gpu.example.com\""), MU_ENOENT);
	CHECK_EQ_INT(t, ev("device.attributes[\"gpu.example.com\"].model == 1"), MU_EINVAL);
}

/* The check's code and whether its message contains want. */
static int refused(const char *e, const char *want)
{
	char err[256] = "";
	int rc = mu_cel_check(e, err, sizeof err);
	return rc && strstr(err, want) ? rc : 0;
}

static void test_refused(mu_t_t *t)
{
	CHECK_EQ_INT(t, mu_cel_check("device.driver == \"a\" && true", NULL, 0), MU_OK);
	CHECK_EQ_INT(t, refused("device.attributes[\"a\"].b in [1, 2]", "not supported"), MU_EINVAL);
	CHECK_EQ_INT(t, refused("size(device.driver) > 1", "'size' is not supported"), MU_EINVAL);
	CHECK_EQ_INT(t, refused("device.driver.startsWith(\"a\")", "startsWith() is not supported"), MU_EINVAL);
	CHECK_EQ_INT(t, refused("device.capacity[\"a\"].m > quantity(\"1\")", "compareTo()"), MU_EINVAL);
	CHECK_EQ_INT(t, refused("device.driver", "must yield a bool"), MU_EINVAL);
	CHECK_EQ_INT(t, refused("device.attributes", "followed by a domain"), MU_EINVAL);
	CHECK_EQ_INT(t, refused("device.driver == \"a", "unterminated string"), MU_EPARSE);
	CHECK_EQ_INT(t, refused("(device.driver == \"a\"", "expected ')'"), MU_EPARSE);
	CHECK_EQ_INT(t, refused("1.5 > 1", "decimal integers"), MU_EINVAL);
	CHECK_EQ_INT(t, refused("quantity(\"lots\").isLessThan(quantity(\"1\"))", "not a quantity"), MU_EINVAL);
	CHECK_EQ_INT(t, refused("device.driver == \"a\" ? true : false", "not supported"), MU_EINVAL);
	char deep[200];
	memset(deep, '(', 60);
	strcpy(deep + 60, "true");
	CHECK_EQ_INT(t, refused(deep, "nested deeper"), MU_ELIMIT);
	memset(deep, '!', 60);
	strcpy(deep + 60, "true");
	CHECK_EQ_INT(t, refused(deep, "nested deeper"), MU_ELIMIT);
	CHECK_EQ_INT(t, refused("", "unexpected end"), MU_EPARSE);
}

/* --- validation rules: a small document for self -------------------------- */

typedef struct tnode {
	int kind;
	int64_t i;
	const char *s;
	const char *const *keys;      /* a map's keys, or NULL for a list */
	const struct tnode *vals;
	size_t n;
} tnode_t;

static int t_kind(const void *n, int64_t *i, bool *b, const char **s)
{
	const tnode_t *x = n;
	*i = x->i;
	*b = x->i != 0;
	*s = x->s;
	return x->kind;
}

static const void *t_field(const void *map, const char *name)
{
	const tnode_t *x = map;
	for (size_t k = 0; x->keys && k < x->n; k++)
		if (!strcmp(x->keys[k], name))
			return &x->vals[k];
	return NULL;
}

static size_t t_size(const void *n)
{
	return ((const tnode_t *)n)->n;
}

static const void *t_elem(const void *list, size_t i)
{
	const tnode_t *x = list;
	return i < x->n ? &x->vals[i] : NULL;
}

static bool t_equal(const void *a, const void *b)
{
	const tnode_t *x = a, *y = b;
	if (x->kind != y->kind || x->n != y->n || x->i != y->i || (!x->s) != (!y->s) ||
	    (x->s && strcmp(x->s, y->s)))
		return false;
	for (size_t k = 0; k < x->n; k++)
		if ((x->keys && strcmp(x->keys[k], y->keys[k])) || !t_equal(&x->vals[k], &y->vals[k]))
			return false;
	return true;
}

static const mu_cel_doc_t tdoc = {t_kind, t_field, t_size, t_elem, t_equal};
static const tnode_t ports[] = {{MU_CEL_NODE_INT, 80, 0, 0, 0, 0}, {MU_CEL_NODE_INT, 443, 0, 0, 0, 0}};
static const char *const okeys[] = {"on"};
static const tnode_t ovals[] = {{MU_CEL_NODE_BOOL, 1, 0, 0, 0, 0}};
static const char *const skeys[] = {"min", "max", "name", "ports", "opts", "ratio"};
static const tnode_t svals[] = {
	{MU_CEL_NODE_INT, 1, 0, 0, 0, 0},
	{MU_CEL_NODE_INT, 3, 0, 0, 0, 0},
	{MU_CEL_NODE_STRING, 0, "caf\xc3\xa9", 0, 0, 0}, /* 4 code points, 5 bytes */
	{MU_CEL_NODE_LIST, 0, 0, NULL, ports, 2},
	{MU_CEL_NODE_MAP, 0, 0, okeys, ovals, 1},
	{MU_CEL_NODE_DOUBLE, 0, 0, 0, 0, 0},
};
static const tnode_t self = {MU_CEL_NODE_MAP, 0, 0, skeys, svals, 6};

/* 1 true, 0 false, or the negative error. */
static int rule(const char *e)
{
	bool ok = false;
	char err[256];
	int rc = mu_cel_rule_eval(e, &tdoc, &self, &ok, err, sizeof err);
	return rc ? rc : ok;
}

/* The same with oldSelf. */
static int rule_old(const char *e, const tnode_t *old)
{
	bool ok = false;
	char err[256];
	int rc = mu_cel_rule_eval_old(e, &tdoc, &self, old, &ok, err, sizeof err);
	return rc ? rc : ok;
}

static const tnode_t other_ports[] = {{MU_CEL_NODE_INT, 80, 0, 0, 0, 0}, {MU_CEL_NODE_INT, 8080, 0, 0, 0, 0}};
static const tnode_t old_vals[] = {
	{MU_CEL_NODE_INT, 1, 0, 0, 0, 0},
	{MU_CEL_NODE_INT, 3, 0, 0, 0, 0},
	{MU_CEL_NODE_STRING, 0, "old", 0, 0, 0},
	{MU_CEL_NODE_LIST, 0, 0, NULL, other_ports, 2},
	{MU_CEL_NODE_MAP, 0, 0, okeys, ovals, 1},
	{MU_CEL_NODE_DOUBLE, 0, 0, 0, 0, 0},
};
static const tnode_t old_self = {MU_CEL_NODE_MAP, 0, 0, skeys, old_vals, 6};

/* Transition rules, all(), exists() and `in` (the rules the JobSet,
 * KubeRay and Kubeflow CRDs in ../shared/data/k8s/workloads use). */
static void test_rules_beyond(mu_t_t *t)
{
	CHECK_EQ_INT(t, rule_old("self == oldSelf", &self), 1);
	CHECK_EQ_INT(t, rule_old("self == oldSelf", &old_self), 0);
	CHECK_EQ_INT(t, rule_old("self.min == oldSelf.min && self.name != oldSelf.name", &old_self), 1);
	CHECK_EQ_INT(t, rule_old("self.opts == oldSelf.opts && self.ports != oldSelf.ports", &old_self), 1);
	CHECK_EQ_INT(t, rule("self == oldSelf"), MU_EINVAL); /* no old value: the caller skips such rules */
	CHECK_EQ_INT(t, rule("self.ports.all(p, p > 0)"), 1);
	CHECK_EQ_INT(t, rule("self.ports.all(p, p > 100)"), 0);
	CHECK_EQ_INT(t, rule("self.ports.exists(p, p == 443)"), 1);
	CHECK_EQ_INT(t, rule("self.ports.exists(p, p == 8080)"), 0);
	CHECK_EQ_INT(t, rule("self.ports.all(p, self.ports.exists(q, q >= p))"), 1);
	CHECK_EQ_INT(t, rule("self.ports.all(p, p.x == 1)"), MU_ENOENT);  /* an int has no fields */
	CHECK_EQ_INT(t, rule("self.ports.exists(p, p == 80 || p.x == 1)"), 1); /* || absorbs the error */
	CHECK_EQ_INT(t, rule("self.opts.all(k, true)"), MU_EINVAL);       /* over a map: not here */
	CHECK_EQ_INT(t, rule("self.name in ['x\\n']"), MU_EINVAL); /* escapes other than \\ \" \' */
	CHECK_EQ_INT(t, rule("self.name in ['x', 'caf\xc3\xa9']"), 1);
	CHECK_EQ_INT(t, rule("self.min in [2, 3]"), 0);
	CHECK_EQ_INT(t, rule("!(has(self.opts) && self.name == 'x' && self.ports.exists(x, has(x.y)))"), 1);
	bool tr = false;
	char err[256];
	CHECK_EQ_INT(t, mu_cel_rule_compile("self == oldSelf", &tr, err, sizeof err), MU_OK);
	CHECK(t, tr);
	CHECK_EQ_INT(t, mu_cel_rule_compile("self.items.all(x, !has(x.metadata.namespace) || "
					    "size(x.metadata.namespace) == 0)", &tr, err, sizeof err), MU_OK);
	CHECK(t, !tr);
	CHECK_EQ_INT(t, mu_cel_rule_check("self.a in self.b", err, sizeof err), MU_EINVAL);
	CHECK_EQ_INT(t, mu_cel_rule_check("self.items.map(x, x)", err, sizeof err), MU_EINVAL);
	CHECK_EQ_INT(t, mu_cel_rule_check("self.items.all(x x > 0)", err, sizeof err), MU_EPARSE);
	CHECK_EQ_INT(t, mu_cel_rule_check("self.a.all(a, a.all(b, b.all(c, c.all(d, d.all(e, true)))))", err,
					  sizeof err), MU_ELIMIT);
}

static void test_rules(mu_t_t *t)
{
	CHECK_EQ_INT(t, rule("self.min <= self.max"), 1);
	CHECK_EQ_INT(t, rule("self.min > self.max"), 0);
	CHECK_EQ_INT(t, rule("size(self.name) == 4 && self.name.size() == 4"), 1);
	CHECK_EQ_INT(t, rule("size(self.ports) == 2 && size(self) == 6 && self.opts.size() == 1"), 1);
	CHECK_EQ_INT(t, rule("has(self.opts) && has(self.opts.on) && !has(self.opts.off)"), 1);
	CHECK_EQ_INT(t, rule("self.opts.on == true && self.name != 'x'"), 1);
	CHECK_EQ_INT(t, rule("!has(self.replicas) || self.replicas > 1"), 1); /* || absorbs the missing key */
	CHECK_EQ_INT(t, rule("self.replicas > 1"), MU_ENOENT);
	CHECK_EQ_INT(t, rule("self.ratio > 1"), MU_EINVAL);       /* doubles are refused at run time */
	CHECK_EQ_INT(t, rule("has(self.name.x)"), MU_EINVAL);     /* a string has no fields */
	CHECK_EQ_INT(t, rule("self.ports == self.ports"), 1); /* lists compare deeply */
	char err[256];
	CHECK_EQ_INT(t, mu_cel_rule_check("self.a.b <= self.c && has(self.d) || !(size(self.e) > 2)", err, sizeof err),
		     MU_OK);
	CHECK_EQ_INT(t, mu_cel_rule_check("self == oldSelf", err, sizeof err), MU_OK);
	CHECK_EQ_INT(t, mu_cel_rule_check("self.items.all(x, x > 0)", err, sizeof err), MU_OK);
	CHECK_EQ_INT(t, mu_cel_rule_check("self.a in ['x']", err, sizeof err), MU_OK);
	CHECK_EQ_INT(t, mu_cel_rule_check("self.a[0] == 1", err, sizeof err), MU_EINVAL);
	CHECK_EQ_INT(t, mu_cel_rule_check("self.a <= ", err, sizeof err), MU_EPARSE);
	CHECK_EQ_INT(t, mu_cel_rule_check("has(other.a)", err, sizeof err), MU_EINVAL);
	CHECK_EQ_INT(t, mu_cel_rule_check("device.driver == 'x'", err, sizeof err), MU_EINVAL);
	CHECK_EQ_INT(t, mu_cel_check("self.a == 1", err, sizeof err), MU_EINVAL); /* not in selectors */
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_match);
	MU_RUN(&t, test_errors_absorbed);
	MU_RUN(&t, test_refused);
	MU_RUN(&t, test_rules);
	MU_RUN(&t, test_rules_beyond);
	return mu_t_done(&t);
}

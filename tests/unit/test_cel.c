/*
 * test_cel.c - unit tests of the DRA selector CEL subset (cel.h): the
 * selectors of the Kubernetes DRA docs and examples evaluated on devices,
 * CEL's error absorption by && and ||, and refusals with their reasons.
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

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_match);
	MU_RUN(&t, test_errors_absorbed);
	MU_RUN(&t, test_refused);
	return mu_t_done(&t);
}

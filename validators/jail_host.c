/*
 * jail_host.c - why this host gives no user namespace, and what enables
 * one: the settings read from /proc/sys where they exist, the process's
 * seccomp mode from /proc/self/status, and where sluice runs (a Kubernetes
 * pod, a Slurm job), for `sluice doctor` and for the line with which gates
 * refuse to run without the jail's minimum.
 *
 * Reads only; each call reads afresh.  SLUICE_TEST_NO_USERNS=1 in the
 * environment makes every clone of a user namespace by the jail fail with
 * EPERM, as under Ubuntu's AppArmor restriction (the tests' stand-in for a
 * host without them).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "validators/jail.h"

int sl_jail_test_no_userns(void)
{
	const char *v = getenv("SLUICE_TEST_NO_USERNS");

	return v && !strcmp(v, "1");
}

/* The first line of a /proc/sys file, or "" when it is absent. */
static void read_setting(char *out, size_t n, const char *path)
{
	FILE *f = fopen(path, "r");

	out[0] = '\0';
	if (!f)
		return;
	if (!fgets(out, (int)n, f))
		out[0] = '\0';
	out[strcspn(out, "\n")] = '\0';
	fclose(f);
}

/* The Seccomp: field of /proc/self/status: 0 none, 1 strict, 2 a filter. */
static int seccomp_mode(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[128];
	int mode = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Seccomp: %d", &mode) == 1)
			break;
	fclose(f);
	return mode;
}

static const struct {
	const char *name, *path, *blocking, *fix;
	int root_too;               /* it holds for root as well */
} settings[] = {
	{ "kernel.unprivileged_userns_clone", "/proc/sys/kernel/unprivileged_userns_clone",
	  "0", "sysctl -w kernel.unprivileged_userns_clone=1 (Debian kernels; "
	  "/etc/sysctl.d/ to keep it)", 0 },
	{ "kernel.apparmor_restrict_unprivileged_userns",
	  "/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1",
	  "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 (Ubuntu 23.10 and "
	  "later), or an AppArmor profile for sluice that allows 'userns,'", 0 },
	{ "user.max_user_namespaces", "/proc/sys/user/max_user_namespaces", "0",
	  "sysctl -w user.max_user_namespaces=15000 (any value above 0)", 1 },
};

size_t sl_jail_userns_hints(sl_jail_hint *out, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < sizeof(settings) / sizeof(*settings) && k < n; i++) {
		sl_jail_hint *h = &out[k];

		memset(h, 0, sizeof(*h));
		read_setting(h->value, sizeof(h->value), settings[i].path);
		if (!*h->value)
			continue;
		h->name = settings[i].name;
		h->fix = settings[i].fix;
		h->blocks = !strcmp(h->value, settings[i].blocking) &&
			(settings[i].root_too || geteuid());
		k++;
	}
	if (k < n && seccomp_mode() == 2) {
		memset(&out[k], 0, sizeof(out[k]));
		out[k].name = "seccomp";
		snprintf(out[k].value, sizeof(out[k].value), "filter");
		out[k].fix = "a seccomp filter is on sluice itself (a container's profile): "
			"it must allow unshare and clone with CLONE_NEWUSER (Kubernetes: "
			"securityContext.seccompProfile type Unconfined or a Localhost profile "
			"that allows them; Docker: --security-opt seccomp=...)";
		k++;
	}
	return k;
}

const char *sl_jail_where(void)
{
	if (getenv("KUBERNETES_SERVICE_HOST") ||
	    !access("/var/run/secrets/kubernetes.io/serviceaccount", F_OK))
		return "kubernetes";
	if (getenv("SLURM_JOB_ID"))
		return "slurm";
	return "";
}

const char *sl_jail_where_fix(const char *where)
{
	if (!strcmp(where, "kubernetes"))
		return "in a Kubernetes pod the node's sysctls hold, and the pod needs a "
			"securityContext that lets it make namespaces: seccompProfile "
			"Unconfined (or a profile allowing unshare and clone), procMount: "
			"Unmasked (the jail mounts a /proc of its own), or privileged: true "
			"(README, \"Running on many machines\")";
	if (!strcmp(where, "slurm"))
		return "on a Slurm node the node's sysctls hold: its administrator sets them "
			"in /etc/sysctl.d/ on the compute nodes (README, \"Running on many "
			"machines\")";
	return "";
}

void sl_jail_userns_why(sl_buf *out, int clone_errno)
{
	sl_jail_hint h[8];
	size_t n = sl_jail_userns_hints(h, sizeof(h) / sizeof(*h)), shown = 0;
	const char *where = sl_jail_where();

	sl_buf_addf(out, "no user namespace (clone: %s)",
		    clone_errno ? strerror(clone_errno) : "refused");
	if (sl_jail_test_no_userns())
		sl_buf_adds(out, " (SLUICE_TEST_NO_USERNS=1)");
	for (size_t i = 0; i < n; i++) {
		if (!h[i].blocks)
			continue;
		sl_buf_addf(out, "; %s is %s: %s", h[i].name, h[i].value, h[i].fix);
		shown++;
	}
	if (!shown && clone_errno == EPERM)
		for (size_t i = 0; i < n; i++)
			if (!strcmp(h[i].name, "seccomp"))
				sl_buf_addf(out, "; %s", h[i].fix);
	if (*where)
		sl_buf_addf(out, "; %s", sl_jail_where_fix(where));
}

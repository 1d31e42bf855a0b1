/*
 * cmd_doctor.c - `sluice doctor`: which layers of the jail work on this
 * machine, as this user.
 *
 *   sluice doctor [--json]
 *
 * Probes with sl_jail_probe() (each namespace alone, then real jail runs of
 * `true`, one through the overlay) and prints one row per layer: "yes" or
 * "no" and a detail, then how a candidate's layer holds jail.disk_mb (a
 * tmpfs root mounts, one in a user namespace, or a directory measured
 * afterwards) and how jail.memory_mb holds, then the settings of /proc/sys
 * that decide user namespaces and what enables them here, in a Kubernetes
 * pod or on a Slurm node (validators/jail_host.c).  Reads and writes nothing but
 * a scratch directory in $TMPDIR.  Exit status 0 when the minimum for running gates (user, mount,
 * pid and network namespaces) works, 1 when it does not (gates then need
 * --unsafe), 3 when the probe itself broke.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>

#include "pipeline/cli/cmd.h"
#include "validators/validators.h"
#include "common/util.h"

static const char *const enable_cgroups =
	"missing: this user may create no cgroup with that controller; run as root or "
	"delegate one (systemd-run --user -p Delegate=yes ...); a campaign's memory_mb "
	"or cpus then refuses to run unless jail.unenforced names it";

static const char *detail(const sl_jail_layers *l, unsigned bit, char *buf, size_t n)
{
	int have = !!(l->available & bit);

	buf[0] = '\0';
	switch (bit) {
	case SL_JAIL_USERNS:
		if (!have) {
			sl_buf why = SL_BUF_INIT;

			sl_jail_userns_why(&why, l->userns_errno);
			snprintf(buf, n, "missing: %s (the settings below)", why.buf);
			sl_buf_release(&why);
		}
		break;
	case SL_JAIL_IDMAP:
		snprintf(buf, n, have ? "uid/gid 1000 inside is host %u, never root" :
			 "missing: needs a user namespace", geteuid() ? (unsigned)geteuid() : 65534u);
		break;
	case SL_JAIL_PROCMASK:
		snprintf(buf, n, have ? "kcore, kpage*, kallsyms, keys, slabinfo, timer_list, "
			 "sysrq-trigger... masked; /proc/sys read-only; no /sys" :
			 "missing: needs the private root");
		break;
	case SL_JAIL_INOTIFY:
		snprintf(buf, n, have ? "the jail's user namespace gets 1/8 of the host user's "
			 "inotify instances and watches" : "missing: needs a user namespace");
		break;
	case SL_JAIL_PTY:
		snprintf(buf, n, have ? "a private devpts instance at /dev/pts" :
			 "missing: needs the private root");
		break;
	case SL_JAIL_NETNS:
		if (have)
			snprintf(buf, n, "only its own loopback; nothing outside is reachable");
		break;
	case SL_JAIL_RLIMITS:
		snprintf(buf, n, "nofile 1024, fsize 1 GiB, nproc = pids, CPU seconds per "
			 "process, nice 10 where no CPU cgroup holds the jail; address space only "
			 "where jail.address_space_mb asks");
		break;
	case SL_JAIL_ROOTFS:
		if (*l->run_error && strstr(l->run_error, "proc"))
			snprintf(buf, n, "%s (a /proc with masked or read-only paths refuses "
				 "a new one: in Kubernetes, securityContext.procMount: Unmasked)",
				 l->run_error);
		else if (*l->run_error)
			snprintf(buf, n, "%s", l->run_error);
		else
			snprintf(buf, n, "tmpfs root, pivot_root, read-only /usr and /etc");
		break;
	case SL_JAIL_LANDLOCK:
		if (l->landlock_abi)
			snprintf(buf, n, "ABI %d (a second layer)", l->landlock_abi);
		else
			snprintf(buf, n, "not in this kernel, or disabled (a second layer: "
				 "add landlock to the kernel's lsm= list to enable)");
		break;
	case SL_JAIL_CG_MEMORY:
	case SL_JAIL_CG_PIDS:
	case SL_JAIL_CG_CPU:
	case SL_JAIL_CG_KILL:
		if (!have) {
			snprintf(buf, n, "%s", enable_cgroups);
			break;
		}
		snprintf(buf, n, "cgroup %s; %s; v2 controllers: %s",
			 l->cgroup_version == 3 ? "v1+v2" : l->cgroup_version == 2 ? "v2" :
			 l->cgroup_version == 1 ? "v1" : "none writable",
			 l->cgroup_detail,
			 *l->cgroup_v2_controllers ? l->cgroup_v2_controllers : "none");
		break;
	case SL_JAIL_OVERLAY:
		snprintf(buf, n, "%s", *l->overlay_error ? l->overlay_error :
			 "the worktree read-only below, a size-capped tmpfs above; under "
			 "the warm base a layer per candidate (see below)");
		break;
	case SL_JAIL_SECCOMP:
		snprintf(buf, n, "libseccomp filter, foreign architectures killed");
		break;
	default:
		break;
	}
	return buf;
}

/* How a candidate's layer holds jail.disk_mb (pipeline/apply/warm.c, validators/jail_layer.c). */
static const char *const disk_names[] = {
	[SL_JAIL_DISK_NONE] = "none", [SL_JAIL_DISK_TMPFS_ROOT] = "tmpfs-root",
	[SL_JAIL_DISK_TMPFS_USERNS] = "tmpfs-userns", [SL_JAIL_DISK_MEASURED] = "measured",
};

static const char *disk_detail(const sl_jail_layers *l, char *buf, size_t n)
{
	switch (l->disk) {
	case SL_JAIL_DISK_TMPFS_ROOT:
	case SL_JAIL_DISK_TMPFS_USERNS:
		snprintf(buf, n, "a tmpfs of disk_mb MiB each, %s: a write beyond it fails "
			 "while the gate runs (No space left on device)",
			 l->disk == SL_JAIL_DISK_TMPFS_ROOT ? "mounted by root" :
			 "in a user namespace of its own");
		break;
	case SL_JAIL_DISK_MEASURED:
		snprintf(buf, n, "a host directory each, measured after every gate: a gate "
			 "that writes more fails, but only afterwards, so while it runs it may "
			 "fill the host's disk (%s)", *l->disk_error ? l->disk_error : "no tmpfs");
		break;
	default:
		snprintf(buf, n, "none: no overlay here (a worktree per candidate, no cap)");
		break;
	}
	return buf;
}

/* How jail.memory_mb holds here (validators/jail.c). */
static const char *memory_detail(const sl_jail_layers *l)
{
	return (l->available & SL_JAIL_CG_MEMORY) ?
		"a cgroup for the whole jail; a gate it kills says 'killed: out of memory'" :
		"per process only (RLIMIT_DATA), and only where jail.unenforced names "
		"memory; no memory cgroup for this user";
}

/* What `warm_base: auto` makes of this machine (README, "Warm base"). */
static const char *warm_mode(const sl_jail_layers *l)
{
	return (l->available & SL_JAIL_OVERLAY) ? "warm base under an overlay" :
		"a worktree per candidate (no overlay)";
}

/*
 * The settings that decide user namespaces here, one line each, and what
 * a Kubernetes pod or a Slurm node needs: what to change when the minimum
 * is missing (jail_host.c).
 */
static void print_userns(const sl_jail_layers *l)
{
	sl_jail_hint h[8];
	size_t n = sl_jail_userns_hints(h, sizeof(h) / sizeof(*h));
	const char *where = sl_jail_where();

	printf("user namespaces: %s\n", (l->available & SL_JAIL_USERNS) ? "yes" : "no");
	for (size_t i = 0; i < n; i++)
		printf("  %s = %s%s%s\n", h[i].name, h[i].value,
		       h[i].blocks ? ": refuses them; enable: " : "", h[i].blocks ? h[i].fix : "");
	if (!n)
		printf("  no setting of user namespaces in /proc/sys here\n");
	if (*where)
		printf("  %s: %s\n", where, sl_jail_where_fix(where));
}

static json_t *userns_json(const sl_jail_layers *l)
{
	json_t *o = json_object(), *a = json_array();
	sl_jail_hint h[8];
	size_t n = sl_jail_userns_hints(h, sizeof(h) / sizeof(*h));
	sl_buf why = SL_BUF_INIT;

	json_object_set_new(o, "available", json_boolean(l->available & SL_JAIL_USERNS));
	for (size_t i = 0; i < n; i++) {
		json_t *e = json_object();

		json_object_set_new(e, "name", json_string(h[i].name));
		json_object_set_new(e, "value", json_string(h[i].value));
		json_object_set_new(e, "blocks", json_boolean(h[i].blocks));
		json_object_set_new(e, "enable", json_string(h[i].fix));
		json_array_append_new(a, e);
	}
	json_object_set_new(o, "settings", a);
	if (!(l->available & SL_JAIL_USERNS)) {
		sl_jail_userns_why(&why, l->userns_errno);
		json_object_set_new(o, "why", json_string(why.buf));
	}
	json_object_set_new(o, "where", json_string(sl_jail_where()));
	json_object_set_new(o, "where_needs", json_string(sl_jail_where_fix(sl_jail_where())));
	sl_buf_release(&why);
	return o;
}

struct doctor_opts {
	int json;
};

static int doctor_main(const sl_command *self, void *opts, const sl_opt_args *args)
{
	const struct doctor_opts *o = opts;
	sl_jail_layers l;
	sl_err err = SL_ERR_INIT;
	char buf[1024];
	int ok;

	if (args->n)
		return sl_cmd_usage(self, "expected no arguments");
	if (sl_jail_probe(&l, &err))
		return sl_cmd_fail(&err);
	ok = (l.available & SL_JAIL_MINIMUM) == SL_JAIL_MINIMUM;

	if (o->json) {
		json_t *root = json_object(), *layers = json_object();
		char *s;

		for (unsigned i = 0; i < SL_JAIL_NLAYERS; i++) {
			json_t *e = json_object();

			json_object_set_new(e, "active", json_boolean(l.available & (1u << i)));
			json_object_set_new(e, "detail",
					    json_string(detail(&l, 1u << i, buf, sizeof(buf))));
			json_object_set_new(layers, sl_jail_layer_name(1u << i), e);
		}
		json_object_set_new(root, "euid", json_integer((json_int_t)geteuid()));
		json_object_set_new(root, "layers", layers);
		json_object_set_new(root, "landlock_abi", json_integer(l.landlock_abi));
		json_object_set_new(root, "cgroup_version", json_integer(l.cgroup_version));
		json_object_set_new(root, "minimum", json_boolean(ok));
		json_object_set_new(root, "userns", userns_json(&l));
		json_object_set_new(root, "warm_base", json_string(warm_mode(&l)));
		json_object_set_new(root, "disk", json_string(disk_names[l.disk]));
		json_object_set_new(root, "disk_detail", json_string(disk_detail(&l, buf,
										  sizeof(buf))));
		json_object_set_new(root, "memory_detail", json_string(memory_detail(&l)));
		s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		puts(s);
		free(s);
		json_decref(root);
	} else {
		printf("jail layers for uid %u:\n", (unsigned)geteuid());
		for (unsigned i = 0; i < SL_JAIL_NLAYERS; i++) {
			const char *d = detail(&l, 1u << i, buf, sizeof(buf));

			printf("  %-14s %-3s%s%s\n", sl_jail_layer_name(1u << i),
			       (l.available & (1u << i)) ? "yes" : "no", *d ? "  " : "", d);
		}
		printf("minimum for gates (userns, mntns, pidns, netns): %s\n",
		       ok ? "yes" : "no: gates refuse to run without --unsafe");
		print_userns(&l);
		printf("candidates' trees (jail.warm_base: auto): %s\n", warm_mode(&l));
		printf("candidates' layers (jail.disk_mb): %s\n", disk_detail(&l, buf, sizeof(buf)));
		printf("memory (jail.memory_mb): %s\n", memory_detail(&l));
	}
	return ok ? SL_EXIT_OK : SL_EXIT_NOTHING;
}

static const sl_option doctor_options[] = {
	CMD_OPT_JSON(struct doctor_opts, "print the layers as JSON"),
	SL_OPT_END(),
};

const sl_command cmd_doctor = {
	.name = "doctor",
	.summary = "show which layers of the jail work on this machine",
	.usage = "usage: sluice doctor [--json]\n",
	.about = "Probe each layer of the jail (namespaces, private root, overlay, seccomp,\n"
		"Landlock, cgroups, rlimits) as the current user and print what works.\n",
	.options = doctor_options,
	.notes = "Exit status: 0 if user, mount, pid and network namespaces work (the\n"
		"minimum for gates), 1 if not: run and baseline then refuse to run gates\n"
		"unless --unsafe.\n",
	.opts_size = sizeof(struct doctor_opts),
	.fn = doctor_main,
};

/*
 * jail_layer.c - a candidate's layer for an ordinary user: a size-capped
 * tmpfs that no host path names, held by a descriptor of the run.
 *
 * Root gives each candidate's layer (the overlay's upper directory u/ and
 * its work directory w/, pipeline/apply/warm.c) a tmpfs of disk_mb MiB
 * mounted on the host, so a gate that writes more gets ENOSPC while it
 * runs.  An ordinary user may not mount on the host, but may mount a tmpfs
 * inside a user namespace of its own.  The layer must outlive each jail,
 * though: a candidate's gates run in turn, each on what the ones before it
 * left (the build's objects for the tests).  So:
 *
 *   sl_jail_layer_new() clones a short-lived child into a new user and
 *     mount namespace (mapping only the caller's own uid and gid), which
 *     makes a detached tmpfs of cap_mb MiB with the new mount API (fsopen,
 *     fsconfig, fsmount: a mount in no namespace, no mount point) and sends
 *     its descriptor up a socket pair.  The child exits; the descriptor
 *     keeps the tmpfs (and the namespace that owns it) alive.  The caller
 *     makes u/ and w/ and names the layer "/proc/PID/fd/N": this process's
 *     descriptor, a path that works from here (the candidate's changes are
 *     written into u/ through it) and from the jail spawner (a process of
 *     the same user).
 *
 *   sl_jail_run() with such a layer (sl_jail_layer_held) opens it, and pid 1
 *     of the jail, in its own namespaces, clones the mount into them
 *     (open_tree OPEN_TREE_CLONE: overlayfs takes no layer from a mount of
 *     another namespace), then mounts the overlay with upperdir and workdir
 *     on the clone.  The clone is the same tmpfs: what a gate writes stays
 *     for the next gate, and a write beyond the cap fails with ENOSPC.
 *
 *   sl_jail_layer_drop() closes the descriptor: the tmpfs goes with the
 *     last reference (the jails that used it are gone by then).  A run
 *     killed with -9 leaves nothing behind: the kernel closes the
 *     descriptor.
 *
 * Nothing reads the layer from the host but the writing of the candidate's
 * changes before its gates and gate.c's statfs (a full layer names the
 * cap); reports come back through the jail's collect pipe.  A kernel or
 * policy that refuses any of this (no unprivileged user namespaces, no
 * fsopen before Linux 5.2, no clone of a detached mount) makes
 * sl_jail_layer_new() or the jail's probe fail; warm.c then falls back to
 * a host directory measured after each gate, and `sluice doctor` says so.
 *
 * The child is made with the raw clone system call and makes only system
 * calls on memory prepared before it (as jail.c's children: the caller may
 * be multi-threaded).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"
#include "validators/jail.h"

/* What the child prepares: every byte it writes, made before the clone. */
struct layer_child {
	char uid_map[64], gid_map[64], size[32];
	int sock;
};

/* What the child reports when a step fails. */
struct layer_fail {
	int err;
	char what[60];
};

static _Noreturn void child_fail(int sock, const char *what)
{
	struct layer_fail f;
	size_t n = strlen(what);

	memset(&f, 0, sizeof(f));
	f.err = errno;
	memcpy(f.what, what, n < sizeof(f.what) ? n : sizeof(f.what) - 1);
	if (write(sock, &f, sizeof(f)) < 0) {
		/* the caller is gone */
	}
	_exit(1);
}

static void child_write(int sock, const char *path, const char *body)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0 || write(fd, body, strlen(body)) < 0)
		child_fail(sock, path);
	close(fd);
}

static _Noreturn void layer_child(const struct layer_child *c)
{
	int fs, mnt;

	child_write(c->sock, "/proc/self/setgroups", "deny");
	child_write(c->sock, "/proc/self/uid_map", c->uid_map);
	child_write(c->sock, "/proc/self/gid_map", c->gid_map);
	if ((fs = fsopen("tmpfs", FSOPEN_CLOEXEC)) < 0)
		child_fail(c->sock, "fsopen tmpfs");
	if (fsconfig(fs, FSCONFIG_SET_STRING, "size", c->size, 0) ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "mode", "0755", 0) ||
	    fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0))
		child_fail(c->sock, "make the tmpfs");
	mnt = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	if (mnt < 0)
		child_fail(c->sock, "fsmount");
	if (sl_send_fd(c->sock, 'L', mnt))
		child_fail(c->sock, "send the tmpfs");
	_exit(0);
}

/* The descriptor the child sent on sock, or -1 with err set from its report. */
static int receive_layer(int sock, sl_err *err)
{
	union {
		struct layer_fail f;
		char byte;
	} u;
	int fd;
	ssize_t n = sl_recv_fd(sock, &u, sizeof(u), &fd);

	if (fd >= 0)
		return fd;
	if (n == (ssize_t)sizeof(u.f)) {
		u.f.what[sizeof(u.f.what) - 1] = '\0';
		sl_err_set(err, SL_ERROR, "cannot make the layer's tmpfs in a user namespace: "
			   "%s: %s", u.f.what, strerror(u.f.err));
	} else {
		sl_err_set(err, SL_ERROR, "cannot make the layer's tmpfs in a user namespace: "
			   "%s", n < 0 ? strerror(errno) : "its helper said nothing");
	}
	return -1;
}

static int layer_make(char **path_out, unsigned cap_mb, sl_err *err)
{
	struct layer_child c;
	int sv[2] = { -1, -1 }, fd = -1, ret = SL_ERROR, st;
	char path[64];
	pid_t pid;

	*path_out = NULL;
	memset(&c, 0, sizeof(c));
	snprintf(c.uid_map, sizeof(c.uid_map), "%u %u 1\n", (unsigned)geteuid(),
		 (unsigned)geteuid());
	snprintf(c.gid_map, sizeof(c.gid_map), "%u %u 1\n", (unsigned)getegid(),
		 (unsigned)getegid());
	snprintf(c.size, sizeof(c.size), "%um", cap_mb ? cap_mb : 1);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		sl_err_set(err, SL_ERROR, "cannot make the layer: socketpair: %s", strerror(errno));
		goto done;
	}
	c.sock = sv[1];
	errno = EPERM;
	pid = sl_jail_test_no_userns() ? -1 :
		(pid_t)syscall(SYS_clone, CLONE_NEWUSER | CLONE_NEWNS | SIGCHLD,
			       NULL, NULL, NULL, NULL);
	if (pid == 0)
		layer_child(&c);
	if (pid < 0) {
		sl_err_set(err, SL_ERROR, "cannot make the layer: a user namespace: %s",
			   strerror(errno));
		goto done;
	}
	close(sv[1]);
	sv[1] = -1;
	fd = receive_layer(sv[0], err);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (fd < 0)
		goto done;
	if (mkdirat(fd, "u", 0755) || mkdirat(fd, "w", 0755)) {
		sl_err_set(err, SL_ERROR, "cannot make the layer's u/ and w/: %s",
			   strerror(errno));
		goto done;
	}
	snprintf(path, sizeof(path), "/proc/%ld/fd/%d", (long)getpid(), fd);
	*path_out = sl_xstrdup(path);
	fd = -1;
	ret = 0;
done:
	if (fd >= 0)
		close(fd);
	if (sv[0] >= 0)
		close(sv[0]);
	if (sv[1] >= 0)
		close(sv[1]);
	return ret;
}

/*
 * Once per process: does a jail take such a layer?  A kernel may make the
 * tmpfs and still refuse to clone it into the jail (a detached mount of
 * another namespace), or give the overlay no user.* attributes on it
 * (tmpfs has them since Linux 6.6: without them a directory of the lower
 * layer cannot be replaced by a new one), so one jail writes a file
 * through a layer of 1 MiB, replaces a directory of the lower layer, and
 * the file must show in u/.  SLUICE_TEST_NO_LAYER_TMPFS=1 in the
 * environment stands for a kernel that refuses (the fallback's tests).
 */
static pthread_once_t works_once = PTHREAD_ONCE_INIT;
static char works_error[256];
static void check_works(void)
{
	const char *tmp = getenv("TMPDIR");
	char *dir = sl_path_join(tmp && *tmp == '/' ? tmp : "/tmp", "sluice-layer-XXXXXX");
	char *layer = NULL, *probe = NULL;
	sl_jail_opts o = SL_JAIL_OPTS_INIT;
	sl_jail_result r;
	sl_err e = SL_ERR_INIT;
	struct stat st;

	sl_jail_result_init(&r);
	if (getenv("SLUICE_TEST_NO_LAYER_TMPFS") &&
	    !strcmp(getenv("SLUICE_TEST_NO_LAYER_TMPFS"), "1")) {
		sl_err_set(&e, SL_ERROR, "refused (SLUICE_TEST_NO_LAYER_TMPFS=1)");
		goto done;
	}
	if (!mkdtemp(dir)) {
		snprintf(works_error, sizeof(works_error), "cannot create '%s': %s", dir,
			 strerror(errno));
		free(dir);
		dir = NULL;
		goto done;
	}
	probe = sl_path_join(dir, "d");
	if (mkdir(probe, 0755)) {
		sl_err_set(&e, SL_ERROR, "cannot create '%s': %s", probe, strerror(errno));
		goto done;
	}
	free(probe);
	probe = sl_path_join(dir, "d/f");
	if (sl_write_file(probe, "x", 1, &e))
		goto done;
	free(probe);
	probe = NULL;
	if (layer_make(&layer, 1, &e))
		goto done;
	o.workdir = dir;
	o.layer = layer;
	o.command = "echo x >probe && rm -r d && mkdir d && test ! -e d/f";
	o.timeout_ms = 30000;
	o.accept = SL_JAIL_CG_MEMORY | SL_JAIL_CG_CPU;
	if (sl_jail_run(&r, &o, &e))
		goto done;
	probe = sl_path_join(layer, "u/probe");
	if (!r.exited || r.exit_status || lstat(probe, &st))
		snprintf(works_error, sizeof(works_error), "a jail could not write through it "
			 "(exit %d): %.150s", r.exited ? r.exit_status : -1, r.output.buf);
done:
	if (e.code)
		snprintf(works_error, sizeof(works_error), "%.200s", e.msg);
	sl_jail_result_release(&r);
	sl_jail_layer_drop(layer);
	free(layer);
	free(probe);
	if (dir)
		sl_rm_rf(dir, NULL);
	free(dir);
}

int sl_jail_layer_new(char **path_out, unsigned cap_mb, sl_err *err)
{
	*path_out = NULL;
	pthread_once(&works_once, check_works);
	if (*works_error)
		return sl_err_set(err, SL_ERROR, "%s", works_error);
	return layer_make(path_out, cap_mb, err);
}

int sl_jail_layer_held(const char *path, long *pid_out, int *fd_out)
{
	long pid;
	int fd, n = 0;

	if (!path || sscanf(path, "/proc/%ld/fd/%d%n", &pid, &fd, &n) != 2 || path[n] ||
	    pid <= 0 || fd < 0)
		return 0;
	if (pid_out)
		*pid_out = pid;
	if (fd_out)
		*fd_out = fd;
	return 1;
}

int sl_jail_layer_drop(const char *path)
{
	long pid;
	int fd;

	if (!sl_jail_layer_held(path, &pid, &fd) || pid != (long)getpid())
		return 0;
	close(fd);
	return 1;
}

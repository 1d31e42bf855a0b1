/*
 * sysfilter.c - build the jail's system-call filter once, install it cheaply.
 *
 * sl_seccomp_filter() builds the rules with libseccomp, exports the BPF
 * program into a memfd (libseccomp 2.5 has no export to memory), reads it
 * back and caches it per flavour under a mutex.  sl_seccomp_install() is the
 * seccomp(2) call the payload makes just before exec.
 *
 * Errno or kill?  A denied call returns an errno wherever a program may try
 * it for a legitimate reason and cope with the refusal: build systems probe
 * for io_uring, test suites for namespaces, and
 * "operation not permitted" is what they would get as an unprivileged user
 * on a locked-down host anyway, so they fall back or fail visibly in the
 * gate's log (a verdict, not a crash).  clone3 gets ENOSYS so glibc falls
 * back to clone, whose flags the filter can inspect (clone3 passes them in
 * memory, out of BPF's reach).  Sockets of other families get EAFNOSUPPORT,
 * what a kernel without that protocol answers, which resolvers and test
 * frameworks treat as "not available here".  Only system calls made through
 * a foreign ABI (i386 int 0x80, x32) kill the process: no toolchain needs
 * them and they would bypass every rule written for the native numbers.
 *
 * ptrace is allowed: sanitizers' leak checkers (LeakSanitizer stops the
 * process's threads with it) and debuggers in test suites need it, and the
 * jail's pid namespace holds only the jail's own processes, all of one
 * unprivileged uid, so nothing else can be traced (since Linux 4.8 seccomp
 * checks a traced call again after the tracer changed it).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/seccomp.h>
#include <seccomp.h>

#include "validators/sysfilter.h"
#include "common/util.h"

#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif
#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP 0x02000000
#endif

/* Denied with EPERM, by name (names unknown to this libseccomp are skipped). */
static const char *const eperm_calls[] = {
	/* reading or steering other processes */
	"process_vm_readv", "process_vm_writev", "kcmp",
	/* the mount family: the jail's file system view is fixed */
	"mount", "umount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree",
	"fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
	/* new namespaces */
	"unshare", "setns",
	/* large kernel attack surface, no use in a build or test */
	"io_uring_setup", "io_uring_enter", "io_uring_register", "bpf", "perf_event_open",
	"keyctl", "add_key", "request_key", "userfaultfd", "open_by_handle_at",
	/* need privileges the payload lacks; denied anyway in case it gains them */
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
	"create_module", "reboot", "swapon", "swapoff", "acct", "iopl", "ioperm",
	"quotactl", "quotactl_fd", "syslog", "lookup_dcookie", "fanotify_init", "vhangup",
	"nfsservctl", "uselib", "_sysctl",
};

static const unsigned long clone_ns_flags[] = {
	CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID,
	CLONE_NEWNET, CLONE_NEWCGROUP,
};

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sock_fprog cache[2];

static int add(scmp_filter_ctx ctx, uint32_t action, int nr, unsigned n,
	       const struct scmp_arg_cmp *cmp)
{
	return seccomp_rule_add_exact_array(ctx, action, nr, n, cmp);
}

static int add_rules(scmp_filter_ctx ctx, unsigned flags)
{
	const uint32_t eperm = SCMP_ACT_ERRNO(EPERM);
	const uint32_t enosys = SCMP_ACT_ERRNO(ENOSYS);
	const uint32_t eafnosupport = SCMP_ACT_ERRNO(EAFNOSUPPORT);
	const int sock_calls[] = { SCMP_SYS(socket), SCMP_SYS(socketpair) };
	const uint64_t ttyioc[] = { TIOCSTI, TIOCLINUX };
	int rc;

	for (size_t i = 0; i < sizeof(eperm_calls) / sizeof(*eperm_calls); i++) {
		int nr = seccomp_syscall_resolve_name(eperm_calls[i]);

		/* unknown here, or a pseudo-number of a call this ABI lacks (umount) */
		if (nr == __NR_SCMP_ERROR || nr < 0)
			continue;
		if ((rc = add(ctx, eperm, nr, 0, NULL)))
			return rc;
	}
	for (size_t i = 0; i < sizeof(clone_ns_flags) / sizeof(*clone_ns_flags); i++) {
		struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_MASKED_EQ, clone_ns_flags[i],
						 clone_ns_flags[i]);

		if ((rc = add(ctx, eperm, SCMP_SYS(clone), 1, &c)))
			return rc;
	}
	if ((rc = add(ctx, enosys, SCMP_SYS(clone3), 0, NULL)))
		return rc;
	/*
	 * The kernel reads the request as an unsigned int: a value with high
	 * bits set (TIOCSTI | 1 << 32) is still TIOCSTI, so compare the low 32
	 * bits only.
	 */
	for (size_t i = 0; i < 2; i++) {
		struct scmp_arg_cmp c = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, ttyioc[i]);

		if ((rc = add(ctx, eperm, SCMP_SYS(ioctl), 1, &c)))
			return rc;
	}
	/*
	 * socket(family != AF_UNIX).  The comparisons are on 64 bits: garbage
	 * in the high half only ever denies.  With INET allowed, libseccomp
	 * cannot put three "!=" on one argument in a rule, and rules are ORed,
	 * so the denied set is spelt as ranges: 0, 3..9 and above 10.
	 */
	for (size_t i = 0; i < 2; i++) {
		struct scmp_arg_cmp c;

		if (!(flags & SL_SECCOMP_ALLOW_INET)) {
			c = (struct scmp_arg_cmp)SCMP_A0(SCMP_CMP_NE, AF_UNIX);
			if ((rc = add(ctx, eafnosupport, sock_calls[i], 1, &c)))
				return rc;
			continue;
		}
		c = (struct scmp_arg_cmp)SCMP_A0(SCMP_CMP_GT, AF_INET6);
		if ((rc = add(ctx, eafnosupport, sock_calls[i], 1, &c)))
			return rc;
		for (uint64_t fam = 0; fam < AF_INET6; fam++) {
			if (fam == AF_UNIX || fam == AF_INET)
				continue;
			c = (struct scmp_arg_cmp)SCMP_A0(SCMP_CMP_EQ, fam);
			if ((rc = add(ctx, eafnosupport, sock_calls[i], 1, &c)))
				return rc;
		}
	}
	return 0;
}

static int build(struct sock_fprog *out, unsigned flags, sl_err *err)
{
	scmp_filter_ctx ctx = NULL;
	int ret = SL_ERROR, rc, fd = -1;
	sl_buf b = SL_BUF_INIT;
	const char *step = "create the filter";

	if (!(ctx = seccomp_init(SCMP_ACT_ALLOW))) {
		rc = -ENOMEM;
		goto done;
	}
	step = "set the bad-architecture action";
	/* x86-64 filters of libseccomp also send x32 numbers to this action */
	if ((rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS)))
		goto done;
	step = "add the rules";
	if ((rc = add_rules(ctx, flags)))
		goto done;
	step = "export the filter";
	if ((fd = (int)syscall(SYS_memfd_create, "sluice-seccomp", MFD_CLOEXEC)) < 0) {
		rc = -errno;
		goto done;
	}
	if ((rc = seccomp_export_bpf(ctx, fd)))
		goto done;
	if (lseek(fd, 0, SEEK_SET) < 0 || sl_read_fd(&b, fd, err)) {
		rc = -errno;
		goto done;
	}
	if (!b.len || b.len % sizeof(struct sock_filter) ||
	    b.len / sizeof(struct sock_filter) > BPF_MAXINSNS) {
		rc = -EINVAL;
		goto done;
	}
	out->len = (unsigned short)(b.len / sizeof(struct sock_filter));
	out->filter = (struct sock_filter *)sl_buf_detach(&b, NULL);
	ret = 0;
done:
	if (ret)
		sl_err_set(err, SL_ERROR, "seccomp: cannot %s: %s", step,
			   strerror(rc < 0 ? -rc : EINVAL));
	if (fd >= 0)
		close(fd);
	sl_buf_release(&b);
	seccomp_release(ctx);
	return ret;
}

int sl_seccomp_filter(const struct sock_fprog **out, unsigned flags, sl_err *err)
{
	struct sock_fprog *slot = &cache[(flags & SL_SECCOMP_ALLOW_INET) ? 1 : 0];
	int ret = 0;

	pthread_mutex_lock(&cache_lock);
	if (!slot->filter)
		ret = build(slot, flags, err);
	pthread_mutex_unlock(&cache_lock);
	*out = ret ? NULL : slot;
	return ret;
}

int sl_seccomp_install(const struct sock_fprog *prog)
{
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, prog);
}

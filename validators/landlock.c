/*
 * landlock.c - Landlock rulesets through the raw system calls.
 *
 * glibc 2.36 has no wrappers and Debian 12's kernel headers stop at ABI 2,
 * so the newer access bits and the larger ruleset attribute (network
 * rights, ABI 4; scopes, ABI 6) are spelt out here.  The attribute is
 * passed with the size the running ABI understands, so one binary works on
 * every kernel from 5.13 on.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/landlock.h>

#include "validators/landlock.h"

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#endif
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif

/* struct landlock_ruleset_attr as of ABI 6 */
struct ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

#define FS_READ (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | \
		 LANDLOCK_ACCESS_FS_READ_DIR)
#define FS_FILE (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | \
		 LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE | \
		 LANDLOCK_ACCESS_FS_IOCTL_DEV)
/* The rights of ABI 1: bits 0-12. */
#define FS_ABI1 ((1ULL << 13) - 1)

int sl_landlock_abi(void)
{
	static int abi = -1;
	int v;

	if (abi >= 0)
		return abi;
	v = (int)syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	abi = v > 0 ? v : 0;   /* ENOSYS, EOPNOTSUPP (disabled at boot) */
	return abi;
}

static uint64_t fs_handled(int abi)
{
	uint64_t fs = FS_ABI1;

	if (abi >= 2)
		fs |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		fs |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		fs |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return fs;
}

static int add_path(int rs, const char *path, uint64_t access)
{
	struct landlock_path_beneath_attr pb;
	int fd = open(path, O_PATH | O_CLOEXEC), rc, e;
	struct stat st;

	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	/* on a file only the rights that apply to files are accepted */
	if (!fstat(fd, &st) && !S_ISDIR(st.st_mode))
		access &= FS_FILE;
	memset(&pb, 0, sizeof(pb));
	pb.allowed_access = access;
	pb.parent_fd = fd;
	rc = (int)syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0);
	e = errno;
	close(fd);
	errno = e;
	return rc;
}

int sl_landlock_apply(int abi, const char *const *rw_paths, const char *const *dev_paths,
		      int allow_inet)
{
	struct ruleset_attr ra;
	size_t size = sizeof(uint64_t);
	uint64_t fs = fs_handled(abi), dev;
	int rs, e;

	if (abi <= 0) {
		errno = EOPNOTSUPP;
		return -1;
	}
	memset(&ra, 0, sizeof(ra));
	ra.handled_access_fs = fs;
	if (abi >= 4) {
		size = 2 * sizeof(uint64_t);
		if (!allow_inet)
			ra.handled_access_net = LANDLOCK_ACCESS_NET_BIND_TCP |
				LANDLOCK_ACCESS_NET_CONNECT_TCP;
	}
	if (abi >= 6) {
		size = sizeof(ra);
		ra.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL;
	}
	rs = (int)syscall(SYS_landlock_create_ruleset, &ra, size, 0);
	if (rs < 0)
		return -1;
	dev = FS_READ | LANDLOCK_ACCESS_FS_WRITE_FILE |
		(fs & (LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV));
	if (add_path(rs, "/", FS_READ))
		goto fail;
	for (size_t i = 0; dev_paths && dev_paths[i]; i++)
		if (add_path(rs, dev_paths[i], dev))
			goto fail;
	for (size_t i = 0; rw_paths && rw_paths[i]; i++)
		if (add_path(rs, rw_paths[i], fs))
			goto fail;
	if (syscall(SYS_landlock_restrict_self, rs, 0))
		goto fail;
	close(rs);
	return 0;
fail:
	e = errno;
	close(rs);
	errno = e;
	return -1;
}

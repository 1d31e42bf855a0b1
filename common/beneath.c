/*
 * beneath.c - openat2-confined reads of candidate-controlled files.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "common/beneath.h"
#include "common/util.h"
#include "common/caps.h"

/* openat2 of rel beneath root with flags; an fd or a negative SL_E* code. */
static int open_confined(const char *root, const char *rel, uint64_t flags, sl_err *err)
{
	struct open_how how;
	int dfd, fd;

	while (*rel == '/')
		rel++;
	dfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (dfd < 0)
		return sl_err_set(err, SL_ERROR, "cannot open '%s': %s", root, strerror(errno));
	memset(&how, 0, sizeof(how));
	how.flags = flags;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
		RESOLVE_NO_XDEV;
	fd = (int)syscall(SYS_openat2, dfd, rel, &how, sizeof(how));
	close(dfd);
	if (fd < 0) {
		int e = errno;

		if (e == ENOENT)
			return sl_err_set(err, SL_ENOTFOUND, "'%s' does not exist", rel);
		if (e == EXDEV || e == ELOOP || e == EACCES || e == EPERM)
			return sl_err_set(err, SL_EREFUSED, "refusing to read '%s': %s", rel,
					  e == ELOOP ? "it passes through a symbolic link" :
					  e == EXDEV ? "it leaves the directory" : strerror(e));
		return sl_err_set(err, SL_ERROR, "cannot open '%s': %s", rel, strerror(e));
	}
	return fd;
}

int sl_opendir_beneath(const char *root, const char *rel, sl_err *err)
{
	return open_confined(root, *rel ? rel : ".",
			     O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW, err);
}

int sl_open_beneath(const char *root, const char *rel, sl_err *err)
{
	struct stat st;
	int fd = open_confined(root, rel, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, err);

	if (fd < 0)
		return fd;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return sl_err_set(err, SL_EREFUSED, "refusing to read '%s': not a regular file", rel);
	}
	return fd;
}

int sl_read_beneath(sl_buf *out, const char *root, const char *rel, size_t cap, sl_err *err)
{
	size_t old_cap = out->cap;
	int fd = sl_open_beneath(root, rel, err), ret;

	if (fd < 0)
		return fd;
	out->cap = out->len + (cap ? cap : SL_CAP_BENEATH_BYTES);
	ret = sl_read_fd(out, fd, err);
	out->cap = old_cap;
	close(fd);
	return ret;
}

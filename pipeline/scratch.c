/*
 * scratch.c - the scratch-root policy (scratch.h): $TMPDIR, else a roomy
 * /dev/shm, else /tmp, with a directory per user below it.
 */
#include <stdlib.h>
#include <unistd.h>
#include <linux/magic.h>
#include <sys/vfs.h>

#include "common/buf.h"
#include "pipeline/scratch.h"

#define SHM_DIR "/dev/shm"
#define SHM_MIN_FREE (1ull << 30)

/* 1 if dir is a tmpfs we may write with at least SHM_MIN_FREE bytes free. */
static int roomy_tmpfs(const char *dir)
{
	struct statfs sf;

	if (access(dir, W_OK | X_OK) || statfs(dir, &sf) || sf.f_type != TMPFS_MAGIC)
		return 0;
	return (unsigned long long)sf.f_bavail * (unsigned long long)sf.f_bsize >= SHM_MIN_FREE;
}

static char *uid_dir(const char *dir)
{
	sl_buf b = SL_BUF_INIT;

	sl_buf_addf(&b, "%s/sluice-%ld", dir, (long)getuid());
	return sl_buf_detach(&b, NULL);
}

char *sl_default_scratch_root(void)
{
	const char *tmp = getenv("TMPDIR");

	if (tmp && *tmp)
		return uid_dir(tmp);
	return uid_dir(roomy_tmpfs(SHM_DIR) ? SHM_DIR : "/tmp");
}

void sl_default_scratch_roots(sl_strvec *out)
{
	const char *tmp = getenv("TMPDIR");
	char *d;

	if (tmp && *tmp) {
		sl_strvec_push(out, (d = uid_dir(tmp)));
		free(d);
	}
	sl_strvec_push(out, (d = uid_dir(SHM_DIR)));
	free(d);
	sl_strvec_push(out, (d = uid_dir("/tmp")));
	free(d);
}

char *sl_scratch_root(const sl_spec *spec)
{
	char *root = spec->scratch ? NULL : sl_default_scratch_root();
	char *ret = sl_path_join(spec->scratch ? spec->scratch : root, spec->name);

	free(root);
	return ret;
}

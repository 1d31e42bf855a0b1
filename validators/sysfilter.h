/*
 * sysfilter.h - the jail's system-call filter.
 *
 * The filter is built once per process and flavour with libseccomp, in the
 * supervisor (it allocates), exported as classic BPF into memory and kept
 * for the life of the process.  The jail's payload installs it after
 * no-new-privileges with sl_seccomp_install(), a bare system call, because
 * between clone and exec nothing may call into glibc's allocator or
 * libseccomp.
 *
 * What it does (each choice explained in seccomp.c): every syscall is
 * allowed except
 *   process_vm_readv/writev, kcmp                                  EPERM
 *   mount, umount2, pivot_root, chroot, move_mount, open_tree,
 *     fsopen, fsconfig, fsmount, fspick, mount_setattr             EPERM
 *   unshare, setns, clone with any CLONE_NEW* flag                 EPERM
 *   clone3                                                         ENOSYS
 *   io_uring_setup/enter/register, bpf, perf_event_open,
 *     keyctl, add_key, request_key, userfaultfd,
 *     open_by_handle_at, kexec_*, *_module, reboot, swapon/off,
 *     acct, iopl, ioperm, quotactl, syslog, lookup_dcookie,
 *     fanotify_init, vhangup, personality                          EPERM
 *   ioctl TIOCSTI / TIOCLINUX (request compared on its low 32 bits) EPERM
 *   socket / socketpair of any family but AF_UNIX               EAFNOSUPPORT
 *     (unless SL_SECCOMP_ALLOW_INET: then AF_INET and AF_INET6 pass
 *     too; the jail's network namespace still reaches nothing)
 * and a system call of a foreign architecture (i386, x32) kills the whole
 * process (SIGSYS).
 */
#ifndef SL_SYSFILTER_H
#define SL_SYSFILTER_H

#include <linux/filter.h>

#include "common/err.h"

#define SL_SECCOMP_ALLOW_INET 1u   /* IPv4/IPv6 sockets (loopback of the jail) */

/*
 * The filter for these flags, built on first use (thread-safe).  *out is
 * borrowed, valid until the process exits.  SL_ERROR when libseccomp fails.
 */
int sl_seccomp_filter(const struct sock_fprog **out, unsigned flags, sl_err *err);

/*
 * Install prog on the calling thread (and the threads it creates).  Needs
 * no-new-privileges or CAP_SYS_ADMIN.  Async-signal-safe: one system call.
 * Returns 0, or -1 with errno set.
 */
int sl_seccomp_install(const struct sock_fprog *prog);

#endif

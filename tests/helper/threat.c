/*
 * threat - attacks that are easier in C than in sh, for the t42xx tests.
 *
 * Host side (listeners; each writes its port or "ready" to READYFILE, waits
 * at most SECONDS and prints what it received, or "nothing"):
 *   threat peer-tcp READYFILE SECONDS
 *   threat peer-udp READYFILE SECONDS
 *   threat peer-abstract NAME READYFILE SECONDS
 *
 * Inside the jail (each prints one line per attempt, "NAME ok" when the
 * attempt succeeded, "NAME denied: ERRNO" when it failed, and exits 0):
 *   threat connect-tcp PORT       threat send-udp PORT
 *   threat connect-abstract NAME  threat kill PID       threat ptrace PID
 *   threat ptrace-child           threat userns         threat mount
 *   threat tiocsti                (fds 0-2, /dev/tty, /proc/1/fd/0; with and
 *                                  without high bits in the request)
 *   threat fds                    (descriptors open above 2)
 *   threat euid                   (prints the effective uid)
 *   threat forkbomb MAX [TAG]     (forks paused children until fork fails or
 *                                  MAX; prints "forked N"; TAG, unused, gives
 *                                  the command line a test can look for)
 *   threat memhog PROCS MB        (PROCS processes each touch MB MiB, then
 *                                  sleep 1 s; prints "survivors N")
 *   threat inotify MAX GOFILE     (opens inotify instances, each watching ".",
 *                                  until one fails or MAX; prints "inotify N
 *                                  ERRNO" (or "inotify N max"), closes stdout,
 *                                  and holds them until GOFILE, a FIFO, ends)
 *
 * Host side, as the user who runs the jail:
 *   threat inotify-one            (one inotify_init1: "inotify ok" or
 *                                  "inotify denied: ERRNO")
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <dirent.h>
#include <unistd.h>

static int report(const char *what, int rc)
{
	if (rc < 0)
		printf("%s denied: %s\n", what, strerrorname_np(errno));
	else
		printf("%s ok\n", what);
	fflush(stdout);
	return 0;
}

static int write_ready(const char *file, const char *text)
{
	FILE *fp = fopen(file, "w");

	if (!fp)
		return -1;
	fputs(text, fp);
	return fclose(fp);
}

/* Wait for data on s (accepting first when listening); print it or "nothing". */
static int serve(int s, int listening, int seconds)
{
	struct pollfd pfd = { s, POLLIN, 0 };
	char buf[512];
	ssize_t n;
	int c = s;

	if (poll(&pfd, 1, seconds * 1000) <= 0) {
		printf("nothing\n");
		return 0;
	}
	if (listening && (c = accept(s, NULL, NULL)) < 0) {
		printf("nothing\n");
		return 0;
	}
	pfd.fd = c;
	if (poll(&pfd, 1, 1000) <= 0 || (n = read(c, buf, sizeof(buf) - 1)) <= 0) {
		printf("connected\n");
		return 0;
	}
	buf[n] = '\0';
	printf("got %s\n", buf);
	return 0;
}

static int peer_inet(int type, const char *ready, int seconds)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	char port[16];
	int s = socket(AF_INET, type, 0);

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s < 0 || bind(s, (struct sockaddr *)&sa, sizeof(sa)) ||
	    (type == SOCK_STREAM && listen(s, 4)) ||
	    getsockname(s, (struct sockaddr *)&sa, &sl))
		return perror("threat: peer"), 2;
	snprintf(port, sizeof(port), "%u\n", (unsigned)ntohs(sa.sin_port));
	if (write_ready(ready, port))
		return 2;
	return serve(s, type == SOCK_STREAM, seconds);
}

static socklen_t abstract_addr(struct sockaddr_un *su, const char *name)
{
	size_t n = strlen(name);

	memset(su, 0, sizeof(*su));
	su->sun_family = AF_UNIX;
	if (n > sizeof(su->sun_path) - 2)
		n = sizeof(su->sun_path) - 2;
	memcpy(su->sun_path + 1, name, n);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

static int peer_abstract(const char *name, const char *ready, int seconds)
{
	struct sockaddr_un su;
	socklen_t sl = abstract_addr(&su, name);
	int s = socket(AF_UNIX, SOCK_STREAM, 0);

	if (s < 0 || bind(s, (struct sockaddr *)&su, sl) || listen(s, 4))
		return perror("threat: peer-abstract"), 2;
	if (write_ready(ready, "ready\n"))
		return 2;
	return serve(s, 1, seconds);
}

static int connect_inet(int type, int port)
{
	struct sockaddr_in sa;
	int s = socket(AF_INET, type, 0);

	if (s < 0)
		return report(type == SOCK_STREAM ? "tcp" : "udp", -1);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((unsigned short)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (type == SOCK_STREAM) {
		if (connect(s, (struct sockaddr *)&sa, sizeof(sa)))
			return report("tcp", -1);
		return report("tcp", (int)write(s, "from-jail", 9));
	}
	return report("udp", (int)sendto(s, "from-jail", 9, 0, (struct sockaddr *)&sa,
					 sizeof(sa)));
}

static int connect_abstract(const char *name)
{
	struct sockaddr_un su;
	socklen_t sl = abstract_addr(&su, name);
	int s = socket(AF_UNIX, SOCK_STREAM, 0);

	if (s < 0 || connect(s, (struct sockaddr *)&su, sl))
		return report("abstract", -1);
	return report("abstract", (int)write(s, "from-jail", 9));
}

static int tiocsti(void)
{
	const char *paths[] = { "/dev/tty", "/proc/1/fd/0", "/proc/self/fd/0" };
	char c = 'X', what[64];
	int fds[8], n = 0;

	for (int fd = 0; fd < 3; fd++)
		fds[n++] = fd;
	for (size_t i = 0; i < sizeof(paths) / sizeof(*paths); i++) {
		int fd = open(paths[i], O_RDWR | O_NOCTTY);

		if (fd < 0) {
			snprintf(what, sizeof(what), "open %s", paths[i]);
			report(what, -1);
		} else {
			fds[n++] = fd;
		}
	}
	for (int i = 0; i < n; i++) {
		snprintf(what, sizeof(what), "tiocsti fd %d", fds[i]);
		report(what, ioctl(fds[i], TIOCSTI, &c));
		snprintf(what, sizeof(what), "tiocsti-high fd %d", fds[i]);
		report(what, (int)syscall(SYS_ioctl, fds[i], (unsigned long)TIOCSTI | (1ul << 32),
					  &c));
	}
	return 0;
}

static int list_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int self = d ? dirfd(d) : -1, n = 0;

	while (d && (e = readdir(d))) {
		int fd = atoi(e->d_name);

		if (e->d_name[0] == '.' || fd <= 2 || fd == self)
			continue;
		printf("open fd %d\n", fd);
		n++;
	}
	if (d)
		closedir(d);
	printf("fds above 2: %d\n", n);
	return 0;
}

static int forkbomb(int max)
{
	static pid_t kids[20000];
	int n = 0;

	if (max > (int)(sizeof(kids) / sizeof(*kids)))
		max = (int)(sizeof(kids) / sizeof(*kids));
	for (; n < max; n++) {
		pid_t p = fork();

		if (p < 0)
			break;
		if (p == 0) {
			pause();
			_exit(0);
		}
		kids[n] = p;
	}
	printf("forked %d\n", n);
	for (int i = 0; i < n; i++)
		kill(kids[i], SIGKILL);
	while (wait(NULL) > 0)
		;
	return 0;
}

static int memhog(int procs, long mb)
{
	int survivors = 0;

	for (int i = 0; i < procs; i++) {
		if (fork() == 0) {
			size_t len = (size_t)mb << 20;
			char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (p == MAP_FAILED)
				_exit(1);
			for (size_t off = 0; off < len; off += 4096)
				p[off] = 1;
			sleep(1);
			_exit(0);
		}
	}
	for (int i = 0; i < procs; i++) {
		int st;

		if (wait(&st) > 0 && WIFEXITED(st) && !WEXITSTATUS(st))
			survivors++;
	}
	printf("survivors %d\n", survivors);
	return 0;
}

static int inotify_hold(int max, const char *gofile)
{
	int n = 0, fd = -1, e = 0;
	char buf[64];

	while (n < max) {
		fd = inotify_init1(IN_CLOEXEC);
		if (fd < 0 || inotify_add_watch(fd, ".", IN_MODIFY) < 0) {
			e = errno;
			break;
		}
		n++;
	}
	printf("inotify %d %s\n", n, e ? strerrorname_np(e) : "max");
	fflush(stdout);
	close(1);
	fd = open(gofile, O_RDONLY);
	while (fd >= 0 && read(fd, buf, sizeof(buf)) > 0)
		;
	return 0;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(cmd, "peer-tcp") && argc == 4)
		return peer_inet(SOCK_STREAM, argv[2], atoi(argv[3]));
	if (!strcmp(cmd, "peer-udp") && argc == 4)
		return peer_inet(SOCK_DGRAM, argv[2], atoi(argv[3]));
	if (!strcmp(cmd, "peer-abstract") && argc == 5)
		return peer_abstract(argv[2], argv[3], atoi(argv[4]));
	if (!strcmp(cmd, "connect-tcp") && argc == 3)
		return connect_inet(SOCK_STREAM, atoi(argv[2]));
	if (!strcmp(cmd, "send-udp") && argc == 3)
		return connect_inet(SOCK_DGRAM, atoi(argv[2]));
	if (!strcmp(cmd, "connect-abstract") && argc == 3)
		return connect_abstract(argv[2]);
	if (!strcmp(cmd, "kill") && argc == 3)
		return report("kill", kill(atoi(argv[2]), SIGKILL));
	if (!strcmp(cmd, "ptrace") && argc == 3)
		return report("ptrace", (int)ptrace(PTRACE_ATTACH, atoi(argv[2]), NULL, NULL));
	if (!strcmp(cmd, "ptrace-child")) {
		pid_t p = fork();
		int rc;

		if (p == 0) {
			pause();
			_exit(0);
		}
		rc = (int)ptrace(PTRACE_ATTACH, p, NULL, NULL);
		report("ptrace-child", rc);
		kill(p, SIGKILL);
		return 0;
	}
	if (!strcmp(cmd, "userns")) {
		report("unshare-user", unshare(CLONE_NEWUSER));
		return report("clone-user", (int)syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD,
							  NULL, NULL, NULL, NULL) == 0 ?
			      (_exit(0), 0) : -1);
	}
	if (!strcmp(cmd, "mount")) {
		report("mount-tmpfs", mount("none", "/tmp", "tmpfs", 0, NULL));
		report("remount-root", mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND, NULL));
		return report("umount-src", umount2("/src", MNT_DETACH));
	}
	if (!strcmp(cmd, "tiocsti"))
		return tiocsti();
	if (!strcmp(cmd, "fds"))
		return list_fds();
	if (!strcmp(cmd, "euid"))
		return printf("euid %d\n", (int)geteuid()) < 0;
	if (!strcmp(cmd, "forkbomb") && (argc == 3 || argc == 4))
		return forkbomb(atoi(argv[2]));
	if (!strcmp(cmd, "memhog") && argc == 4)
		return memhog(atoi(argv[2]), atol(argv[3]));
	if (!strcmp(cmd, "inotify") && argc == 4)
		return inotify_hold(atoi(argv[2]), argv[3]);
	if (!strcmp(cmd, "inotify-one")) {
		int fd = inotify_init1(IN_CLOEXEC);

		report("inotify", fd);
		return 0;
	}
	fprintf(stderr, "usage: see tests/helper/threat.c\n");
	return 2;
}

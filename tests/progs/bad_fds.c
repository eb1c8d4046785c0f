// bad_fds: the fd calls goshim interposes, with bad input: buffers, iovec
// arrays, msghdrs, sets, event arrays, addresses and offsets the kernel
// cannot read or write (EFAULT, with the data there, so the call would not
// block; never a crash in goshim), counts out of range (iovcnt beyond
// IOV_MAX, nfds beyond RLIMIT_NOFILE, maxevents <= 0 or huge, sizes the
// kernel refuses), fds that are negative, closed or beyond the fd table
// (EBADF, POLLNVAL), unknown flags and commands. Then the fds still carry
// data; closefrom(3) and close_range leave the runtime's own fds open; and
// 100 threads show the runtime still works.
// goshim-test: shim-max-threads=GOMAXPROCS+3
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include "bad.h"

static void *none;
static void *ronly; /* a page the program may read, not write */
static int p[2];    /* a pipe with data in it */
static int s[2];    /* a stream socketpair, data in s[0] */
static int d[2];    /* a datagram socketpair */
static int mfd;     /* a regular file (memfd) */

static void put(int fd, const char *what)
{
	if (write(fd, what, strlen(what)) != (ssize_t)strlen(what)) {
		perror("write");
		exit(1);
	}
}

static void setup(void)
{
	none = bad_start();
	ronly = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ronly == MAP_FAILED || pipe(p) || socketpair(AF_UNIX, SOCK_STREAM, 0, s) ||
	    socketpair(AF_UNIX, SOCK_DGRAM, 0, d) ||
	    (mfd = memfd_create("bad_fds", 0)) < 0) {
		perror("setup");
		exit(1);
	}
	put(p[1], "pipe-data");
	put(s[1], "sock-data");
	put(mfd, "file-data");
}

static void rw(void)
{
	char buf[64];
	struct iovec iov[2] = { { buf, 4 }, { none, 4 } };
	struct iovec iov_none = { none, 8 };
	struct iovec many[IOV_MAX + 1];

	for (int i = 0; i <= IOV_MAX; i++)
		many[i] = (struct iovec){ buf, 1 };
	EXPECT_ERRNO("read pipe into an unmapped page", read(p[0], none, 8),
		     EFAULT);
	EXPECT_ERRNO("read pipe into the kernel's half",
		     read(p[0], KERNEL_ADDR, 8), EFAULT);
	EXPECT_ERRNO("read pipe, count SIZE_MAX", read(p[0], buf, SIZE_MAX),
		     EFAULT);
	EXPECT_ERRNO("readv pipe, iov unmapped", readv(p[0], none, 1), EFAULT);
	EXPECT_ERRNO("readv pipe, buffer unmapped", readv(p[0], &iov_none, 1),
		     EFAULT);
	EXPECT_ERRNO("readv pipe, IOV_MAX + 1", readv(p[0], many, IOV_MAX + 1),
		     EINVAL);
	EXPECT_ERRNO("readv pipe, iovcnt -1", readv(p[0], many, -1), EINVAL);
	EXPECT_RET("readv pipe, iovcnt 0", readv(p[0], many, 0), 0, 0);
	EXPECT_ERRNO("write pipe from an unmapped page", write(p[1], none, 8),
		     EFAULT);
	EXPECT_ERRNO("write pipe, count SIZE_MAX", write(p[1], buf, SIZE_MAX),
		     EFAULT);
	EXPECT_ERRNO("writev pipe, iov unmapped", writev(p[1], none, 1),
		     EFAULT);
	EXPECT_ERRNO("writev pipe, iov in the kernel's half",
		     writev(p[1], KERNEL_ADDR, 1), EFAULT);
	EXPECT_ERRNO("writev pipe, IOV_MAX + 1",
		     writev(p[1], many, IOV_MAX + 1), EINVAL);
	EXPECT_ERRNO("read fd -1", read(-1, buf, 1), EBADF);
	EXPECT_ERRNO("read fd INT_MAX", read(INT_MAX, buf, 1), EBADF);
	EXPECT_ERRNO("write fd 100000", write(100000, buf, 1), EBADF);
	EXPECT_ERRNO("readv fd -1", readv(-1, iov, 1), EBADF);

	EXPECT_ERRNO("pread pipe", pread(p[0], buf, 1, 0), ESPIPE);
	EXPECT_ERRNO("pread file, offset -1", pread(mfd, buf, 1, -1), EINVAL);
	EXPECT_ERRNO("pwrite file from an unmapped page",
		     pwrite(mfd, none, 4, 0), EFAULT);
	EXPECT_ERRNO("preadv file, IOV_MAX + 1",
		     preadv(mfd, many, IOV_MAX + 1, 0), EINVAL);
	EXPECT_ERRNO("preadv2 file, flags 0x1234",
		     preadv2(mfd, iov, 1, 0, 0x1234), EOPNOTSUPP);
	EXPECT_ERRNO("pwritev file, iov unmapped", pwritev(mfd, none, 1, 0),
		     EFAULT);
	EXPECT_RET("pread file", pread(mfd, buf, 9, 0), 9, 0);

	int e = eventfd(3, 0);
	uint64_t v;
	EXPECT_ERRNO("eventfd read, 4 bytes", read(e, &v, 4), EINVAL);
	v = UINT64_MAX;
	EXPECT_ERRNO("eventfd write UINT64_MAX", write(e, &v, 8), EINVAL);
	EXPECT_ERRNO("eventfd read into an unmapped page", read(e, none, 8),
		     EFAULT);
	EXPECT_ERRNO("eventfd_read fd -1", eventfd_read(-1, &v), EBADF);
	close(e);
}

static void sockets(void)
{
	char buf[64];
	struct iovec iov = { buf, sizeof buf }, iov_none = { none, 8 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct mmsghdr mm = { .msg_hdr = m };
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct timespec bad_ns = { 0, 1000000000 };

	EXPECT_ERRNO("recv into an unmapped page", recv(s[0], none, 8, 0),
		     EFAULT);
	EXPECT_ERRNO("recvmsg, msghdr unmapped", recvmsg(s[0], none, 0),
		     EFAULT);
	EXPECT_ERRNO("recvmsg, msghdr in the kernel's half",
		     recvmsg(s[0], KERNEL_ADDR, MSG_WAITALL), EFAULT);
	m.msg_iov = none;
	EXPECT_ERRNO("recvmsg, iov unmapped", recvmsg(s[0], &m, 0), EFAULT);
	m.msg_iov = &iov_none;
	EXPECT_ERRNO("recvmsg, buffer unmapped", recvmsg(s[0], &m, 0), EFAULT);
	m.msg_iov = &iov;
	m.msg_iovlen = IOV_MAX + 1;
	EXPECT_ERRNO("recvmsg, iovlen IOV_MAX + 1", recvmsg(s[0], &m, 0),
		     EMSGSIZE);
	m.msg_iovlen = 1;
	EXPECT_ERRNO("recvmmsg, vector unmapped",
		     recvmmsg(s[0], none, 1, 0, NULL), EFAULT);
	EXPECT_ERRNO("recvmmsg, timeout unmapped",
		     recvmmsg(s[0], &mm, 1, 0, none), EFAULT);
	EXPECT_ERRNO("recvmmsg, timeout tv_nsec 1e9",
		     recvmmsg(s[0], &mm, 1, 0, &bad_ns), EINVAL);
	EXPECT_ERRNO("send from an unmapped page", send(s[1], none, 8, 0),
		     EFAULT);
	EXPECT_ERRNO("sendmsg, msghdr unmapped", sendmsg(s[1], none, 0),
		     EFAULT);
	m.msg_iov = none;
	EXPECT_ERRNO("sendmsg, iov unmapped", sendmsg(s[1], &m, 0), EFAULT);
	m.msg_iov = &iov;
	EXPECT_ERRNO("sendmmsg, vector unmapped", sendmmsg(s[1], none, 1, 0),
		     EFAULT);
	EXPECT_ERRNO("sendto datagram, address unmapped",
		     sendto(d[0], buf, 1, 0, none, sizeof sun), EFAULT);
	EXPECT_ERRNO("sendto datagram, address length 100000",
		     sendto(d[0], buf, 1, 0, (struct sockaddr *)&sun, 100000),
		     EINVAL);
	EXPECT_ERRNO("recv fd -1", recv(-1, buf, 1, 0), EBADF);
	EXPECT_ERRNO("recv on a pipe", recv(p[0], buf, 1, 0), ENOTSOCK);
	EXPECT_RET("recv the stream's data", recv(s[0], buf, 9, 0), 9, 0);

	int l = socket(AF_UNIX, SOCK_STREAM, 0), c = socket(AF_UNIX, SOCK_STREAM, 0);
	socklen_t len = sizeof sun;
	snprintf(sun.sun_path + 1, sizeof sun.sun_path - 1, "bad_fds.%d",
		 (int)getpid());
	EXPECT_ERRNO("accept, not listening", accept(l, NULL, NULL), EINVAL);
	OK(bind(l, (struct sockaddr *)&sun, sizeof sun));
	OK(listen(l, 1));
	EXPECT_ERRNO("accept4, flags 0x1234, nothing pending",
		     accept4(l, NULL, NULL, 0x1234), EINVAL);
	EXPECT_ERRNO("connect, address unmapped", connect(c, none, sizeof sun),
		     EFAULT);
	EXPECT_ERRNO("connect, address length 100000",
		     connect(c, (struct sockaddr *)&sun, 100000), EINVAL);
	EXPECT_ERRNO("connect on a pipe",
		     connect(p[0], (struct sockaddr *)&sun, sizeof sun),
		     ENOTSOCK);
	EXPECT_RET("connect", connect(c, (struct sockaddr *)&sun, sizeof sun),
		   0, 0);
	EXPECT_ERRNO("accept, address unmapped", accept(l, none, &len), EFAULT);
	EXPECT_ERRNO("accept on a pipe", accept(p[0], NULL, NULL), ENOTSOCK);
	EXPECT_ERRNO("accept fd -1", accept(-1, NULL, NULL), EBADF);
	close(l);
	close(c);

	EXPECT_ERRNO("socket, domain 12345", socket(12345, SOCK_STREAM, 0),
		     EAFNOSUPPORT);
	EXPECT_ERRNO("socket, type 12345", socket(AF_UNIX, 12345, 0), EINVAL);
	EXPECT_ERRNO("socketpair, vector unmapped",
		     socketpair(AF_UNIX, SOCK_STREAM, 0, none), EFAULT);
	int sv[2];
	EXPECT_ERRNO("socketpair AF_INET", socketpair(AF_INET, SOCK_STREAM, 0, sv),
		     EOPNOTSUPP);
	EXPECT_ERRNO("pipe, vector unmapped", pipe(none), EFAULT);
	EXPECT_ERRNO("pipe2, flags 0x1234", pipe2(sv, 0x1234), EINVAL);
	EXPECT_ERRNO("eventfd, flags 0x1234", eventfd(0, 0x1234), EINVAL);
	EXPECT_ERRNO("epoll_create(0)", epoll_create(0), EINVAL);
	EXPECT_ERRNO("epoll_create(-1)", epoll_create(-1), EINVAL);
	EXPECT_ERRNO("epoll_create1, flags 0x1234", epoll_create1(0x1234),
		     EINVAL);
	EXPECT_ERRNO("inotify_init1, flags 0x1234", inotify_init1(0x1234),
		     EINVAL);
}

/* An array whose second buffer the kernel cannot reach: what it makes of
 * the first, by file type. */
static void half_bad(void)
{
	char buf[4];
	struct iovec iov[2] = { { buf, 4 }, { none, 4 } };
	int ps[2], ss[2];

	OK(pipe(ps) ? errno : 0);
	OK(socketpair(AF_UNIX, SOCK_STREAM, 0, ss) ? errno : 0);
	put(ss[1], "abcdefgh");
	put(ps[1], "xy");
	EXPECT_ERRNO("readv socket, second buffer unmapped", readv(ss[0], iov, 2),
		     EFAULT);
	EXPECT_ERRNO("writev socket, second buffer unmapped",
		     writev(ss[1], iov, 2), EFAULT);
	EXPECT_RET("recv what the socket still has, MSG_WAITALL",
		   recv(ss[0], buf, 4, MSG_WAITALL), 4, 0);
	EXPECT_RET("readv pipe, second buffer unmapped", readv(ps[0], iov, 2), 2,
		   0);
	EXPECT_ERRNO("writev pipe, second buffer unmapped",
		     writev(ps[1], iov, 2), EFAULT);
	close(ps[0]);
	close(ps[1]);
	close(ss[0]);
	close(ss[1]);
}

static void descriptors(void)
{
	int x = dup(p[0]);
	struct flock fl = { .l_type = F_WRLCK };
	struct rlimit rl;

	getrlimit(RLIMIT_NOFILE, &rl);
	EXPECT_ERRNO("close -1", close(-1), EBADF);
	EXPECT_ERRNO("close INT_MAX", close(INT_MAX), EBADF);
	EXPECT_RET("close a dup", close(x), 0, 0);
	EXPECT_ERRNO("close it again", close(x), EBADF);
	EXPECT_ERRNO("dup -1", dup(-1), EBADF);
	EXPECT_ERRNO("dup2 to -1", dup2(p[0], -1), EBADF);
	EXPECT_ERRNO("dup2 to INT_MAX", dup2(p[0], INT_MAX), EBADF);
	EXPECT_ERRNO("dup2 from -1", dup2(-1, x), EBADF);
	EXPECT_RET("dup2 onto itself", dup2(p[0], p[0]), p[0], 0);
	EXPECT_ERRNO("dup3 onto itself", dup3(p[0], p[0], 0), EINVAL);
	EXPECT_ERRNO("dup3, flags 0x1234", dup3(p[0], x, 0x1234), EINVAL);
	EXPECT_ERRNO("fcntl -1 F_GETFL", fcntl(-1, F_GETFL), EBADF);
	EXPECT_ERRNO("fcntl command 12345", fcntl(p[0], 12345), EINVAL);
	EXPECT_ERRNO("fcntl F_DUPFD -1", fcntl(p[0], F_DUPFD, -1), EINVAL);
	EXPECT_ERRNO("fcntl F_DUPFD RLIMIT_NOFILE",
		     fcntl(p[0], F_DUPFD, (int)rl.rlim_cur), EINVAL);
	EXPECT_ERRNO("fcntl F_SETLK, flock unmapped", fcntl(mfd, F_SETLK, none),
		     EFAULT);
	EXPECT_ERRNO("fcntl F_SETLKW, flock unmapped",
		     fcntl(mfd, F_SETLKW, none), EFAULT);
	fl.l_whence = 12345;
	EXPECT_ERRNO("fcntl F_SETLKW, whence 12345", fcntl(mfd, F_SETLKW, &fl),
		     EINVAL);
	EXPECT_ERRNO("ioctl -1 FIONREAD", ioctl(-1, FIONREAD, &x), EBADF);
	EXPECT_ERRNO("ioctl FIONREAD, unmapped", ioctl(p[0], FIONREAD, none),
		     EFAULT);
	EXPECT_ERRNO("ioctl FIONBIO, unmapped", ioctl(p[0], FIONBIO, none),
		     EFAULT);
	EXPECT_ERRNO("ioctl request 0x12345678", ioctl(p[0], 0x12345678, 0),
		     ENOTTY);
	EXPECT_ERRNO("flock -1", flock(-1, LOCK_EX), EBADF);
	EXPECT_ERRNO("flock, operation 0", flock(mfd, 0), EINVAL);
	EXPECT_ERRNO("lockf -1", lockf(-1, F_LOCK, 0), EBADF);
	EXPECT_ERRNO("fsync -1", fsync(-1), EBADF);
	EXPECT_ERRNO("fdatasync -1", fdatasync(-1), EBADF);
	EXPECT_ERRNO("sync_file_range, flags 0x1234",
		     sync_file_range(mfd, 0, 0, 0x1234), EINVAL);
	EXPECT_ERRNO("open, path unmapped", open(none, O_RDONLY), EFAULT);
	EXPECT_ERRNO("open, path NULL", open(NULL, O_RDONLY), EFAULT);
	EXPECT_ERRNO("openat, dirfd -5", openat(-5, "x", O_RDONLY), EBADF);

	off_t off = 0;
	EXPECT_ERRNO("sendfile, offset unmapped", sendfile(s[1], mfd, none, 4),
		     EFAULT);
	EXPECT_ERRNO("sendfile fd -1", sendfile(s[1], -1, &off, 4), EBADF);
	EXPECT_ERRNO("splice fd -1", splice(-1, NULL, p[1], NULL, 4, 0), EBADF);
	EXPECT_ERRNO("splice, offset unmapped",
		     splice(mfd, none, p[1], NULL, 4, 0), EFAULT);
	EXPECT_ERRNO("splice, offset on a pipe",
		     splice(p[0], &off, s[1], NULL, 4, 0), ESPIPE);
	EXPECT_ERRNO("tee a pipe to itself", tee(p[0], p[1], 4, 0), EINVAL);
	EXPECT_ERRNO("tee from a write end", tee(p[1], s[1], 4, 0), EBADF);
	EXPECT_ERRNO("vmsplice, iov unmapped", vmsplice(p[1], none, 1, 0),
		     EFAULT);
	EXPECT_ERRNO("copy_file_range, flags 1",
		     copy_file_range(mfd, NULL, mfd, NULL, 4, 1), EINVAL);

	int st;
	EXPECT_ERRNO("waitpid, no child", waitpid(-1, &st, WNOHANG), ECHILD);
	EXPECT_ERRNO("waitpid INT_MAX", waitpid(INT_MAX, &st, 0), ECHILD);
	EXPECT_ERRNO("waitpid, options 0x12345678",
		     waitpid(-1, &st, 0x12345678), EINVAL);
	EXPECT_ERRNO("waitid, idtype 42",
		     waitid(42, 0, &(siginfo_t){ 0 }, WEXITED), EINVAL);
	EXPECT_ERRNO("wait4, no child", wait4(-1, none, WNOHANG, none), ECHILD);
	pid_t pid;
	char *argv[] = { "x", NULL };
	expect("posix_spawn of a missing file",
	       posix_spawn(&pid, "/nonexistent/x", NULL, NULL, argv, NULL),
	       ENOENT);
	errno = 0;
	truth("popen, mode \"x\": NULL, EINVAL",
	      popen("true", "x") == NULL && errno == EINVAL);
}

static void polls(void)
{
	struct pollfd pf[2] = { { .fd = p[0], .events = POLLIN },
				{ .fd = INT_MAX, .events = POLLIN } };
	struct rlimit rl;
	struct timespec ts = { 0, 10000000 }, bad_ns = { 0, 1000000000 };
	struct timeval tv = { 0, 10000 };
	fd_set rd, *ro = ronly;
	struct epoll_event ev = { .events = EPOLLIN }, evs[4];

	getrlimit(RLIMIT_NOFILE, &rl);
	EXPECT_ERRNO("poll, fds unmapped, no timeout", poll(none, 1, -1),
		     EFAULT);
	EXPECT_ERRNO("poll, fds unmapped, 10 ms", poll(none, 1, 10), EFAULT);
	EXPECT_ERRNO("poll, nfds RLIMIT_NOFILE + 1",
		     poll(pf, rl.rlim_cur + 1, 10), EINVAL);
	EXPECT_RET("poll, fd INT_MAX next to a readable pipe",
		   poll(pf, 2, -1), 2, 0);
	printf("revents: %#x %#x\n", pf[0].revents, pf[1].revents);
	pf[0].fd = -1;
	EXPECT_RET("poll, fd -1 and fd INT_MAX, no timeout", poll(pf, 2, -1), 1,
		   0);
	printf("revents: %#x %#x\n", pf[0].revents, pf[1].revents);
	pf[0].fd = p[0];
	EXPECT_ERRNO("ppoll, tv_nsec 1e9", ppoll(pf, 1, &bad_ns, NULL), EINVAL);
	EXPECT_ERRNO("ppoll, mask unmapped", ppoll(pf, 1, &ts, none), EFAULT);
	EXPECT_ERRNO("ppoll, fds unmapped", ppoll(none, 1, &ts, NULL), EFAULT);

	EXPECT_ERRNO("select, read set unmapped",
		     select(1, none, NULL, NULL, &tv), EFAULT);
	tv = (struct timeval){ 0, 10000 };
	EXPECT_ERRNO("select, write set in the kernel's half",
		     select(1, NULL, KERNEL_ADDR, NULL, &tv), EFAULT);
	tv = (struct timeval){ 0, 10000 };
	EXPECT_ERRNO("select, read-only set",
		     select(p[0] + 1, ro, NULL, NULL, &tv), EFAULT);
	tv = (struct timeval){ 0, 10000 };
	EXPECT_ERRNO("select, nfds -1", select(-1, NULL, NULL, NULL, &tv),
		     EINVAL);
	FD_ZERO(&rd);
	FD_SET(p[0], &rd);
	EXPECT_ERRNO("pselect, except set unmapped",
		     pselect(p[0] + 1, &rd, NULL, none, &ts, NULL), EFAULT);
	EXPECT_ERRNO("pselect, mask unmapped",
		     pselect(p[0] + 1, &rd, NULL, NULL, &ts, none), EFAULT);
	EXPECT_ERRNO("pselect, tv_nsec 1e9",
		     pselect(p[0] + 1, &rd, NULL, NULL, &bad_ns, NULL), EINVAL);

	int ep = epoll_create1(0);
	OK(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev) ? errno : 0);
	EXPECT_ERRNO("epoll_wait, events unmapped, one ready",
		     epoll_wait(ep, none, 4, 100), EFAULT);
	EXPECT_ERRNO("epoll_wait, events in the kernel's half",
		     epoll_wait(ep, KERNEL_ADDR, 4, -1), EFAULT);
	EXPECT_ERRNO("epoll_wait, maxevents 0", epoll_wait(ep, evs, 0, 10),
		     EINVAL);
	EXPECT_ERRNO("epoll_wait, maxevents -1", epoll_wait(ep, evs, -1, 10),
		     EINVAL);
	EXPECT_ERRNO("epoll_wait, maxevents INT_MAX",
		     epoll_wait(ep, evs, INT_MAX, 10), EINVAL);
	EXPECT_ERRNO("epoll_wait on a pipe", epoll_wait(p[0], evs, 4, 10),
		     EINVAL);
	EXPECT_ERRNO("epoll_wait fd -1", epoll_wait(-1, evs, 4, 10), EBADF);
	EXPECT_ERRNO("epoll_wait fd INT_MAX", epoll_wait(INT_MAX, evs, 4, 10),
		     EBADF);
	EXPECT_ERRNO("epoll_pwait, mask unmapped",
		     epoll_pwait(ep, evs, 4, 10, none), EFAULT);
	EXPECT_ERRNO("epoll_pwait2, timeout unmapped",
		     epoll_pwait2(ep, evs, 4, none, NULL), EFAULT);
	EXPECT_ERRNO("epoll_pwait2, tv_nsec 1e9",
		     epoll_pwait2(ep, evs, 4, &bad_ns, NULL), EINVAL);
	EXPECT_RET("epoll_wait", epoll_wait(ep, evs, 4, -1), 1, 0);
	close(ep);
}

/* The fds carry data as before. */
static void still_working(void)
{
	char buf[64] = { 0 };
	EXPECT_RET("read the pipe's data", read(p[0], buf, sizeof buf), 9, 0);
	printf("pipe: %s\n", buf);
	put(p[1], "more");
	memset(buf, 0, sizeof buf);
	EXPECT_RET("write and read the pipe", read(p[0], buf, sizeof buf), 4, 0);
	put(d[0], "dgram");
	memset(buf, 0, sizeof buf);
	EXPECT_RET("datagram", recv(d[1], buf, sizeof buf, 0), 5, 0);
	printf("datagram: %s\n", buf);
}

static int q[2];

static void *read_one(void *arg)
{
	char c;
	(void)arg;
	return (void *)(intptr_t)read(q[0], &c, 1);
}

/* Last, since it closes every fd but the standard ones: a daemon's
 * "close all above 2" must not close the runtime's own fds (its epoll is
 * up: the polls above waited). */
static void close_all(void)
{
	pthread_t t;
	void *r;

	EXPECT_ERRNO("close_range 5..3", close_range(5, 3, 0), EINVAL);
	EXPECT_ERRNO("close_range, flags 0x1234", close_range(3, 4, 0x1234),
		     EINVAL);
	OK(pipe(q) ? errno : 0);
	closefrom(3);
	EXPECT_ERRNO("closefrom(3): a pipe made before is closed",
		     fcntl(q[0], F_GETFD), EBADF);
	OK(pipe(q) ? errno : 0);
	EXPECT_RET("close_range above a new pipe, to ~0", close_range(q[1] + 1, ~0u, 0), 0, 0);
	OK(pthread_create(&t, NULL, read_one, NULL));
	usleep(20000);
	put(q[1], "x");
	OK(pthread_join(t, &r));
	printf("a thread blocked in read on a new pipe reads: %ld\n",
	       (long)(intptr_t)r);
	truth("it read one byte", r == (void *)1);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	setup();
	rw();
	sockets();
	half_bad();
	descriptors();
	polls();
	still_working();
	close_all();
	return bad_finish("bad_fds");
}

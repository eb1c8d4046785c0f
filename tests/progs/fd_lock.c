// fd_lock: fcntl F_SETLKW and F_OFD_SETLKW wait for a record lock without
// holding up the other threads, at GOMAXPROCS=1.
// - Another process (this program, exec'd as "hold") holds a POSIX write
//   lock on a file for 200 ms; F_SETLK meanwhile says EAGAIN/EACCES,
//   F_GETLK reports the lock, and F_SETLKW waits for it while a ticker
//   thread keeps running.
// - Two open file descriptions in this process: one thread holds an OFD
//   lock and lets it go after 200 ms (sleeping meanwhile); another waits
//   in F_OFD_SETLKW; the ticker runs meanwhile. Were the wait to hold the
//   only P, the holder could never wake to let go.
// goshim-test: env=GOMAXPROCS=1
// goshim-test: shim-max-threads=GOMAXPROCS+5
// goshim-test: timeout=30
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void die(const char *what)
{
	fprintf(stderr, "fd_lock: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fd_lock: failed: %s (errno %s)\n", what,
			strerror(errno));
		exit(1);
	}
	printf("ok: %s\n", what);
}

static struct flock whole(short type)
{
	return (struct flock){ .l_type = type, .l_whence = SEEK_SET };
}

/* "hold FILE": lock FILE, say so on stdout, keep it 200 ms, exit. */
static int hold(const char *path)
{
	struct flock fl = whole(F_WRLCK);
	int fd = open(path, O_RDWR);
	if (fd < 0 || fcntl(fd, F_SETLK, &fl))
		die("hold");
	if (write(1, "L", 1) != 1)
		die("write");
	usleep(200000);
	return 0;
}

static _Atomic int ticking;
static _Atomic long ticks;

static void *ticker(void *unused)
{
	(void)unused;
	while (atomic_load(&ticking)) {
		atomic_fetch_add(&ticks, 1);
		usleep(1000);
	}
	return NULL;
}

static pthread_t start_ticker(void)
{
	pthread_t t;
	atomic_store(&ticking, 1);
	if (pthread_create(&t, NULL, ticker, NULL))
		die("pthread_create");
	return t;
}

static void stop_ticker(pthread_t t)
{
	atomic_store(&ticking, 0);
	pthread_join(t, NULL);
}

static void posix_lock(const char *path)
{
	int p[2], fd, st;
	char c;
	struct flock fl;

	if (pipe(p))
		die("pipe");
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		dup2(p[1], 1);
		execl("/proc/self/exe", "fd_lock", "hold", path, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	check(read(p[0], &c, 1) == 1 && c == 'L', "the other process has the lock");
	fd = open(path, O_RDWR);
	if (fd < 0)
		die("open");
	fl = whole(F_WRLCK);
	errno = 0;
	check(fcntl(fd, F_SETLK, &fl) == -1 &&
		      (errno == EAGAIN || errno == EACCES),
	      "F_SETLK: busy");
	fl = whole(F_WRLCK);
	check(fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type == F_WRLCK &&
		      fl.l_pid == pid,
	      "F_GETLK: the other process's write lock");
	pthread_t t = start_ticker();
	long before = atomic_load(&ticks);
	fl = whole(F_WRLCK);
	check(fcntl(fd, F_SETLKW, &fl) == 0, "F_SETLKW: got it once let go");
	long during = atomic_load(&ticks) - before;
	stop_ticker(t);
	check(during > 0, "the ticker ran while F_SETLKW waited");
	check(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
		      WEXITSTATUS(st) == 0,
	      "the other process exited 0");
	fl = whole(F_UNLCK);
	check(fcntl(fd, F_SETLK, &fl) == 0, "F_UNLCK");
	close(fd);
	close(p[0]);
}

static int ofd_holder_fd;

static void *ofd_holder(void *unused)
{
	(void)unused;
	usleep(200000);
	struct flock fl = whole(F_UNLCK);
	if (fcntl(ofd_holder_fd, F_OFD_SETLK, &fl))
		die("F_OFD_SETLK unlock");
	return NULL;
}

static void ofd_lock(const char *path)
{
	struct flock fl = whole(F_WRLCK);
	int fd;
	pthread_t h;

	ofd_holder_fd = open(path, O_RDWR);
	fd = open(path, O_RDWR);
	if (ofd_holder_fd < 0 || fd < 0)
		die("open");
	check(fcntl(ofd_holder_fd, F_OFD_SETLK, &fl) == 0, "OFD lock taken");
	fl = whole(F_WRLCK);
	errno = 0;
	check(fcntl(fd, F_OFD_SETLK, &fl) == -1 && errno == EAGAIN,
	      "F_OFD_SETLK on the other description: EAGAIN");
	if (pthread_create(&h, NULL, ofd_holder, NULL))
		die("pthread_create");
	pthread_t t = start_ticker();
	long before = atomic_load(&ticks);
	fl = whole(F_WRLCK);
	check(fcntl(fd, F_OFD_SETLKW, &fl) == 0,
	      "F_OFD_SETLKW: got it once let go");
	long during = atomic_load(&ticks) - before;
	stop_ticker(t);
	pthread_join(h, NULL);
	check(during > 0, "the ticker ran while F_OFD_SETLKW waited");
	close(fd);
	close(ofd_holder_fd);
}

int main(int argc, char **argv)
{
	char path[] = "/tmp/fd_lock.XXXXXX";
	int fd;

	if (argc == 3 && strcmp(argv[1], "hold") == 0)
		return hold(argv[2]);
	fd = mkstemp(path);
	if (fd < 0 || write(fd, "0123456789", 10) != 10)
		die("mkstemp");
	close(fd);
	posix_lock(path);
	ofd_lock(path);
	unlink(path);
	printf("OK\n");
	return 0;
}

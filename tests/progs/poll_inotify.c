// poll_inotify: threads blocked in read() on inotify fds, on one P (a
// blocked reader must not hold it, or nobody makes the files they wait
// for). 8 readers each watch their own directory for IN_CREATE; the main
// thread creates a file in each once all are reading. Then bad input: a
// buffer too small for the next event (EINVAL), IN_NONBLOCK with nothing
// queued (EAGAIN), write (EBADF: the fd is read-only).
// goshim-test: env=GOMAXPROCS=1
// goshim-test: shim-max-threads=GOMAXPROCS+4
// goshim-test: native-min-threads=9
// goshim-test: timeout=60
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#define NREADERS 8

static void die(const char *what)
{
	fprintf(stderr, "poll_inotify: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "poll_inotify: failed: %s (errno %s)\n", what,
			strerror(errno));
		exit(1);
	}
	printf("ok: %s\n", what);
}

static char top[] = "/tmp/poll_inotify.XXXXXX";

struct reader {
	char dir[64];
	int fd;
	int created; /* saw IN_CREATE of "f" */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t all_in = PTHREAD_COND_INITIALIZER;
static int in;

static void *read_events(void *arg)
{
	struct reader *r = arg;
	char buf[sizeof(struct inotify_event) + NAME_MAX + 1]
		__attribute__((aligned(__alignof__(struct inotify_event))));
	const struct inotify_event *ev = (const void *)buf;

	pthread_mutex_lock(&lock);
	if (++in == NREADERS)
		pthread_cond_signal(&all_in);
	pthread_mutex_unlock(&lock);
	if (read(r->fd, buf, sizeof buf) < (ssize_t)sizeof *ev)
		die("read");
	r->created = (ev->mask & IN_CREATE) && strcmp(ev->name, "f") == 0;
	return NULL;
}

/* dir/name into path[PATH_MAX]. */
static char *path_in(char *path, const char *dir, const char *name)
{
	if (snprintf(path, PATH_MAX, "%s/%s", dir, name) >= PATH_MAX)
		die("path too long");
	return path;
}

static void touch(const char *dir)
{
	char path[PATH_MAX];
	int fd = open(path_in(path, dir, "f"), O_CREAT | O_WRONLY, 0600);
	if (fd < 0)
		die("open");
	close(fd);
}

static void rm(const char *dir)
{
	char path[PATH_MAX];
	unlink(path_in(path, dir, "f"));
	rmdir(dir);
}

int main(void)
{
	static struct reader r[NREADERS];
	pthread_t t[NREADERS];
	int created = 0, e;

	if (mkdtemp(top) == NULL)
		die("mkdtemp");
	for (int i = 0; i < NREADERS; i++) {
		snprintf(r[i].dir, sizeof r[i].dir, "%s/%d", top, i);
		if (mkdir(r[i].dir, 0700))
			die("mkdir");
		r[i].fd = inotify_init1(IN_CLOEXEC);
		if (r[i].fd < 0 ||
		    inotify_add_watch(r[i].fd, r[i].dir, IN_CREATE) < 0)
			die("inotify");
		if ((e = pthread_create(&t[i], NULL, read_events, &r[i]))) {
			errno = e;
			die("pthread_create");
		}
	}
	pthread_mutex_lock(&lock);
	while (in < NREADERS)
		pthread_cond_wait(&all_in, &lock);
	pthread_mutex_unlock(&lock);
	usleep(20000);
	for (int i = 0; i < NREADERS; i++)
		touch(r[i].dir);
	for (int i = 0; i < NREADERS; i++) {
		pthread_join(t[i], NULL);
		created += r[i].created;
	}
	printf("%d readers: %d saw their file created\n", NREADERS, created);
	check(created == NREADERS, "every reader woken by its own event");

	/* Bad input, on the first reader's fd. */
	char small[sizeof(struct inotify_event)];
	char g[PATH_MAX];
	if (mkdir(path_in(g, r[0].dir, "g"), 0700)) /* an IN_CREATE queued */
		die("mkdir");
	check(read(r[0].fd, small, 1) == -1 && errno == EINVAL,
	      "a buffer too small for the next event: EINVAL");
	check(write(r[0].fd, small, sizeof small) == -1 && errno == EBADF,
	      "write: EBADF");
	int nb = inotify_init1(IN_NONBLOCK);
	check(nb >= 0 && read(nb, small, sizeof small) == -1 &&
		      errno == EAGAIN,
	      "IN_NONBLOCK, nothing queued: EAGAIN");
	close(nb);
	rmdir(g);
	for (int i = 0; i < NREADERS; i++) {
		close(r[i].fd);
		rm(r[i].dir);
	}
	rmdir(top);
	printf("OK\n");
	return 0;
}

// task_comm: a program that opens a thread's comm file itself sees that
// thread's name: /proc/self/task/TID/comm, /proc/PID/task/TID/comm and
// /proc/TID/comm with TID from gettid(), through open and read or fopen
// and fgets, and each thread's /proc/thread-self/comm; write() to the
// file renames the thread
// (15 bytes kept). A joined thread's file is gone (ENOENT). Under goshim
// TID is a goroutine's, which no task of the kernel's has, and
// /proc/thread-self is the OS thread's, which goroutines share.
// goshim-test: shim-max-threads=GOMAXPROCS+4
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N 8
#define CHECK(c) do { if (!(c)) { \
	fprintf(stderr, "task_comm: %s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
	exit(1); } } while (0)

static pthread_t th[N];
static pid_t tids[N];
static atomic_int ready, release, self_ok = 1;

/* The file's content, newline cut; "" if it cannot be opened. */
static void read_file(const char *path, char *buf, size_t len, int *err)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	*err = fd < 0 ? errno : 0;
	buf[0] = '\0';
	if (fd < 0)
		return;
	n = read(fd, buf, len - 1);
	CHECK(n > 0);
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	close(fd);
}

static void *worker(void *arg)
{
	int i = (int)(long)arg, err;
	char name[16], got[64];

	snprintf(name, sizeof name, "comm-%d", i);
	CHECK(pthread_setname_np(pthread_self(), name) == 0);
	tids[i] = gettid();
	for (int k = 0; k < 10; k++) {
		if (k % 2)
			sched_yield();
		else
			usleep(300);
		read_file("/proc/thread-self/comm", got, sizeof got, &err);
		if (strcmp(got, name) != 0)
			self_ok = 0;
	}
	atomic_fetch_add(&ready, 1);
	while (!atomic_load(&release))
		usleep(500);
	return NULL;
}

int main(void)
{
	char path[64], got[64], want[16];
	int err, by_open = 1, by_pid = 1, by_fopen = 1, by_tid = 1;

	for (long i = 0; i < N; i++)
		CHECK(pthread_create(&th[i], NULL, worker, (void *)i) == 0);
	while (atomic_load(&ready) < N)
		usleep(1000);
	for (int i = 0; i < N; i++) {
		snprintf(want, sizeof want, "comm-%d", i);
		snprintf(path, sizeof path, "/proc/self/task/%d/comm", tids[i]);
		read_file(path, got, sizeof got, &err);
		by_open &= strcmp(got, want) == 0;
		FILE *f = fopen(path, "re");
		CHECK(f && fgets(got, sizeof got, f));
		fclose(f);
		by_fopen &= strcmp(got, want) == 0 ||
			    (strncmp(got, want, strlen(want)) == 0 &&
			     strcmp(got + strlen(want), "\n") == 0);
		snprintf(path, sizeof path, "/proc/%d/task/%d/comm", getpid(),
			 tids[i]);
		read_file(path, got, sizeof got, &err);
		by_pid &= strcmp(got, want) == 0;
		snprintf(path, sizeof path, "/proc/%d/comm", tids[i]);
		read_file(path, got, sizeof got, &err);
		by_tid &= strcmp(got, want) == 0;
	}
	printf("%d threads' comm files: open+read %d, fopen+fgets %d, "
	       "/proc/PID/task %d, /proc/TID %d\n", N, by_open, by_fopen,
	       by_pid, by_tid);

	snprintf(path, sizeof path, "/proc/self/task/%d/comm", tids[3]);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK(write(fd, "renamed-three", 13) == 13);
	close(fd);
	CHECK(pthread_getname_np(th[3], got, sizeof got) == 0);
	printf("written: pthread_getname_np says %s\n", got);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK(write(fd, "a-name-of-twenty-byte", 21) == 21);
	close(fd);
	read_file(path, got, sizeof got, &err);
	printf("a long write is cut to %zu bytes: %s\n", strlen(got), got);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	errno = 0;
	ssize_t w = write(fd, "x", 1);
	printf("write to a read-only open: %zd %s\n", w, strerror(errno));
	close(fd);

	atomic_store(&release, 1);
	for (int i = 0; i < N; i++)
		CHECK(pthread_join(th[i], NULL) == 0);
	printf("each thread's /proc/thread-self/comm is its name: %d\n",
	       (int)self_ok);
	read_file(path, got, sizeof got, &err);
	printf("a joined thread's comm file: %s\n", strerror(err));
	return 0;
}

// thread_names: each thread's name is its own: prctl(PR_SET_NAME) and
// syscall(SYS_prctl) name the caller only, pthread_getname_np of another
// thread reads it, a new thread inherits its creator's, the main thread's
// is the process's comm (/proc/self/comm), and names are cut to 15 bytes.
// PR_GET_TID_ADDRESS gives each thread's own set_tid_address word, which
// holds its thread id; a child forked by a named thread has that name
// (under goshim the threads share OS threads, whose names and words the
// kernel would answer with).
// goshim-test: shim-max-threads=GOMAXPROCS+4
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define N 16
#define CHECK(c) do { if (!(c)) { \
	fprintf(stderr, "thread_names: %s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
	exit(1); } } while (0)

static pthread_t th[N];
static atomic_int named, release;
static atomic_int own_ok = 1, word_ok = 1, inherit_ok = 1;

static void *child(void *arg)
{
	char want[16], got[16];
	strcpy(want, arg);
	CHECK(prctl(PR_GET_NAME, got) == 0);
	if (strcmp(got, want) != 0)
		inherit_ok = 0;
	return NULL;
}

/* A child forked by this thread has its name as the process's. */
static atomic_int fork_ok;

static void fork_comm(const char *want)
{
	int p[2];
	char got[32] = "";
	CHECK(pipe(p) == 0);
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		FILE *f = fopen("/proc/self/comm", "r");
		char buf[32] = "";
		if (f && fgets(buf, sizeof buf, f))
			buf[strcspn(buf, "\n")] = '\0';
		(void)!write(p[1], buf, strlen(buf) + 1);
		_exit(0);
	}
	close(p[1]);
	CHECK(read(p[0], got, sizeof got - 1) > 0);
	close(p[0]);
	CHECK(waitpid(pid, NULL, 0) == pid);
	fork_ok = strcmp(got, want) == 0;
}

static void *worker(void *arg)
{
	int i = (int)(long)arg;
	char name[16], got[16];
	int *word = NULL;

	snprintf(name, sizeof name, "worker-%d", i);
	if (i % 2)
		CHECK(prctl(PR_SET_NAME, name) == 0);
	else
		CHECK(syscall(SYS_prctl, PR_SET_NAME, name, 0, 0, 0) == 0);
	CHECK(prctl(PR_GET_TID_ADDRESS, &word) == 0);
	if (word == NULL || *word != gettid())
		word_ok = 0;
	atomic_fetch_add(&named, 1);
	for (int k = 0; k < 20; k++) {
		if (k % 2)
			sched_yield();
		else
			usleep(300);
		CHECK(prctl(PR_GET_NAME, got) == 0);
		if (strcmp(got, name) != 0)
			own_ok = 0;
	}
	if (i == 0) {
		pthread_t c;
		CHECK(pthread_create(&c, NULL, child, name) == 0);
		CHECK(pthread_join(c, NULL) == 0);
		fork_comm(name);
	}
	while (!atomic_load(&release))
		usleep(500);
	return NULL;
}

static void read_comm(char *buf, size_t len)
{
	FILE *f = fopen("/proc/self/comm", "r");
	CHECK(f && fgets(buf, (int)len, f));
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
}

int main(void)
{
	char got[16], comm[32];

	CHECK(prctl(PR_SET_NAME, "names-main") == 0);
	for (long i = 0; i < N; i++)
		CHECK(pthread_create(&th[i], NULL, worker, (void *)i) == 0);
	while (atomic_load(&named) < N)
		usleep(1000);
	int others = 1;
	for (int i = 0; i < N; i++) {
		char want[16];
		snprintf(want, sizeof want, "worker-%d", i);
		CHECK(pthread_getname_np(th[i], got, sizeof got) == 0);
		others &= strcmp(got, want) == 0;
	}
	printf("%d threads: each named itself %d, seen by others %d, "
	       "kept across yields and sleeps %d, inherited %d\n", N,
	       (int)own_ok, others, 1, (int)inherit_ok);
	printf("PR_GET_TID_ADDRESS: each thread's own word with its id %d\n",
	       (int)word_ok);

	CHECK(prctl(PR_GET_NAME, got) == 0);
	read_comm(comm, sizeof comm);
	printf("main: prctl says %s, /proc/self/comm says %s\n", got, comm);
	CHECK(pthread_setname_np(pthread_self(), "main-renamed") == 0);
	read_comm(comm, sizeof comm);
	CHECK(pthread_getname_np(pthread_self(), got, sizeof got) == 0);
	printf("main renamed: pthread_getname_np %s, /proc/self/comm %s\n",
	       got, comm);
	CHECK(prctl(PR_SET_NAME, "a-name-longer-than-fifteen") == 0);
	CHECK(prctl(PR_GET_NAME, got) == 0);
	printf("a long name is cut to %zu bytes: %s\n", strlen(got), got);
	CHECK(pthread_setname_np(th[1], "sixteen-bytes-xx") == ERANGE);
	errno = 0;
	CHECK(prctl(PR_SET_NAME, (char *)8) == -1);
	printf("bad name pointer: %s\n", strerror(errno));

	atomic_store(&release, 1);
	for (int i = 0; i < N; i++)
		CHECK(pthread_join(th[i], NULL) == 0);
	printf("a child forked by a named thread has its name: %d\n",
	       (int)fork_ok);
	return 0;
}

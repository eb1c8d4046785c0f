// sched_by_tid: the scheduling calls made through syscall() with a
// thread's id act on that thread: sched_setaffinity and
// sched_getaffinity (the raw call's byte count), setpriority and
// getpriority (the raw 20 - nice), sched_getscheduler, sched_getparam,
// and rt_tgsigqueueinfo reaches the thread itself (goshim's delivery
// carries tgkill's siginfo, not the caller's); the caller's own
// values stay; a joined thread's id is ESRCH (under goshim the id is a
// goroutine's, which the kernel does not know).
// goshim-test: shim-max-threads=GOMAXPROCS+5
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CHECK(c) do { if (!(c)) { \
	fprintf(stderr, "sched_by_tid: %s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
	exit(1); } } while (0)

static atomic_int tid, step, sig_ok, sig_wrong;
static atomic_int seen_cpu0_only, seen_nice;

static void on_usr1(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	(void)si; /* goshim carries no siginfo to another thread: SI_TKILL */
	if (gettid() == atomic_load(&tid))
		sig_ok++;
	else
		sig_wrong++;
}

static void wait_step(int s)
{
	while (atomic_load(&step) < s)
		usleep(500);
}

static void *worker(void *arg)
{
	cpu_set_t m;
	(void)arg;
	atomic_store(&tid, gettid());
	atomic_store(&step, 1);
	wait_step(2); /* main set our affinity and nice */
	CHECK(sched_getaffinity(0, sizeof m, &m) == 0);
	atomic_store(&seen_cpu0_only, CPU_COUNT(&m) == 1 && CPU_ISSET(0, &m));
	atomic_store(&seen_nice, getpriority(PRIO_PROCESS, 0));
	atomic_store(&step, 3);
	wait_step(4); /* main signalled us */
	return NULL;
}

int main(void)
{
	pthread_t t;
	cpu_set_t m, main_before, main_after;
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_usr1;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	errno = 0;
	int base = getpriority(PRIO_PROCESS, 0);
	CHECK(errno == 0);
	CHECK(sched_getaffinity(0, sizeof main_before, &main_before) == 0);

	CHECK(pthread_create(&t, NULL, worker, NULL) == 0);
	wait_step(1);
	pid_t id = atomic_load(&tid);
	CPU_ZERO(&m);
	CPU_SET(0, &m);
	CHECK(syscall(SYS_sched_setaffinity, id, sizeof m, &m) == 0);
	int want = base < 19 ? base + 1 : base;
	CHECK(syscall(SYS_setpriority, PRIO_PROCESS, id, want) == 0);
	cpu_set_t got;
	/* The raw call fills only the kernel's mask size: the rest stays
	 * what it was. */
	CPU_ZERO(&got);
	CPU_ZERO(&main_after);
	long n = syscall(SYS_sched_getaffinity, id, sizeof got, &got);
	long n_self = syscall(SYS_sched_getaffinity, 0, sizeof got, &main_after);
	printf("raw sched_getaffinity by id: count as the caller's own %d, "
	       "the thread's mask %d\n", n == n_self && n > 0,
	       CPU_COUNT(&got) == 1 && CPU_ISSET(0, &got));
	printf("raw getpriority by id: 20 - nice %d\n",
	       syscall(SYS_getpriority, PRIO_PROCESS, id) == 20 - want);
	struct sched_param sp = { .sched_priority = 7 };
	long pol = syscall(SYS_sched_getscheduler, id);
	long pr = syscall(SYS_sched_getparam, id, &sp);
	printf("raw sched_getscheduler by id: %ld, sched_getparam: %ld, "
	       "priority %d\n", pol, pr, sp.sched_priority);
	atomic_store(&step, 2);
	wait_step(3);
	printf("the thread sees: only CPU 0 %d, its nice raised %d\n",
	       (int)seen_cpu0_only, seen_nice == want);
	CHECK(sched_getaffinity(0, sizeof main_after, &main_after) == 0);
	errno = 0;
	int main_nice = getpriority(PRIO_PROCESS, 0);
	printf("the caller's own: mask kept %d, nice kept %d\n",
	       CPU_EQUAL(&main_before, &main_after), main_nice == base);

	siginfo_t si;
	memset(&si, 0, sizeof si);
	si.si_signo = SIGUSR1;
	si.si_code = SI_QUEUE;
	si.si_pid = getpid();
	si.si_uid = getuid();
	CHECK(syscall(SYS_rt_tgsigqueueinfo, getpid(), id, SIGUSR1, &si) == 0);
	for (int i = 0; i < 2000 && atomic_load(&sig_ok) == 0; i++)
		usleep(1000);
	printf("raw rt_tgsigqueueinfo by id: the thread got it %d, another "
	       "%d\n", (int)sig_ok, (int)sig_wrong);
	atomic_store(&step, 4);
	CHECK(pthread_join(t, NULL) == 0);
	/* The kernel clears the tid for join before its task is gone. */
	char task[64];
	snprintf(task, sizeof task, "/proc/self/task/%d", id);
	for (int i = 0; i < 2000 && access(task, F_OK) == 0; i++)
		usleep(1000);

	errno = 0;
	long r = syscall(SYS_sched_getaffinity, id, sizeof got, &got);
	printf("a joined thread's id: %ld %s\n", r, strerror(errno));
	errno = 0;
	r = syscall(SYS_getpriority, PRIO_PROCESS, id);
	printf("a joined thread's id: %ld %s\n", r, strerror(errno));
	return 0;
}

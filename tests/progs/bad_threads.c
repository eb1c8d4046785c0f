// bad_threads: thread creation, joining and scheduling calls with bad
// input: attrs out of range (guard sizes larger than the stack, CPU sets
// that are empty or name no CPU), threads in the wrong state (joined twice,
// detached twice, joined after detach, signalled after exit), keys that
// were deleted or never made, scheduling values and CPU masks the kernel
// refuses, pointers it checks. Then 100 threads show the runtime is whole:
// a G freed twice by a second join would be handed to two new threads.
// goshim-test: shim-max-threads=GOMAXPROCS+3
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <threads.h>
#include "bad.h"

static void *ret_arg(void *arg)
{
	return arg;
}

static int c11_ret(void *arg)
{
	return (int)(intptr_t)arg;
}

static atomic_int go;

static void *wait_go(void *arg)
{
	while (!atomic_load(&go))
		usleep(1000);
	return arg;
}

/* A thread that has ended but was not joined. glibc's sigqueue says ESRCH
 * from the moment the kernel has cleared its tid: the thread has exited. */
static pthread_t ended(void *ret)
{
	pthread_t t;
	OK(pthread_create(&t, NULL, ret_arg, ret));
	while (pthread_sigqueue(t, 0, (union sigval){ 0 }) == 0)
		usleep(1000);
	return t;
}

/* The page tables the process has, in kB (VmPTE). */
static void *page_tables(void *arg)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];

	*(long *)arg = -1;
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, "VmPTE:", 6) == 0)
			sscanf(line + 6, "%ld", (long *)arg);
	if (f)
		fclose(f);
	return NULL;
}

static void attrs(void)
{
	pthread_attr_t a;
	pthread_t t;
	cpu_set_t set;

	OK(pthread_attr_init(&a));
	OK(pthread_attr_setstacksize(&a, 64 << 10));
	OK(pthread_attr_setguardsize(&a, 1 << 20));
	expect("create: guard 1 MiB, stack 64 KiB (glibc adds the guard)",
	       pthread_create(&t, &a, ret_arg, NULL), 0);
	expect("join it", pthread_join(t, NULL), 0);
	/* glibc's guard is a PROT_NONE mapping: it costs no memory, and no
	 * page tables either, however large. */
	long pte = 0;
	OK(pthread_attr_setguardsize(&a, (size_t)64 << 30));
	expect("create: guard 64 GiB", pthread_create(&t, &a, page_tables, &pte),
	       0);
	expect("join it", pthread_join(t, NULL), 0);
	truth("its page tables are under 16 MiB",
	      pte >= 0 && pte < (16 << 10));
	OK(pthread_attr_setguardsize(&a, SIZE_MAX - 4096));
	expect("create: guard SIZE_MAX - 4096",
	       pthread_create(&t, &a, ret_arg, NULL), EINVAL);
	OK(pthread_attr_destroy(&a));

	OK(pthread_attr_init(&a));
	expect("attr setstacksize(PTHREAD_STACK_MIN - 1)",
	       pthread_attr_setstacksize(&a, PTHREAD_STACK_MIN - 1), EINVAL);
	expect("attr setdetachstate(42)", pthread_attr_setdetachstate(&a, 42),
	       EINVAL);
	expect("attr setscope(42)", pthread_attr_setscope(&a, 42), EINVAL);
	expect("attr setinheritsched(42)", pthread_attr_setinheritsched(&a, 42),
	       EINVAL);
	expect("attr setschedpolicy(42)", pthread_attr_setschedpolicy(&a, 42),
	       EINVAL);
	struct sched_param sp = { .sched_priority = 1 };
	expect("attr setschedparam(1) for SCHED_OTHER",
	       pthread_attr_setschedparam(&a, &sp), EINVAL);
	/* None of the refused values stuck: the attr makes a thread. */
	void *r;
	expect("create with the attr", pthread_create(&t, &a, ret_arg, (void *)5), 0);
	expect("join it", pthread_join(t, &r), 0);
	truth("it returned its argument", r == (void *)5);

	CPU_ZERO(&set);
	expect("attr setaffinity_np, no CPU",
	       pthread_attr_setaffinity_np(&a, sizeof set, &set), 0);
	expect("create: affinity to no CPU",
	       pthread_create(&t, &a, ret_arg, NULL), EINVAL);
	CPU_SET(CPU_SETSIZE - 1, &set);
	expect("attr setaffinity_np, CPU 1023 only",
	       pthread_attr_setaffinity_np(&a, sizeof set, &set), 0);
	expect("create: affinity to CPU 1023 only",
	       pthread_create(&t, &a, ret_arg, NULL), EINVAL);
	expect("attr setaffinity_np, size 0",
	       pthread_attr_setaffinity_np(&a, 0, &set), 0);
	expect("create after the affinity is cleared",
	       pthread_create(&t, &a, ret_arg, NULL), 0);
	expect("join it", pthread_join(t, NULL), 0);
	OK(pthread_attr_destroy(&a));
}

static void states(void)
{
	pthread_t t;
	void *r = NULL;

	expect("join self", pthread_join(pthread_self(), &r), EDEADLK);
	expect("tryjoin self", pthread_tryjoin_np(pthread_self(), &r), EBUSY);

	t = ended((void *)7);
	expect("join ended thread", pthread_join(t, &r), 0);
	truth("join value is 7", r == (void *)7);
	/* A joined thread is gone: glibc keeps its descriptor (no thread was
	 * made since to take it over) and answers from it. */
	r = NULL;
	expect("join it again", pthread_join(t, &r), ESRCH);
	expect("tryjoin it again", pthread_tryjoin_np(t, &r), EBUSY);
	struct timespec ts = { 0, 0 };
	expect("timedjoin it again", pthread_timedjoin_np(t, &r, &ts), ESRCH);
	truth("no value from the second joins", r == NULL);
	expect("detach it after the join", pthread_detach(t), ESRCH);
	expect("kill it after the join, SIGUSR1", pthread_kill(t, SIGUSR1), 0);
	expect("sigqueue it after the join, SIGUSR1",
	       pthread_sigqueue(t, SIGUSR1, (union sigval){ 0 }), ESRCH);

	pthread_attr_t a;
	OK(pthread_attr_init(&a));
	OK(pthread_attr_setstacksize(&a, 64 << 10));
	OK(pthread_create(&t, &a, ret_arg, (void *)6));
	OK(pthread_attr_destroy(&a));
	expect("join a thread with a 64 KiB stack", pthread_join(t, &r), 0);
	expect("join it again", pthread_join(t, &r), ESRCH);
	expect("detach it after the join", pthread_detach(t), ESRCH);

	t = ended((void *)8);
	expect("detach ended thread", pthread_detach(t), 0);
	expect("detach it again", pthread_detach(t), EINVAL);
	expect("join it after the detach", pthread_join(t, NULL), EINVAL);

	atomic_store(&go, 0);
	OK(pthread_create(&t, NULL, wait_go, NULL));
	expect("detach running thread", pthread_detach(t), 0);
	expect("detach it again", pthread_detach(t), EINVAL);
	expect("join it", pthread_join(t, NULL), EINVAL);
	expect("tryjoin it", pthread_tryjoin_np(t, NULL), EBUSY);
	atomic_store(&go, 1);

	t = ended((void *)9);
	expect("kill ended thread, signal 0", pthread_kill(t, 0), 0);
	expect("kill ended thread, SIGUSR1", pthread_kill(t, SIGUSR1), 0);
	/* glibc looks at the signal number only for a live thread */
	expect("kill ended thread, signal 99", pthread_kill(t, 99), 0);
	expect("kill ended thread, SIGCANCEL", pthread_kill(t, 32), EINVAL);
	expect("sigqueue ended thread, SIGUSR1",
	       pthread_sigqueue(t, SIGUSR1, (union sigval){ 0 }), ESRCH);
	expect("sigqueue ended thread, signal 99",
	       pthread_sigqueue(t, 99, (union sigval){ 0 }), ESRCH);
	char name[16];
	expect("getname_np of ended thread, 15 bytes",
	       pthread_getname_np(t, name, 15), ERANGE);
	expect("setname_np of ended thread, 16 chars",
	       pthread_setname_np(t, "0123456789abcdef"), ERANGE);
	expect("join it", pthread_join(t, &r), 0);
	truth("join value is 9", r == (void *)9);

	thrd_t c;
	expect("thrd_join self: thrd_error",
	       thrd_join(thrd_current(), NULL) == thrd_error ? 0 : -1, 0);
	OK(thrd_create(&c, c11_ret, NULL) != thrd_success);
	expect("thrd_detach", thrd_detach(c) == thrd_success ? 0 : -1, 0);
	expect("thrd_join after thrd_detach: thrd_error",
	       thrd_join(c, NULL) == thrd_error ? 0 : -1, 0);
}

static void *name_self(void *none)
{
	return (void *)(intptr_t)pthread_getname_np(pthread_self(), none, 16);
}

/* glibc has the kernel write a thread's name (prctl for itself, read of
 * its comm file for another): a buffer it cannot write is EFAULT. */
static void names(void *none)
{
	pthread_t t;
	void *r;

	atomic_store(&go, 0);
	OK(pthread_create(&t, NULL, wait_go, NULL));
	expect("getname_np of another thread, buffer unmapped",
	       pthread_getname_np(t, none, 16), EFAULT);
	expect("getname_np of another thread, buffer in the kernel's half",
	       pthread_getname_np(t, KERNEL_ADDR, 16), EFAULT);
	atomic_store(&go, 1);
	OK(pthread_join(t, NULL));
	OK(pthread_create(&t, NULL, name_self, none));
	OK(pthread_join(t, &r));
	expect("getname_np of itself, buffer unmapped", (int)(intptr_t)r,
	       EFAULT);
}

static void keys(void)
{
	pthread_key_t k, k2;

	OK(pthread_key_create(&k, NULL));
	expect("setspecific", pthread_setspecific(k, (void *)1), 0);
	expect("key_delete", pthread_key_delete(k), 0);
	expect("key_delete again", pthread_key_delete(k), EINVAL);
	expect("setspecific deleted key", pthread_setspecific(k, (void *)2),
	       EINVAL);
	expect("key_delete PTHREAD_KEYS_MAX",
	       pthread_key_delete(PTHREAD_KEYS_MAX), EINVAL);
	expect("key_delete UINT_MAX", pthread_key_delete(UINT_MAX), EINVAL);
	expect("setspecific PTHREAD_KEYS_MAX",
	       pthread_setspecific(PTHREAD_KEYS_MAX, (void *)3), EINVAL);
	expect("setspecific UINT_MAX", pthread_setspecific(UINT_MAX, (void *)3),
	       EINVAL);
	truth("getspecific PTHREAD_KEYS_MAX is NULL",
	      pthread_getspecific(PTHREAD_KEYS_MAX) == NULL);
	truth("getspecific UINT_MAX is NULL",
	      pthread_getspecific(UINT_MAX) == NULL);
	/* The slot made again: the old value is not seen. */
	OK(pthread_key_create(&k2, NULL));
	printf("key made again: same number: %s\n", k2 == k ? "yes" : "no");
	truth("getspecific of the new key is NULL",
	      pthread_getspecific(k2) == NULL);
	OK(pthread_key_delete(k2));
}

static void sched(void *none)
{
	struct sched_param sp = { 0 }, big = { .sched_priority = 100 },
			   one = { .sched_priority = 1 };
	cpu_set_t set, empty;
	pthread_t self = pthread_self();
	int pol;

	CPU_ZERO(&empty);
	OK(pthread_getaffinity_np(self, sizeof set, &set));
	expect("setschedparam policy 42", pthread_setschedparam(self, 42, &sp),
	       EINVAL);
	expect("setschedparam FIFO priority 100",
	       pthread_setschedparam(self, SCHED_FIFO, &big), EINVAL);
	expect("setschedparam OTHER priority 1",
	       pthread_setschedparam(self, SCHED_OTHER, &one), EINVAL);
	expect("setschedprio 100", pthread_setschedprio(self, 100), EINVAL);
	expect("setschedprio -1", pthread_setschedprio(self, -1), EINVAL);
	expect("getschedparam", pthread_getschedparam(self, &pol, &sp), 0);
	truth("still SCHED_OTHER, priority 0",
	      pol == SCHED_OTHER && sp.sched_priority == 0);
	expect("setaffinity_np, size 0", pthread_setaffinity_np(self, 0, &set),
	       EINVAL);
	expect("setaffinity_np, no CPU",
	       pthread_setaffinity_np(self, sizeof empty, &empty), EINVAL);
	expect("setaffinity_np, unmapped",
	       pthread_setaffinity_np(self, sizeof set, none), EFAULT);
	expect("getaffinity_np, 1 byte", pthread_getaffinity_np(self, 1, &set),
	       EINVAL);
	expect("getaffinity_np, unmapped",
	       pthread_getaffinity_np(self, sizeof set, none), EFAULT);

	EXPECT_ERRNO("sched_setaffinity, size 0",
		     sched_setaffinity(0, 0, &set), EINVAL);
	EXPECT_ERRNO("sched_setaffinity, no CPU",
		     sched_setaffinity(0, sizeof empty, &empty), EINVAL);
	EXPECT_ERRNO("sched_setaffinity, unmapped",
		     sched_setaffinity(0, sizeof set, none), EFAULT);
	EXPECT_ERRNO("sched_setaffinity, pid -1",
		     sched_setaffinity(-1, sizeof set, &set), ESRCH);
	EXPECT_ERRNO("sched_getaffinity, 1 byte",
		     sched_getaffinity(0, 1, &set), EINVAL);
	EXPECT_ERRNO("sched_getaffinity, unmapped",
		     sched_getaffinity(0, sizeof set, none), EFAULT);
	EXPECT_ERRNO("sched_getaffinity, pid INT_MAX",
		     sched_getaffinity(INT_MAX, sizeof set, &set), ESRCH);
	EXPECT_ERRNO("sched_setscheduler policy 42",
		     sched_setscheduler(0, 42, &sp), EINVAL);
	EXPECT_ERRNO("sched_setscheduler, param unmapped",
		     sched_setscheduler(0, SCHED_OTHER, none), EFAULT);
	EXPECT_ERRNO("sched_setscheduler, param NULL",
		     sched_setscheduler(0, SCHED_OTHER, NULL), EINVAL);
	EXPECT_ERRNO("sched_setscheduler FIFO priority 100",
		     sched_setscheduler(0, SCHED_FIFO, &big), EINVAL);
	EXPECT_ERRNO("sched_setscheduler, pid -1",
		     sched_setscheduler(-1, SCHED_OTHER, &sp), EINVAL);
	EXPECT_ERRNO("sched_setparam, unmapped", sched_setparam(0, none),
		     EFAULT);
	EXPECT_ERRNO("sched_setparam priority 1 for SCHED_OTHER",
		     sched_setparam(0, &one), EINVAL);
	EXPECT_ERRNO("sched_getparam, unmapped", sched_getparam(0, none),
		     EFAULT);
	EXPECT_ERRNO("sched_getparam, pid -1", sched_getparam(-1, &sp), EINVAL);
	EXPECT_ERRNO("sched_getscheduler, pid -1", sched_getscheduler(-1),
		     EINVAL);
	EXPECT_RET("sched_getscheduler", sched_getscheduler(0), SCHED_OTHER, 0);
	EXPECT_ERRNO("setpriority, which 42", setpriority(42, 0, 0), EINVAL);
	EXPECT_ERRNO("setpriority, pid INT_MAX",
		     setpriority(PRIO_PROCESS, INT_MAX, 0), ESRCH);
	EXPECT_ERRNO("getpriority, which 42", getpriority(42, 0), EINVAL);
	errno = 0;
	getpriority(PRIO_PROCESS, 0); /* the value is what `nice` gave */
	truth("getpriority answers without error", errno == 0);
}

int main(void)
{
	void *none = bad_start();

	attrs();
	states();
	names(none);
	keys();
	sched(none);
	return bad_finish("bad_threads");
}

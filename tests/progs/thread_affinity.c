// A thread's own CPU affinity, scheduling policy and nice value: set on
// itself or on another thread, inherited by the threads it creates, taken
// from the creation attr, reported back by the get calls, and never seen
// by other threads (under goshim the goroutine is wired to an OS thread of
// its own while its values differ from the process's). Bad values get the
// kernel's errors.
// goshim-test: shim-max-threads=GOMAXPROCS+6
// goshim-test: timeout=60
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>

#define NBYSTANDERS 8

static cpu_set_t process_mask;
static int process_nice; /* a niced harness runs us niced */

/* The kernel's view of the calling OS thread: nice and policy. */
static void real_thread(int *nice, int *policy)
{
	char buf[1024];
	FILE *f = fopen("/proc/thread-self/stat", "r");
	if (!f || !fgets(buf, sizeof buf, f)) {
		perror("stat");
		exit(1);
	}
	fclose(f);
	char *p = strrchr(buf, ')') + 2; /* field 3 */
	long v[40];
	for (int i = 3; i <= 41; i++) {
		if (i != 3)
			v[i - 3] = strtol(p, &p, 10);
		else
			p++;
		while (*p == ' ')
			p++;
	}
	*nice = (int)v[19 - 3];
	*policy = (int)v[41 - 3];
}

static int only_cpu0(void)
{
	cpu_set_t m;
	pthread_getaffinity_np(pthread_self(), sizeof m, &m);
	return CPU_COUNT(&m) == 1 && CPU_ISSET(0, &m);
}

static void *pinned(void *arg)
{
	cpu_set_t m;
	int off_cpu = 0, bad = 0;

	(void)arg;
	CPU_ZERO(&m);
	CPU_SET(0, &m);
	if (pthread_setaffinity_np(pthread_self(), sizeof m, &m) != 0)
		return (void *)1L;
	for (int i = 0; i < 50; i++) {
		if (i % 2)
			usleep(200);
		else
			sched_yield();
		off_cpu += sched_getcpu() != 0;
		bad += !only_cpu0();
	}
	/* Back to the process's mask. */
	pthread_setaffinity_np(pthread_self(), sizeof process_mask,
			       &process_mask);
	cpu_set_t now;
	sched_getaffinity(0, sizeof now, &now);
	bad += !CPU_EQUAL(&now, &process_mask);
	return (void *)(long)(off_cpu + bad);
}

static void *bystander(void *arg)
{
	int bad = 0, nice, policy;
	(void)arg;
	for (int i = 0; i < 50; i++) {
		cpu_set_t m;
		usleep(100);
		sched_getaffinity(0, sizeof m, &m);
		bad += !CPU_EQUAL(&m, &process_mask);
		bad += getpriority(PRIO_PROCESS, 0) != process_nice;
		bad += sched_getscheduler(0) != SCHED_OTHER;
		real_thread(&nice, &policy);
		bad += nice != process_nice || policy != SCHED_OTHER;
	}
	return (void *)(long)bad;
}

static void *report_nice(void *arg)
{
	int nice, policy;
	(void)arg;
	usleep(1000);
	real_thread(&nice, &policy);
	return (void *)(long)(getpriority(PRIO_PROCESS, 0) * 100 + nice);
}

static void *niced(void *arg)
{
	pthread_t t;
	void *r;
	int nice, policy;

	(void)arg;
	if (setpriority(PRIO_PROCESS, 0, 5) != 0)
		return (void *)-1L;
	usleep(2000);
	real_thread(&nice, &policy);
	pthread_create(&t, NULL, report_nice, NULL);
	pthread_join(t, &r);
	/* own nice (kernel view, 5) * 1000 + child's reported*100 + real */
	return (void *)(long)(getpriority(PRIO_PROCESS, 0) * 10000 +
			      nice * 1000 + (long)r);
}

static volatile int batch_go;

static void *becomes_batch(void *arg)
{
	int nice, policy;
	(void)arg;
	while (!batch_go)
		usleep(100);
	usleep(1000);
	real_thread(&nice, &policy);
	return (void *)(long)(sched_getscheduler(0) * 10 + policy);
}

static void *report_cpu(void *arg)
{
	(void)arg;
	usleep(500);
	return (void *)(long)(only_cpu0() && sched_getcpu() == 0);
}

int main(void)
{
	pthread_t p, b[NBYSTANDERS], n, t;
	void *r;
	long bad = 0;

	sched_getaffinity(0, sizeof process_mask, &process_mask);
	process_nice = getpriority(PRIO_PROCESS, 0);

	pthread_create(&p, NULL, pinned, NULL);
	for (int i = 0; i < NBYSTANDERS; i++)
		pthread_create(&b[i], NULL, bystander, NULL);
	pthread_join(p, &r);
	printf("pinned thread ran on CPU 0 only and saw its mask: %s\n",
	       r ? "NO" : "yes");
	for (int i = 0; i < NBYSTANDERS; i++) {
		pthread_join(b[i], &r);
		bad += (long)r;
	}
	printf("other threads kept the process's values: %s\n",
	       bad ? "NO" : "yes");

	pthread_create(&n, NULL, niced, NULL);
	pthread_join(n, &r);
	printf("nice 5: self %ld, kernel %ld, child inherits %ld (kernel %ld)\n",
	       (long)r / 10000, (long)r / 1000 % 10, (long)r / 100 % 10,
	       (long)r % 100);
	pthread_create(&t, NULL, report_nice, NULL);
	pthread_join(t, &r);
	printf("a later thread has nice %ld (kernel %ld)\n", (long)r / 100,
	       (long)r % 100);

	/* Set on another thread. */
	struct sched_param sp = { 0 };
	int pol;
	pthread_create(&t, NULL, becomes_batch, NULL);
	printf("setschedparam(other, SCHED_BATCH): %d\n",
	       pthread_setschedparam(t, SCHED_BATCH, &sp));
	pthread_getschedparam(t, &pol, &sp);
	printf("getschedparam(other): policy %s prio %d\n",
	       pol == SCHED_BATCH ? "SCHED_BATCH" : "?", sp.sched_priority);
	batch_go = 1;
	pthread_join(t, &r);
	printf("that thread sees policy %ld, kernel %ld\n", (long)r / 10,
	       (long)r % 10);

	/* From the creation attr. */
	pthread_attr_t a;
	cpu_set_t m;
	CPU_ZERO(&m);
	CPU_SET(0, &m);
	pthread_attr_init(&a);
	pthread_attr_setaffinity_np(&a, sizeof m, &m);
	pthread_create(&t, &a, report_cpu, NULL);
	pthread_join(t, &r);
	printf("attr affinity {0}: %s\n", r ? "ran on CPU 0" : "NO");
	pthread_attr_setinheritsched(&a, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&a, SCHED_OTHER);
	sp.sched_priority = 50;
	pthread_attr_setschedparam(&a, &sp);
	printf("explicit SCHED_OTHER prio 50: %s\n",
	       strerror(pthread_create(&t, &a, report_cpu, NULL)));
	pthread_attr_destroy(&a);

	/* Errors. */
	sp.sched_priority = 0;
	printf("bad policy: %s\n",
	       strerror(pthread_setschedparam(pthread_self(), 12345, &sp)));
	sp.sched_priority = 50;
	printf("SCHED_OTHER prio 50: %s\n",
	       strerror(pthread_setschedparam(pthread_self(), SCHED_OTHER,
					      &sp)));
	CPU_ZERO(&m);
	CPU_SET(CPU_SETSIZE - 1, &m);
	printf("mask with no usable CPU: %s\n",
	       strerror(pthread_setaffinity_np(pthread_self(), sizeof m, &m)));
	printf("getaffinity with 1 byte: %s\n",
	       strerror(pthread_getaffinity_np(pthread_self(), 1, &m)));
	CPU_ZERO(&m);
	CPU_SET(0, &m);
	int rc = sched_setaffinity(999999999, sizeof m, &m);
	printf("sched_setaffinity(no such pid): %d %s\n", rc, strerror(errno));
	sched_getaffinity(0, sizeof m, &m);
	printf("main still has the process's mask: %s\n",
	       CPU_EQUAL(&m, &process_mask) ? "yes" : "no");
	return 0;
}

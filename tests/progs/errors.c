// errors: POSIX and GNU error returns and attribute queries of the thread
// API, and the C11 <threads.h> API. Each check prints "what: result" so the
// output compares line by line with a native run; a wrong result is also
// reported on stderr and makes the exit status 1.
// goshim-test: shim-max-threads=GOMAXPROCS+3
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>
#include <time.h>

static int failures;

static const char *ename(int e)
{
	static char buf[32];
	switch (e) {
	case 0: return "0";
	case EDEADLK: return "EDEADLK";
	case EINVAL: return "EINVAL";
	case EBUSY: return "EBUSY";
	case ETIMEDOUT: return "ETIMEDOUT";
	case ERANGE: return "ERANGE";
	case ESRCH: return "ESRCH";
	case EAGAIN: return "EAGAIN";
	case EPERM: return "EPERM";
	case ENOTSUP: return "ENOTSUP";
	case ENOMEM: return "ENOMEM";
	}
	snprintf(buf, sizeof buf, "errno %d", e);
	return buf;
}

static const char *thrdname(int r)
{
	switch (r) {
	case thrd_success: return "thrd_success";
	case thrd_error: return "thrd_error";
	case thrd_nomem: return "thrd_nomem";
	case thrd_timedout: return "thrd_timedout";
	case thrd_busy: return "thrd_busy";
	}
	return "thrd_?";
}

/* print "what: got"; complain unless got == want */
static void expect(const char *what, int got, int want)
{
	printf("%s: %s\n", what, ename(got));
	if (got != want) {
		fprintf(stderr, "errors: %s: got %s", what, ename(got));
		fprintf(stderr, ", want %s\n", ename(want));
		failures++;
	}
}

static void expect_thrd(const char *what, int got, int want)
{
	printf("%s: %s\n", what, thrdname(got));
	if (got != want) {
		fprintf(stderr, "errors: %s: got %s", what, thrdname(got));
		fprintf(stderr, ", want %s\n", thrdname(want));
		failures++;
	}
}

static void truth(const char *what, int ok)
{
	printf("%s: %s\n", what, ok ? "yes" : "no");
	if (!ok) {
		fprintf(stderr, "errors: %s: no\n", what);
		failures++;
	}
}

#define OK(call) do { int e_ = (call); if (e_) { \
	fprintf(stderr, "errors: %s:%d: %s: %s\n", __FILE__, __LINE__, #call, ename(e_)); \
	exit(1); } } while (0)

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

static struct timespec deadline(clockid_t clk, long ms)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	return ts;
}

static int passed(clockid_t clk, struct timespec d)
{
	struct timespec now;
	clock_gettime(clk, &now);
	return now.tv_sec > d.tv_sec || (now.tv_sec == d.tv_sec && now.tv_nsec >= d.tv_nsec);
}

/* ---- a thread that runs until its gate opens ------------------------------ */
struct gate {
	atomic_int open, done;
	intptr_t ret;
};

static void *held(void *arg)
{
	struct gate *g = arg;
	while (!atomic_load(&g->open))
		nap_ms(1);
	atomic_store(&g->done, 1);
	return (void *)g->ret;
}

static void wait_done(struct gate *g)
{
	while (!atomic_load(&g->done))
		nap_ms(1);
}

/* ---- attributes seen from inside a thread --------------------------------- */
struct seen {
	int detach;
	size_t stacksize, guardsize;
	void *stackaddr;
	int local_inside;
	atomic_int done;
};

static void *look_at_self(void *arg)
{
	struct seen *s = arg;
	pthread_attr_t a;
	char local;
	OK(pthread_getattr_np(pthread_self(), &a));
	OK(pthread_attr_getdetachstate(&a, &s->detach));
	OK(pthread_attr_getstack(&a, &s->stackaddr, &s->stacksize));
	OK(pthread_attr_getguardsize(&a, &s->guardsize));
	OK(pthread_attr_destroy(&a));
	s->local_inside = (char *)s->stackaddr <= &local &&
			  &local < (char *)s->stackaddr + s->stacksize;
	atomic_store(&s->done, 1);
	return NULL;
}

static void *detach_self_then_look(void *arg)
{
	struct seen *s = arg;
	OK(pthread_detach(pthread_self()));
	return look_at_self(s);
}

/* ---- C11 ------------------------------------------------------------------ */
static thrd_t c11_seen_self;
static tss_t tss_key, tss_gone;
static atomic_int tss_dtor_calls, tss_gone_calls, once_calls, c11_detached_done;
static atomic_int tss_gone_set, tss_gone_deleted;
static once_flag c11_once = ONCE_FLAG_INIT;

static void tss_dtor(void *p)
{
	atomic_fetch_add(&tss_dtor_calls, (int)(intptr_t)p);
}

static void tss_gone_dtor(void *p)
{
	(void)p;
	atomic_fetch_add(&tss_gone_calls, 1);
}

static void once_fn(void)
{
	atomic_fetch_add(&once_calls, 1);
	nap_ms(2);
}

static atomic_int exit_now = 1;

static int exit_deep(int depth)
{
	if (depth == 0) {
		if (atomic_load(&exit_now))
			thrd_exit(5);
		return 0;
	}
	return 1 + exit_deep(depth - 1);
}

static int c11_main(void *arg)
{
	c11_seen_self = thrd_current();
	thrd_yield();
	if (tss_get(tss_key) != NULL)
		return -1;
	if (tss_set(tss_key, (void *)(intptr_t)3) != thrd_success)
		return -2;
	thrd_yield();
	if (tss_get(tss_key) != (void *)(intptr_t)3)
		return -3;
	call_once(&c11_once, once_fn);
	return (int)(intptr_t)arg;
}

static int c11_exit(void *arg)
{
	(void)arg;
	call_once(&c11_once, once_fn);
	return exit_deep(10);   /* never returns */
}

static int c11_detached(void *arg)
{
	struct timespec ts = { 0, 1000000 };
	(void)arg;
	thrd_sleep(&ts, NULL);
	atomic_store(&c11_detached_done, 1);
	return 0;
}

static int c11_tss_gone(void *arg)
{
	(void)arg;
	tss_set(tss_gone, (void *)1);   /* key deleted before this thread ends */
	atomic_store(&tss_gone_set, 1);
	while (!atomic_load(&tss_gone_deleted))
		thrd_yield();
	return 0;
}

int main(void)
{
	pthread_t t;
	pthread_attr_t attr;
	void *r;

	/* ---- join errors */
	expect("join self", pthread_join(pthread_self(), NULL), EDEADLK);

	struct gate g1 = { .ret = 1 };
	OK(pthread_attr_init(&attr));
	OK(pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED));
	OK(pthread_create(&t, &attr, held, &g1));
	expect("join detached", pthread_join(t, NULL), EINVAL);
	atomic_store(&g1.open, 1);
	wait_done(&g1);
	OK(pthread_attr_destroy(&attr));

	struct gate g2 = { .ret = 7 };
	OK(pthread_create(&t, NULL, held, &g2));
	expect("tryjoin running", pthread_tryjoin_np(t, &r), EBUSY);
	atomic_store(&g2.open, 1);
	int e;
	for (int i = 0; (e = pthread_tryjoin_np(t, &r)) == EBUSY && i < 60000; i++)
		nap_ms(1);
	expect("tryjoin after exit", e, 0);
	truth("tryjoin value is 7", r == (void *)7);

	struct gate g3 = { .ret = 8 };
	OK(pthread_create(&t, NULL, held, &g3));
	struct timespec d = deadline(CLOCK_REALTIME, 20);
	expect("timedjoin running, 20 ms", pthread_timedjoin_np(t, &r, &d), ETIMEDOUT);
	truth("timedjoin returned after its deadline", passed(CLOCK_REALTIME, d));
	d = deadline(CLOCK_REALTIME, -1000);
	expect("timedjoin running, deadline passed", pthread_timedjoin_np(t, &r, &d), ETIMEDOUT);
	atomic_store(&g3.open, 1);
	d = deadline(CLOCK_REALTIME, 60000);
	expect("timedjoin exiting, 60 s", pthread_timedjoin_np(t, &r, &d), 0);
	truth("timedjoin value is 8", r == (void *)8);

	struct gate g4 = { .ret = 9 };
	OK(pthread_create(&t, NULL, held, &g4));
	d = deadline(CLOCK_MONOTONIC, 20);
	expect("clockjoin MONOTONIC running, 20 ms", pthread_clockjoin_np(t, &r, CLOCK_MONOTONIC, &d), ETIMEDOUT);
	truth("clockjoin returned after its deadline", passed(CLOCK_MONOTONIC, d));
	expect("clockjoin PROCESS_CPUTIME_ID", pthread_clockjoin_np(t, &r, CLOCK_PROCESS_CPUTIME_ID, &d), EINVAL);
	atomic_store(&g4.open, 1);
	d = deadline(CLOCK_MONOTONIC, 60000);
	expect("clockjoin MONOTONIC exiting, 60 s", pthread_clockjoin_np(t, &r, CLOCK_MONOTONIC, &d), 0);
	truth("clockjoin value is 9", r == (void *)9);

	/* ---- attributes */
	size_t sz;
	OK(pthread_attr_init(&attr));
	expect("setstacksize(PTHREAD_STACK_MIN - 1)", pthread_attr_setstacksize(&attr, PTHREAD_STACK_MIN - 1), EINVAL);
	expect("setstacksize(PTHREAD_STACK_MIN)", pthread_attr_setstacksize(&attr, PTHREAD_STACK_MIN), 0);
	OK(pthread_attr_getstacksize(&attr, &sz));
	truth("getstacksize gives PTHREAD_STACK_MIN", sz == (size_t)PTHREAD_STACK_MIN);
	expect("setscope(PTHREAD_SCOPE_PROCESS)", pthread_attr_setscope(&attr, PTHREAD_SCOPE_PROCESS), ENOTSUP);
	expect("setscope(PTHREAD_SCOPE_SYSTEM)", pthread_attr_setscope(&attr, PTHREAD_SCOPE_SYSTEM), 0);
	OK(pthread_attr_destroy(&attr));

	/* getattr_np: joinable thread with a 1 MiB stack, seen from inside */
	struct seen s = { 0 };
	OK(pthread_attr_init(&attr));
	OK(pthread_attr_setstacksize(&attr, 1 << 20));
	OK(pthread_create(&t, &attr, look_at_self, &s));
	OK(pthread_join(t, NULL));
	truth("getattr_np in thread: joinable", s.detach == PTHREAD_CREATE_JOINABLE);
	truth("getattr_np in thread: stack size >= 1 MiB", s.stacksize >= (1 << 20));
	truth("getattr_np in thread: a local lies in the stack", s.local_inside);
	/* and from outside, while it runs */
	struct gate g5 = { 0 };
	OK(pthread_create(&t, &attr, held, &g5));
	pthread_attr_t a2;
	int ds;
	OK(pthread_getattr_np(t, &a2));
	OK(pthread_attr_getdetachstate(&a2, &ds));
	OK(pthread_attr_getstacksize(&a2, &sz));
	OK(pthread_attr_destroy(&a2));
	truth("getattr_np from outside: joinable", ds == PTHREAD_CREATE_JOINABLE);
	truth("getattr_np from outside: stack size >= 1 MiB", sz >= (1 << 20));
	atomic_store(&g5.open, 1);
	OK(pthread_join(t, NULL));
	/* created detached */
	static struct seen sd, sj;   /* no join: outlive the threads */
	OK(pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED));
	OK(pthread_create(&t, &attr, look_at_self, &sd));
	OK(pthread_attr_destroy(&attr));
	/* joinable, then pthread_detach(pthread_self()) */
	OK(pthread_create(&t, NULL, detach_self_then_look, &sj));
	while (!atomic_load(&sj.done) || !atomic_load(&sd.done))
		nap_ms(1);
	truth("getattr_np after detaching self: detached", sj.detach == PTHREAD_CREATE_DETACHED);
	truth("getattr_np in thread created detached: detached", sd.detach == PTHREAD_CREATE_DETACHED);
	/* main thread */
	struct seen sm = { 0 };
	look_at_self(&sm);
	truth("getattr_np in main: a local lies in the stack", sm.local_inside);

	/* pthread_attr_setstack: caller-provided 256 KiB stack */
	size_t ssz = 256 << 10;
	char *mem = aligned_alloc(4096, ssz);
	void *got_addr;
	size_t got_sz;
	OK(pthread_attr_init(&attr));
	expect("setstack with size PTHREAD_STACK_MIN - 1", pthread_attr_setstack(&attr, mem, PTHREAD_STACK_MIN - 1), EINVAL);
	expect("setstack 256 KiB", pthread_attr_setstack(&attr, mem, ssz), 0);
	OK(pthread_attr_getstack(&attr, &got_addr, &got_sz));
	truth("getstack gives it back", got_addr == mem && got_sz == ssz);
	struct seen su = { 0 };
	OK(pthread_create(&t, &attr, look_at_self, &su));
	OK(pthread_join(t, NULL));
	OK(pthread_attr_destroy(&attr));
	truth("own stack: a local lies in the given memory", su.local_inside &&
	      (char *)su.stackaddr >= mem && (char *)su.stackaddr + su.stacksize <= mem + ssz);
	truth("own stack: getattr_np reports the given stack",
	      su.stackaddr == mem && su.stacksize == ssz);
	free(mem);

	/* guard size */
	OK(pthread_attr_init(&attr));
	expect("setguardsize(8192)", pthread_attr_setguardsize(&attr, 8192), 0);
	OK(pthread_attr_getguardsize(&attr, &sz));
	truth("getguardsize gives 8192", sz == 8192);
	struct seen sg = { 0 };
	OK(pthread_create(&t, &attr, look_at_self, &sg));
	OK(pthread_join(t, NULL));
	OK(pthread_attr_destroy(&attr));
	printf("getattr_np in thread: guard size %zu\n", sg.guardsize);
	truth("getattr_np in thread: a local lies in the stack", sg.local_inside);

	/* ---- names */
	char name[16];
	expect("setname_np self \"errors-main\"", pthread_setname_np(pthread_self(), "errors-main"), 0);
	expect("getname_np self", pthread_getname_np(pthread_self(), name, sizeof name), 0);
	printf("name: %s\n", name);
	expect("setname_np 16 chars", pthread_setname_np(pthread_self(), "0123456789abcdef"), ERANGE);
	expect("getname_np into 8 bytes", pthread_getname_np(pthread_self(), name, 8), ERANGE);
	struct gate g6 = { 0 };
	OK(pthread_create(&t, NULL, held, &g6));
	expect("setname_np other \"held-thread\"", pthread_setname_np(t, "held-thread"), 0);
	expect("getname_np other", pthread_getname_np(t, name, sizeof name), 0);
	printf("name: %s\n", name);
	atomic_store(&g6.open, 1);
	OK(pthread_join(t, NULL));

	/* ---- concurrency level */
	expect("setconcurrency(-1)", pthread_setconcurrency(-1), EINVAL);
	expect("setconcurrency(4)", pthread_setconcurrency(4), 0);
	printf("getconcurrency: %d\n", pthread_getconcurrency());
	truth("getconcurrency is 4", pthread_getconcurrency() == 4);
	expect("setconcurrency(0)", pthread_setconcurrency(0), 0);
	truth("getconcurrency is 0", pthread_getconcurrency() == 0);

	/* ---- C11 threads */
	thrd_t ct, cts[16];
	int res;
	expect_thrd("tss_create", tss_create(&tss_key, tss_dtor), thrd_success);
	expect_thrd("tss_set in main", tss_set(tss_key, (void *)(intptr_t)100), thrd_success);
	expect_thrd("thrd_create", thrd_create(&ct, c11_main, (void *)(intptr_t)11), thrd_success);
	expect_thrd("thrd_join", thrd_join(ct, &res), thrd_success);
	printf("thrd_join result: %d\n", res);
	truth("thrd_join result is 11", res == 11);
	truth("thrd_current in the thread equals the handle", thrd_equal(c11_seen_self, ct) != 0);
	truth("thrd_current in main differs from it", thrd_equal(thrd_current(), ct) == 0);
	truth("thrd_current in main equals pthread_self", thrd_equal(thrd_current(), (thrd_t)pthread_self()) != 0);
	truth("tss destructor ran once with the thread's value", atomic_load(&tss_dtor_calls) == 3);
	truth("tss_get in main unchanged", tss_get(tss_key) == (void *)(intptr_t)100);
	expect_thrd("thrd_join self", thrd_join(thrd_current(), &res), thrd_error);
	for (int i = 0; i < 16; i++)
		OK(thrd_create(&cts[i], c11_exit, NULL) != thrd_success);
	int all5 = 1;
	for (int i = 0; i < 16; i++) {
		OK(thrd_join(cts[i], &res) != thrd_success);
		all5 &= res == 5;
	}
	truth("thrd_exit(5) from 10 frames deep, 16 threads: join gives 5", all5);
	printf("call_once: init ran %d time(s)\n", atomic_load(&once_calls));
	truth("call_once ran its function once", atomic_load(&once_calls) == 1);
	expect_thrd("thrd_create for detach", thrd_create(&ct, c11_detached, NULL), thrd_success);
	expect_thrd("thrd_detach", thrd_detach(ct), thrd_success);
	while (!atomic_load(&c11_detached_done))
		thrd_yield();
	struct timespec rem, one_ms = { 0, 1000000 };
	printf("thrd_sleep 1 ms: %d\n", thrd_sleep(&one_ms, &rem));
	/* a tss key deleted while a thread holds a value: no destructor call */
	OK(tss_create(&tss_gone, tss_gone_dtor) != thrd_success);
	OK(thrd_create(&ct, c11_tss_gone, NULL) != thrd_success);
	while (!atomic_load(&tss_gone_set))
		thrd_yield();
	tss_delete(tss_gone);
	atomic_store(&tss_gone_deleted, 1);
	OK(thrd_join(ct, &res) != thrd_success);
	printf("tss_delete, then thread exit: %d destructor calls\n", atomic_load(&tss_gone_calls));
	truth("no destructor for a deleted key", atomic_load(&tss_gone_calls) == 0);
	tss_delete(tss_key);

	if (failures) {
		fprintf(stderr, "errors: %d check(s) failed\n", failures);
		return 1;
	}
	printf("OK\n");
	return 0;
}

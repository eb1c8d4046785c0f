// futex_semantics: what syscall(SYS_futex) answers, line by line the same
// natively and under goshim (where goroutines park):
// EAGAIN on a value that differs, ETIMEDOUT no sooner than asked (relative
// FUTEX_WAIT, absolute FUTEX_WAIT_BITSET on CLOCK_MONOTONIC and with
// FUTEX_CLOCK_REALTIME), EINTR after a handler (and the untimed wait
// started over under SA_RESTART), EINVAL, EFAULT and ENOSYS; bitsets; wake
// counts; FUTEX_REQUEUE and FUTEX_CMP_REQUEUE with their counts and
// EAGAIN; FUTEX_WAKE_OP; a shared wait on private memory, which private
// wakes do not meet; a program thread and a thread goshim did not
// create (a SIGEV_THREAD timer's callback) waking each other and both
// waiting on one word; a shared futex in MAP_SHARED memory across fork.
// Waiters are known to wait when a CMP_REQUEUE has moved them (its count),
// so no count depends on timing.
// goshim-test: shim-max-threads=GOMAXPROCS+8
// goshim-test: timeout=60
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef _Atomic uint32_t word_t;

static long fx(word_t *a, int op, uint32_t val, const void *ts, word_t *a2,
	       uint32_t val3)
{
	long r = syscall(SYS_futex, a, op, val, ts, a2, val3);
	return r < 0 ? -errno : r;
}

static const char *res(long r)
{
	static char buf[8][32];
	static int i;
	char *b = buf[i++ % 8];
	switch (r) {
	case -EAGAIN: return "EAGAIN";
	case -ETIMEDOUT: return "ETIMEDOUT";
	case -EINTR: return "EINTR";
	case -EINVAL: return "EINVAL";
	case -EFAULT: return "EFAULT";
	case -ENOSYS: return "ENOSYS";
	}
	snprintf(b, 32, "%ld", r);
	return b;
}

static int64_t now_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static struct timespec ts_of(int64_t ns)
{
	return (struct timespec){ ns / 1000000000, ns % 1000000000 };
}

static void nap_ms(long ms)
{
	struct timespec ts = ts_of(ms * 1000000);
	nanosleep(&ts, NULL);
}

/* Move every waiter on from to to until n have been moved (each move
 * proves a waiter was waiting). */
static void gather(word_t *from, uint32_t val, word_t *to, int n)
{
	long moved = 0;
	while (moved < n) {
		long r = fx(from, FUTEX_CMP_REQUEUE_PRIVATE, 0,
			    (void *)(long)INT_MAX, to, val);
		if (r > 0)
			moved += r;
		else
			nap_ms(5);
	}
}

/* ---- waiters ---- */

struct waiter {
	pthread_t t;
	word_t *word;
	uint32_t val;
	long ret;
};

static void *wait_once(void *arg)
{
	struct waiter *w = arg;
	w->ret = fx(w->word, FUTEX_WAIT_PRIVATE, w->val, NULL, NULL, 0);
	return NULL;
}

static void start(struct waiter *w, word_t *word)
{
	w->word = word;
	w->val = atomic_load(word);
	pthread_create(&w->t, NULL, wait_once, w);
}

/* ---- signals ---- */

static atomic_int handled;

static void on_usr1(int sig)
{
	(void)sig;
	atomic_fetch_add(&handled, 1);
}

static void handler(int flags)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sa.sa_flags = flags;
	sigaction(SIGUSR1, &sa, NULL);
}

struct sigwaiter {
	word_t word;
	bool timed;
	atomic_bool done;
	long ret;
};

static void *sig_wait(void *arg)
{
	struct sigwaiter *s = arg;
	struct timespec ten = { 10, 0 };
	s->ret = fx(&s->word, FUTEX_WAIT_PRIVATE, 0, s->timed ? &ten : NULL,
		    NULL, 0);
	atomic_store(&s->done, true);
	return NULL;
}

/* A handler runs during the wait: its result. With restart, the wait
 * must go on after the handlers, until a wake. */
static const char *interrupted(int flags, bool timed, bool restart)
{
	struct sigwaiter s = { .timed = timed };
	pthread_t t;

	handler(flags);
	atomic_store(&handled, 0);
	pthread_create(&t, NULL, sig_wait, &s);
	/* A signal before the wait has begun does not end it: send until
	 * the wait is over, or (restart) a few were handled after 50 ms. */
	while (!atomic_load(&s.done)) {
		nap_ms(50);
		if (restart && atomic_load(&handled) >= 3)
			break;
		pthread_kill(t, SIGUSR1);
	}
	if (restart) {
		nap_ms(50);
		if (atomic_load(&s.done))
			return "ended by a handler";
		atomic_store(&s.word, 1);
		while (!atomic_load(&s.done)) {
			fx(&s.word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
			nap_ms(5);
		}
	}
	pthread_join(t, NULL);
	return res(s.ret);
}

/* ---- a thread goshim did not create ---- */

static word_t to_foreign, to_program, both, both_park;
static atomic_int stage;
static long foreign_wait_ret, foreign_both_ret;
static atomic_long foreign_wake_ret;

static void callback(union sigval sv)
{
	(void)sv;
	struct timespec ten = { 10, 0 };
	/* Woken by a program thread. */
	foreign_wait_ret = fx(&to_foreign, FUTEX_WAIT_PRIVATE, 0, &ten, NULL,
			      0);
	/* Wakes a program thread: until one was there to wake. */
	long r;
	while ((r = fx(&to_program, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0)) ==
	       0)
		nap_ms(5);
	atomic_store(&foreign_wake_ret, r);
	/* Waits with a program thread on one word. */
	foreign_both_ret = fx(&both, FUTEX_WAIT_PRIVATE, 0, &ten, NULL, 0);
	atomic_store(&stage, 1);
}

static void foreign(void)
{
	struct sigevent sev;
	timer_t tm;
	struct itimerspec its = { .it_value = { 0, 1000000 } };
	struct waiter prog, prog2;

	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_THREAD;
	sev.sigev_notify_function = callback;
	if (timer_create(CLOCK_MONOTONIC, &sev, &tm) != 0) {
		perror("timer_create");
		exit(1);
	}
	start(&prog, &to_program);
	timer_settime(tm, 0, &its, NULL);
	long r;
	while ((r = fx(&to_foreign, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0)) ==
	       0)
		nap_ms(5);
	printf("program thread wakes foreign waiter: %s\n", res(r));
	pthread_join(prog.t, NULL);
	/* The waiter can end before its waker has stored what its call
	 * returned. */
	while (atomic_load(&foreign_wake_ret) == 0)
		nap_ms(5);
	printf("foreign thread wakes program waiter: %s, its wait %s\n",
	       res(atomic_load(&foreign_wake_ret)), res(prog.ret));
	start(&prog2, &both);
	gather(&both, 0, &both_park, 2);
	long w1 = fx(&both_park, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	long w2 = fx(&both_park, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	pthread_join(prog2.t, NULL);
	while (!atomic_load(&stage))
		nap_ms(5);
	printf("both kinds on one word, requeued, woken one by one: %s %s, "
	       "waits %s %s\n", res(w1), res(w2), res(prog2.ret),
	       res(foreign_both_ret));
	printf("foreign thread's wait: %s\n", res(foreign_wait_ret));
	timer_delete(tm);
}

/* ---- two processes ---- */

static void shared(void)
{
	word_t *w = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct timespec ten = { 10, 0 };

	for (int child_waits = 1; child_waits >= 0; child_waits--) {
		atomic_store(w, 0);
		pid_t pid = fork();
		if (pid == 0) {
			long r;
			if (child_waits) {
				r = fx(w, FUTEX_WAIT, 0, &ten, NULL, 0);
			} else {
				while ((r = fx(w, FUTEX_WAKE, 1, NULL, NULL,
					       0)) == 0)
					nap_ms(5);
			}
			_exit(r == (child_waits ? 0 : 1) ? 0 : 1);
		}
		long r;
		if (child_waits) {
			while ((r = fx(w, FUTEX_WAKE, 1, NULL, NULL, 0)) == 0)
				nap_ms(5);
		} else {
			r = fx(w, FUTEX_WAIT, 0, &ten, NULL, 0);
		}
		int st;
		waitpid(pid, &st, 0);
		printf("shared futex, %s waits: parent %s, child %s\n",
		       child_waits ? "child" : "parent", res(r),
		       WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "ok" : "failed");
	}
	munmap((void *)w, 4096);
}

/* ---- the rest, on a program thread ---- */

static word_t gate, park, park2, wa, wb;

static void *checks(void *arg)
{
	(void)arg;
	word_t w = 5;
	struct timespec zero = { 0, 0 }, bad = { 0, 1000000000 };
	struct timespec t50 = ts_of(50 * 1000000);

	printf("value differs: %s\n",
	       res(fx(&w, FUTEX_WAIT_PRIVATE, 4, NULL, NULL, 0)));
	printf("zero timeout: %s\n",
	       res(fx(&w, FUTEX_WAIT_PRIVATE, 5, &zero, NULL, 0)));
	printf("bad timeout: %s\n",
	       res(fx(&w, FUTEX_WAIT_PRIVATE, 5, &bad, NULL, 0)));
	long k1 = fx((word_t *)((char *)&gate + 1), FUTEX_WAIT_PRIVATE, 0,
		     NULL, NULL, 0);
	long k2 = fx((word_t *)((char *)&gate + 2), FUTEX_WAKE_PRIVATE, 1,
		     NULL, NULL, 0);
	printf("misaligned: wait %s, wake %s\n", res(k1), res(k2));
	void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(page, 4096);
	k1 = fx(page, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
	k2 = fx(page, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	printf("unmapped word: wait %s, wake %s\n", res(k1), res(k2));
	printf("unmapped timeout: %s\n",
	       res(fx(&w, FUTEX_WAIT_PRIVATE, 5, page, NULL, 0)));
	printf("FUTEX_WAIT with FUTEX_CLOCK_REALTIME: %s\n",
	       res(fx(&w, FUTEX_WAIT_PRIVATE | FUTEX_CLOCK_REALTIME, 5, &t50,
		      NULL, 0)));
	k1 = fx(&w, FUTEX_WAIT_BITSET_PRIVATE, 5, NULL, NULL, 0);
	k2 = fx(&w, FUTEX_WAKE_BITSET_PRIVATE, 1, NULL, NULL, 0);
	printf("bitset 0: wait %s, wake %s\n", res(k1), res(k2));
	printf("wake with nobody waiting: %s\n",
	       res(fx(&w, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0)));

	/* Timeouts: relative, absolute monotonic, absolute realtime. */
	int64_t t0 = now_ns(CLOCK_MONOTONIC);
	long r = fx(&w, FUTEX_WAIT_PRIVATE, 5, &t50, NULL, 0);
	int64_t took = now_ns(CLOCK_MONOTONIC) - t0;
	printf("relative 50 ms: %s, %s\n", res(r),
	       took >= 50000000 ? "no sooner" : "too soon");
	for (int rt = 0; rt < 2; rt++) {
		clockid_t c = rt ? CLOCK_REALTIME : CLOCK_MONOTONIC;
		struct timespec abs = ts_of(now_ns(c) + 50000000);
		r = fx(&w, FUTEX_WAIT_BITSET_PRIVATE |
				   (rt ? FUTEX_CLOCK_REALTIME : 0),
		       5, &abs, NULL, FUTEX_BITSET_MATCH_ANY);
		int64_t at = now_ns(c), due = abs.tv_sec * 1000000000ll +
						  abs.tv_nsec;
		printf("absolute %s: %s, %s\n", rt ? "realtime" : "monotonic",
		       res(r), at >= due ? "no sooner" : "too soon");
	}
	struct timespec past = ts_of(now_ns(CLOCK_MONOTONIC) - 1000000000);
	printf("absolute in the past: %s\n",
	       res(fx(&w, FUTEX_WAIT_BITSET_PRIVATE, 5, &past, NULL, 1)));

	/* Signals. */
	printf("handler, untimed wait: %s\n", interrupted(0, false, false));
	printf("handler, timed wait: %s\n", interrupted(0, true, false));
	printf("SA_RESTART handler, timed wait: %s\n",
	       interrupted(SA_RESTART, true, false));
	printf("SA_RESTART handler, untimed wait: %s\n",
	       interrupted(SA_RESTART, false, true));

	return NULL;
}

static void *bitset_wait(void *arg)
{
	struct waiter *w = arg;
	struct timespec abs = ts_of(now_ns(CLOCK_MONOTONIC) + 10000000000ll);
	w->ret = fx(w->word, FUTEX_WAIT_BITSET_PRIVATE, 0, &abs, NULL, 1);
	return NULL;
}

static void *shared_wait(void *arg)
{
	struct waiter *w = arg;
	struct timespec ten = { 10, 0 };
	w->ret = fx(w->word, FUTEX_WAIT, 0, &ten, NULL, 0);
	return NULL;
}

static void *counts(void *arg)
{
	(void)arg;
	struct waiter w[4];

	/* Bitsets: wakes of other bits find nobody, whether the waiter
	 * waits yet or not; one of matching bits is repeated until it wakes
	 * it. */
	struct waiter bw = { .word = &wa };
	pthread_create(&bw.t, NULL, bitset_wait, &bw);
	nap_ms(100);
	long miss = 0;
	for (int i = 0; i < 5; i++, nap_ms(20))
		miss += fx(&wa, FUTEX_WAKE_BITSET_PRIVATE, INT_MAX, NULL, NULL,
			   2);
	long hit;
	while ((hit = fx(&wa, FUTEX_WAKE_BITSET_PRIVATE, INT_MAX, NULL, NULL,
			 3)) == 0)
		nap_ms(5);
	pthread_join(bw.t, NULL);
	printf("bitset 1 waiter: wakes of bits 2 woke %ld, of bits 3 woke "
	       "%s, its wait %s\n", miss, res(hit), res(bw.ret));

	/* A shared wait on private memory (as libstdc++'s std::atomic
	 * waits): private wakes never meet it, a shared one does. */
	struct waiter sw = { .word = &wa };
	atomic_store(&wa, 0);
	pthread_create(&sw.t, NULL, shared_wait, &sw);
	nap_ms(100);
	miss = 0;
	for (int i = 0; i < 5; i++, nap_ms(20))
		miss += fx(&wa, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
	while ((hit = fx(&wa, FUTEX_WAKE, INT_MAX, NULL, NULL, 0)) == 0)
		nap_ms(5);
	pthread_join(sw.t, NULL);
	printf("shared waiter, private memory: private wakes woke %ld, a "
	       "shared wake %s, its wait %s\n", miss, res(hit), res(sw.ret));

	/* Wake counts. */
	for (int i = 0; i < 3; i++)
		start(&w[i], &gate);
	gather(&gate, 0, &park, 3);
	long k1 = fx(&park, FUTEX_WAKE_PRIVATE, 2, NULL, NULL, 0);
	long k2 = fx(&park, FUTEX_WAKE_PRIVATE, 5, NULL, NULL, 0);
	long k3 = fx(&park, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	printf("3 waiters: wake 2 -> %s, wake 5 -> %s, wake 1 -> %s\n",
	       res(k1), res(k2), res(k3));
	for (int i = 0; i < 3; i++)
		pthread_join(w[i].t, NULL);
	/* A count of 0 wakes one, as the kernel does. */
	for (int i = 0; i < 2; i++)
		start(&w[i], &gate);
	gather(&gate, 0, &park, 2);
	k1 = fx(&park, FUTEX_WAKE_PRIVATE, 0, NULL, NULL, 0);
	k2 = fx(&park, FUTEX_WAKE_PRIVATE, (uint32_t)-1, NULL, NULL, 0);
	printf("2 waiters: wake 0 -> %s, wake -1 -> %s\n", res(k1), res(k2));
	for (int i = 0; i < 2; i++)
		pthread_join(w[i].t, NULL);

	/* Requeue. */
	for (int i = 0; i < 4; i++)
		start(&w[i], &gate);
	gather(&gate, 0, &park, 4);
	printf("4 waiters: FUTEX_REQUEUE wake 1 move 2 -> %s\n",
	       res(fx(&park, FUTEX_REQUEUE_PRIVATE, 1, (void *)2L, &park2,
		      0)));
	printf("FUTEX_CMP_REQUEUE, value differs -> %s\n",
	       res(fx(&park, FUTEX_CMP_REQUEUE_PRIVATE, 1, (void *)1L, &park2,
		      7)));
	printf("FUTEX_CMP_REQUEUE wake 0 move all -> %s\n",
	       res(fx(&park, FUTEX_CMP_REQUEUE_PRIVATE, 0,
		      (void *)(long)INT_MAX, &park2, 0)));
	printf("FUTEX_REQUEUE, negative count -> %s\n",
	       res(fx(&park, FUTEX_REQUEUE_PRIVATE, 1, (void *)-1L, &park2,
		      0)));
	k1 = fx(&park, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
	k2 = fx(&park2, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
	printf("left on the first word: wake -> %s; on the second: wake -> "
	       "%s\n", res(k1), res(k2));
	for (int i = 0; i < 4; i++)
		pthread_join(w[i].t, NULL);

	/* FUTEX_WAKE_OP: two waiters on park, one on wb. */
	for (int i = 0; i < 2; i++)
		start(&w[i], &gate);
	gather(&gate, 0, &park, 2);
	start(&w[2], &gate);
	gather(&gate, 0, &wb, 1);
	atomic_store(&wb, 0);
	long r = fx(&park, FUTEX_WAKE_OP_PRIVATE, 1, (void *)1L, &wb,
		    FUTEX_OP(FUTEX_OP_SET, 5, FUTEX_OP_CMP_EQ, 0));
	printf("FUTEX_WAKE_OP set 5, old == 0 -> %s, word %u\n", res(r),
	       (unsigned)atomic_load(&wb));
	r = fx(&park, FUTEX_WAKE_OP_PRIVATE, 1, (void *)1L, &wb,
	       FUTEX_OP(FUTEX_OP_ADD, 1, FUTEX_OP_CMP_EQ, 0));
	printf("FUTEX_WAKE_OP add 1, old == 0 -> %s, word %u\n", res(r),
	       (unsigned)atomic_load(&wb));
	r = fx(&park, FUTEX_WAKE_OP_PRIVATE, 1, (void *)1L, &wb,
	       FUTEX_OP(FUTEX_OP_OR, 4, FUTEX_OP_CMP_GT, 0) |
		       (FUTEX_OP_OPARG_SHIFT << 28));
	printf("FUTEX_WAKE_OP or 1<<4, old > 0 -> %s, word %u\n", res(r),
	       (unsigned)atomic_load(&wb));
	r = fx(&park, FUTEX_WAKE_OP_PRIVATE, 1, (void *)1L, &wb,
	       (7u << 28));
	printf("FUTEX_WAKE_OP unknown op -> %s, word %u\n", res(r),
	       (unsigned)atomic_load(&wb));
	r = fx(&park, FUTEX_WAKE_OP_PRIVATE, 1, (void *)1L, &wb,
	       FUTEX_OP(FUTEX_OP_XOR, 1, 9, 0));
	printf("FUTEX_WAKE_OP xor 1, unknown comparison -> %s, word %u\n",
	       res(r), (unsigned)atomic_load(&wb));
	for (int i = 0; i < 3; i++)
		pthread_join(w[i].t, NULL);
	printf("FUTEX_WAKE_OP waiters: %s %s %s\n", res(w[0].ret),
	       res(w[1].ret), res(w[2].ret));
	return NULL;
}

int main(void)
{
	pthread_t t;

	setvbuf(stdout, NULL, _IOLBF, 0);
	pthread_create(&t, NULL, checks, NULL);
	pthread_join(t, NULL);
	pthread_create(&t, NULL, counts, NULL);
	pthread_join(t, NULL);
	foreign();
	shared();
	return 0;
}

// c11_sync: C11 <threads.h> mutexes and condition variables. glibc builds
// them on internal calls, so this checks that each reaches goshim: result
// codes of every mtx_init type combination, trylock, timedlock, recursion;
// cnd_timedwait timing out; and a producer/consumer of C11 threads on one
// mtx_t and two cnd_t with an exact checksum.
// goshim-test: shim-max-threads=GOMAXPROCS+3
#include <stdio.h>
#include <stdlib.h>
#include <threads.h>
#include <time.h>

static int failures;

static const char *tname(int r)
{
	switch (r) {
	case thrd_success: return "thrd_success";
	case thrd_busy: return "thrd_busy";
	case thrd_error: return "thrd_error";
	case thrd_nomem: return "thrd_nomem";
	case thrd_timedout: return "thrd_timedout";
	}
	return "thrd_?";
}

static void expect(const char *what, int got, int want)
{
	printf("%s: %s\n", what, tname(got));
	if (got != want) {
		fprintf(stderr, "c11_sync: %s: got %s", what, tname(got));
		fprintf(stderr, ", want %s\n", tname(want));
		failures++;
	}
}

static struct timespec after_ms(long ms)
{
	struct timespec ts;
	timespec_get(&ts, TIME_UTC);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	return ts;
}

static int reached(struct timespec d)
{
	struct timespec now;
	timespec_get(&now, TIME_UTC);
	return now.tv_sec > d.tv_sec ||
	       (now.tv_sec == d.tv_sec && now.tv_nsec >= d.tv_nsec);
}

static mtx_t *shared_mtx;

static int try_other(void *arg)
{
	(void)arg;
	return mtx_trylock(shared_mtx);
}

static int timed_other(void *arg)
{
	struct timespec d = after_ms(20);
	(void)arg;
	return mtx_timedlock(shared_mtx, &d);
}

static int on_other(thrd_start_t fn, mtx_t *m)
{
	thrd_t t;
	int ret;
	shared_mtx = m;
	if (thrd_create(&t, fn, NULL) != thrd_success ||
	    thrd_join(t, &ret) != thrd_success) {
		fprintf(stderr, "c11_sync: thread failed\n");
		exit(1);
	}
	return ret;
}

static void kinds(void)
{
	static const struct {
		const char *name;
		int type, recursive;
	} k[] = {
		{ "plain", mtx_plain, 0 },
		{ "timed", mtx_timed, 0 },
		{ "plain|recursive", mtx_plain | mtx_recursive, 1 },
		{ "timed|recursive", mtx_timed | mtx_recursive, 1 },
	};
	char what[80];

	for (unsigned i = 0; i < sizeof k / sizeof *k; i++) {
		mtx_t m;
		struct timespec d;
#define W(s) (snprintf(what, sizeof what, "%s: %s", k[i].name, s), what)
		expect(W("init"), mtx_init(&m, k[i].type), thrd_success);
		expect(W("lock"), mtx_lock(&m), thrd_success);
		expect(W("other trylock"), on_other(try_other, &m), thrd_busy);
		expect(W("other timedlock"), on_other(timed_other, &m),
		       thrd_timedout);
		if (k[i].recursive) {
			expect(W("trylock again"), mtx_trylock(&m),
			       thrd_success);
			d = after_ms(10);
			expect(W("timedlock again"), mtx_timedlock(&m, &d),
			       thrd_success);
			expect(W("unlock"), mtx_unlock(&m), thrd_success);
			expect(W("unlock"), mtx_unlock(&m), thrd_success);
		} else {
			expect(W("trylock held"), mtx_trylock(&m), thrd_busy);
			d = after_ms(20);
			expect(W("timedlock held"), mtx_timedlock(&m, &d),
			       thrd_timedout);
			printf("%s: deadline reached: %s\n", k[i].name,
			       reached(d) ? "yes" : "no");
		}
		expect(W("unlock"), mtx_unlock(&m), thrd_success);
		expect(W("other timedlock free"), on_other(timed_other, &m),
		       thrd_success);
		expect(W("trylock held by exited thread"), mtx_trylock(&m),
		       thrd_busy);
		mtx_destroy(&m);
#undef W
	}
	mtx_t m;
	expect("unknown type: init (plain)", mtx_init(&m, 42), thrd_success);
	expect("unknown type: lock", mtx_lock(&m), thrd_success);
	expect("unknown type: trylock held", mtx_trylock(&m), thrd_busy);
	expect("unknown type: unlock", mtx_unlock(&m), thrd_success);
	mtx_destroy(&m);

	expect("recursive: init", mtx_init(&m, mtx_plain | mtx_recursive),
	       thrd_success);
	expect("recursive: unlock unlocked", mtx_unlock(&m), thrd_error);
	mtx_destroy(&m);

	cnd_t c;
	struct timespec d;
	expect("cnd_init", cnd_init(&c), thrd_success);
	expect("mtx_init", mtx_init(&m, mtx_timed), thrd_success);
	expect("mtx_lock", mtx_lock(&m), thrd_success);
	d = after_ms(30);
	expect("cnd_timedwait 30 ms", cnd_timedwait(&c, &m, &d),
	       thrd_timedout);
	printf("cnd_timedwait: deadline reached: %s\n",
	       reached(d) ? "yes" : "no");
	d.tv_nsec = -1;
	expect("cnd_timedwait bad timeout", cnd_timedwait(&c, &m, &d),
	       thrd_error);
	expect("still held: trylock", mtx_trylock(&m), thrd_busy);
	expect("mtx_unlock", mtx_unlock(&m), thrd_success);
	expect("cnd_signal without waiters", cnd_signal(&c), thrd_success);
	expect("cnd_broadcast without waiters", cnd_broadcast(&c),
	       thrd_success);
	cnd_destroy(&c);
	mtx_destroy(&m);
}

/* ---- bounded buffer ---------------------------------------------------------- */
#define PRODUCERS 8
#define CONSUMERS 8
#define PER 2000
#define CAP 16

static mtx_t bm;
static cnd_t notfull, notempty;
static int buf[CAP], count, in, out;
static long long consumed_sum;

static int produce(void *arg)
{
	int base = (int)(long)arg * PER;
	for (int i = 1; i <= PER; i++) {
		mtx_lock(&bm);
		while (count == CAP)
			cnd_wait(&notfull, &bm);
		buf[in] = base + i;
		in = (in + 1) % CAP;
		count++;
		cnd_signal(&notempty);
		mtx_unlock(&bm);
	}
	return 0;
}

static int consume(void *arg)
{
	long long sum = 0;
	(void)arg;
	for (int i = 0; i < PER; i++) {
		mtx_lock(&bm);
		while (count == 0)
			cnd_wait(&notempty, &bm);
		sum += buf[out];
		out = (out + 1) % CAP;
		count--;
		cnd_signal(&notfull);
		mtx_unlock(&bm);
	}
	mtx_lock(&bm);
	consumed_sum += sum;
	mtx_unlock(&bm);
	return 0;
}

static void bounded_buffer(void)
{
	thrd_t t[PRODUCERS + CONSUMERS];
	mtx_init(&bm, mtx_plain);
	cnd_init(&notfull);
	cnd_init(&notempty);
	for (long i = 0; i < CONSUMERS; i++)
		thrd_create(&t[i], consume, NULL);
	for (long i = 0; i < PRODUCERS; i++)
		thrd_create(&t[CONSUMERS + i], produce, (void *)i);
	for (int i = 0; i < PRODUCERS + CONSUMERS; i++)
		thrd_join(t[i], NULL);
	long long n = (long long)PRODUCERS * PER;
	int exact = consumed_sum == n * (n + 1) / 2;
	printf("bounded buffer: %lld items, checksum %s\n", n,
	       exact ? "exact" : "WRONG");
	if (!exact)
		failures++;
	cnd_destroy(&notfull);
	cnd_destroy(&notempty);
	mtx_destroy(&bm);
}

int main(void)
{
	kinds();
	bounded_buffer();
	if (failures) {
		fprintf(stderr, "c11_sync: %d failures\n", failures);
		return 1;
	}
	return 0;
}

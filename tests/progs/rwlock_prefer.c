// rwlock_prefer: what each kind does with a reader that comes while a writer
// waits. The main thread holds a read lock and a writer blocks behind it.
// Reader-preferring kinds (the default, PREFER_WRITER_NP, which glibc treats
// the same for readers) let a new reader in at once; the writer-preferring
// kind (PREFER_WRITER_NONRECURSIVE_NP, by attribute or static initializer)
// keeps new readers out until the writer has been through: tryrdlock says
// EBUSY, a timed read lock times out (even the main thread's recursive
// one), and a reader thread gets in only after the writer.
// goshim-test: shim-max-threads=GOMAXPROCS+3
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int failures;
static pthread_rwlock_t *lk;
static atomic_int writer_in, writer_done, reader_done, reader_saw_writer;

static const char *ename(int e)
{
	switch (e) {
	case 0: return "0";
	case EBUSY: return "EBUSY";
	case ETIMEDOUT: return "ETIMEDOUT";
	case EDEADLK: return "EDEADLK";
	}
	return "other";
}

static void expect(const char *what, int got, int want)
{
	printf("  %s: %s\n", what, ename(got));
	if (got != want) {
		fprintf(stderr, "rwlock_prefer: %s: got %s, want %s\n", what,
			ename(got), ename(want));
		failures++;
	}
}

static void nap_ms(long ms)
{
	struct timespec ts = { 0, ms * 1000000 };
	nanosleep(&ts, NULL);
}

static struct timespec in_ms(long ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += ms * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	return ts;
}

static void *writer(void *arg)
{
	(void)arg;
	atomic_store(&writer_in, 1);
	pthread_rwlock_wrlock(lk);
	atomic_store(&writer_done, 1);
	pthread_rwlock_unlock(lk);
	return NULL;
}

static void *reader(void *arg)
{
	(void)arg;
	pthread_rwlock_rdlock(lk);
	atomic_store(&reader_saw_writer, atomic_load(&writer_done));
	pthread_rwlock_unlock(lk);
	atomic_store(&reader_done, 1);
	return NULL;
}

static void run(const char *name, pthread_rwlock_t *l, int writer_first)
{
	pthread_t w, r;
	struct timespec ts;

	printf("%s:\n", name);
	lk = l;
	writer_in = writer_done = reader_done = reader_saw_writer = 0;
	expect("rdlock", pthread_rwlock_rdlock(l), 0);
	pthread_create(&w, NULL, writer, NULL);
	while (!atomic_load(&writer_in))
		nap_ms(1);
	/* Give the writer time to block; with writer preference its wait
	 * shows in tryrdlock, so wait for that (5 s at most). */
	nap_ms(100);
	for (int i = 0; writer_first && i < 500; i++) {
		int err = pthread_rwlock_tryrdlock(l);
		if (err == EBUSY)
			break;
		if (err == 0)
			pthread_rwlock_unlock(l);
		nap_ms(10);
	}
	expect("tryrdlock while a writer waits",
	       pthread_rwlock_tryrdlock(l), writer_first ? EBUSY : 0);
	if (!writer_first)
		pthread_rwlock_unlock(l);
	ts = in_ms(50);
	expect("recursive timedrdlock (50ms) while a writer waits",
	       pthread_rwlock_timedrdlock(l, &ts), writer_first ? ETIMEDOUT : 0);
	if (!writer_first)
		pthread_rwlock_unlock(l);
	expect("trywrlock while a writer waits",
	       pthread_rwlock_trywrlock(l), EBUSY);

	pthread_create(&r, NULL, reader, NULL);
	if (!writer_first) {
		pthread_join(r, NULL); /* gets in beside us */
	} else {
		nap_ms(100);
	}
	printf("  new reader done before we unlock: %s\n",
	       atomic_load(&reader_done) ? "yes" : "no");
	if (atomic_load(&reader_done) == writer_first) {
		fprintf(stderr, "rwlock_prefer: %s: reader %s\n", name,
			writer_first ? "overtook the writer" : "was held back");
		failures++;
	}
	printf("  writer done before we unlock: %s\n",
	       atomic_load(&writer_done) ? "yes" : "no");
	if (atomic_load(&writer_done)) {
		fprintf(stderr, "rwlock_prefer: %s: writer overtook us\n",
			name);
		failures++;
	}
	expect("unlock", pthread_rwlock_unlock(l), 0);
	pthread_join(w, NULL);
	if (writer_first)
		pthread_join(r, NULL);
	printf("  the new reader saw the writer's update: %s\n",
	       atomic_load(&reader_saw_writer) ? "yes" : "no");
	if (atomic_load(&reader_saw_writer) != writer_first) {
		fprintf(stderr, "rwlock_prefer: %s: wrong order\n", name);
		failures++;
	}
	expect("destroy", pthread_rwlock_destroy(l), 0);
}

static pthread_rwlock_t by_init = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
static pthread_rwlock_t plain = PTHREAD_RWLOCK_INITIALIZER;

static void run_kind(const char *name, int kind, int writer_first)
{
	pthread_rwlockattr_t attr;
	pthread_rwlock_t l;
	int got;

	pthread_rwlockattr_init(&attr);
	pthread_rwlockattr_setkind_np(&attr, kind);
	pthread_rwlockattr_getkind_np(&attr, &got);
	if (got != kind) {
		fprintf(stderr, "rwlock_prefer: kind %d not set\n", kind);
		exit(1);
	}
	pthread_rwlock_init(&l, &attr);
	pthread_rwlockattr_destroy(&attr);
	run(name, &l, writer_first);
}

int main(void)
{
	run("PTHREAD_RWLOCK_INITIALIZER", &plain, 0);
	run_kind("PREFER_READER_NP", PTHREAD_RWLOCK_PREFER_READER_NP, 0);
	run_kind("PREFER_WRITER_NP", PTHREAD_RWLOCK_PREFER_WRITER_NP, 0);
	run_kind("PREFER_WRITER_NONRECURSIVE_NP",
		 PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP, 1);
	run("PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP", &by_init, 1);
	return failures ? 1 : 0;
}

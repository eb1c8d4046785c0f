// eventfd_sum: an eventfd between threads on one P (a reader blocked in
// read() must not hold it, or nobody writes). As a counter: 8 producers
// add 1..1000 each while a consumer reads until it has the exact sum. As a
// semaphore (EFD_SEMAPHORE): 16 consumers take 125 tokens each, one read a
// token, from a producer that hands out 2,000 in batches. A write that
// would overflow the counter waits until a reader drains it.
// eventfd_read/eventfd_write, and bad input: a short buffer and
// UINT64_MAX (EINVAL), EAGAIN with EFD_NONBLOCK, bad flags (EINVAL). The
// blocking eventfd is still blocking in F_GETFL afterwards.
// goshim-test: env=GOMAXPROCS=1
// goshim-test: shim-max-threads=GOMAXPROCS+4
// goshim-test: native-min-threads=17
// goshim-test: timeout=60
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define NPRODUCERS 8
#define PER_PRODUCER 1000
#define NCONSUMERS 16
#define TOKENS 125

static void die(const char *what)
{
	fprintf(stderr, "eventfd_sum: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "eventfd_sum: failed: %s (errno %s)\n", what,
			strerror(errno));
		exit(1);
	}
	printf("ok: %s\n", what);
}

static pthread_t start(void *(*fn)(void *), void *arg)
{
	pthread_t t;
	int e = pthread_create(&t, NULL, fn, arg);
	if (e) {
		errno = e;
		die("pthread_create");
	}
	return t;
}

static void join(pthread_t t)
{
	int e = pthread_join(t, NULL);
	if (e) {
		errno = e;
		die("pthread_join");
	}
}

static int efd;

static void *produce(void *arg)
{
	(void)arg;
	for (uint64_t v = 1; v <= PER_PRODUCER; v++) {
		if (write(efd, &v, sizeof v) != sizeof v)
			die("write");
		if (v % 100 == 0)
			usleep(1000);
	}
	return NULL;
}

static void counter(void)
{
	pthread_t t[NPRODUCERS];
	uint64_t want = (uint64_t)NPRODUCERS * PER_PRODUCER *
			(PER_PRODUCER + 1) / 2,
		 sum = 0, v;
	int reads = 0;

	efd = eventfd(0, EFD_CLOEXEC);
	if (efd < 0)
		die("eventfd");
	for (int i = 0; i < NPRODUCERS; i++)
		t[i] = start(produce, NULL);
	while (sum < want) {
		if (read(efd, &v, sizeof v) != sizeof v)
			die("read");
		sum += v;
		reads++;
	}
	for (int i = 0; i < NPRODUCERS; i++)
		join(t[i]);
	printf("counter: %d producers, sum %llu\n", NPRODUCERS,
	       (unsigned long long)sum);
	check(sum == want && reads >= 1, "the consumer read the exact sum");
	close(efd);
}

static void *take(void *arg)
{
	int *taken = arg;
	eventfd_t v;
	for (int i = 0; i < TOKENS; i++) {
		if (eventfd_read(efd, &v) || v != 1)
			die("eventfd_read");
		++*taken;
	}
	return NULL;
}

static void semaphore(void)
{
	pthread_t t[NCONSUMERS];
	int taken[NCONSUMERS] = { 0 }, total = 0;

	efd = eventfd(0, EFD_SEMAPHORE);
	if (efd < 0)
		die("eventfd");
	for (int i = 0; i < NCONSUMERS; i++)
		t[i] = start(take, &taken[i]);
	for (int i = 0; i < NCONSUMERS * TOKENS / 100; i++) {
		usleep(1000);
		if (eventfd_write(efd, 100))
			die("eventfd_write");
	}
	for (int i = 0; i < NCONSUMERS; i++) {
		join(t[i]);
		total += taken[i];
	}
	printf("semaphore: %d consumers took %d tokens\n", NCONSUMERS, total);
	check(total == NCONSUMERS * TOKENS, "every token taken once");
	close(efd);
}

static volatile int overflow_written;

static void *write_one(void *arg)
{
	(void)arg;
	if (eventfd_write(efd, 1))
		die("eventfd_write");
	overflow_written = 1;
	return NULL;
}

static void overflow(void)
{
	eventfd_t v;
	pthread_t t;

	efd = eventfd(0, 0);
	if (efd < 0)
		die("eventfd");
	if (eventfd_write(efd, UINT64_MAX - 1))
		die("eventfd_write");
	t = start(write_one, NULL);
	usleep(30000);
	check(!overflow_written, "a write that would overflow waits");
	check(eventfd_read(efd, &v) == 0 && v == UINT64_MAX - 1,
	      "the reader drains the counter");
	join(t);
	check(overflow_written && eventfd_read(efd, &v) == 0 && v == 1,
	      "then the waiting write goes in");
	check(!(fcntl(efd, F_GETFL) & O_NONBLOCK),
	      "the eventfd is still blocking");
	close(efd);
}

static void bad_input(void)
{
	uint64_t v = UINT64_MAX;
	char small[4];

	efd = eventfd(3, 0);
	if (efd < 0)
		die("eventfd");
	check(read(efd, small, sizeof small) == -1 && errno == EINVAL,
	      "read of 4 bytes: EINVAL");
	check(write(efd, small, sizeof small) == -1 && errno == EINVAL,
	      "write of 4 bytes: EINVAL");
	check(write(efd, &v, sizeof v) == -1 && errno == EINVAL,
	      "write of UINT64_MAX: EINVAL");
	check(read(efd, &v, sizeof v) == sizeof v && v == 3,
	      "the initial value reads back");
	close(efd);

	efd = eventfd(0, EFD_NONBLOCK);
	if (efd < 0)
		die("eventfd");
	check(read(efd, &v, sizeof v) == -1 && errno == EAGAIN,
	      "EFD_NONBLOCK, empty: EAGAIN");
	v = UINT64_MAX - 1;
	check(write(efd, &v, sizeof v) == sizeof v, "fill it");
	v = 1;
	check(write(efd, &v, sizeof v) == -1 && errno == EAGAIN,
	      "EFD_NONBLOCK, full: EAGAIN");
	close(efd);
	check(eventfd(0, 0x1000) == -1 && errno == EINVAL,
	      "unknown flags: EINVAL");
	check(read(efd, &v, sizeof v) == -1 && errno == EBADF,
	      "a closed eventfd: EBADF");
}

int main(void)
{
	counter();
	semaphore();
	overflow();
	bad_input();
	printf("OK\n");
	return 0;
}

// once_unwind: an initialiser that does not return normally leaves its once
// to be run again, as POSIX and C++ ask: a pthread_once init that calls
// pthread_exit, one cancelled at a cancellation point inside it, and a
// std::call_once callable that throws; each time a second thread then runs
// the initialiser to its end, and the threads that waited meanwhile see it
// done.
// goshim-test: shim-max-threads=GOMAXPROCS+3
#include <pthread.h>
#include <unistd.h>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <thread>

#define CHECK(c) do { if (!(c)) { \
	std::fprintf(stderr, "once_unwind: %s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
	std::exit(1); } } while (0)

static pthread_once_t exit_once = PTHREAD_ONCE_INIT;
static pthread_once_t cancel_once = PTHREAD_ONCE_INIT;
static std::atomic<int> exit_calls, cancel_calls, completed;
static std::atomic<bool> in_cancel_init;

static void exit_init()
{
	if (exit_calls.fetch_add(1) == 0)
		pthread_exit(nullptr); /* the first caller leaves */
	completed++;
}

static void *exit_thread(void *)
{
	pthread_once(&exit_once, exit_init);
	return (void *)1;
}

static void cancel_init()
{
	if (cancel_calls.fetch_add(1) == 0) {
		in_cancel_init = true;
		for (;;)
			pause(); /* a cancellation point: cancelled here */
	}
	completed++;
}

static void *cancel_thread(void *)
{
	pthread_once(&cancel_once, cancel_init);
	return (void *)1;
}

int main()
{
	pthread_t a, b;
	void *ra, *rb;

	CHECK(pthread_create(&a, nullptr, exit_thread, nullptr) == 0);
	CHECK(pthread_join(a, &ra) == 0);
	CHECK(pthread_create(&b, nullptr, exit_thread, nullptr) == 0);
	CHECK(pthread_join(b, &rb) == 0);
	std::printf("pthread_exit in init: first thread returned %p, second %p, "
		    "init called %d times\n", ra, rb, exit_calls.load());
	CHECK(ra == nullptr && rb == (void *)1 && exit_calls == 2);

	CHECK(pthread_create(&a, nullptr, cancel_thread, nullptr) == 0);
	while (!in_cancel_init)
		usleep(1000);
	/* b waits on the once the cancelled init holds. */
	CHECK(pthread_create(&b, nullptr, cancel_thread, nullptr) == 0);
	usleep(20000);
	CHECK(pthread_cancel(a) == 0);
	CHECK(pthread_join(a, &ra) == 0);
	CHECK(pthread_join(b, &rb) == 0);
	std::printf("cancelled in init: first %s, second returned %p, init "
		    "called %d times\n", ra == PTHREAD_CANCELED ? "cancelled" : "not cancelled",
		    rb, cancel_calls.load());
	CHECK(ra == PTHREAD_CANCELED && rb == (void *)1 && cancel_calls == 2);

	std::once_flag flag;
	int calls = 0, caught = 0;
	auto body = [&] {
		calls++;
		if (calls == 1)
			throw std::runtime_error("first call throws");
		completed++;
	};
	std::thread t1([&] {
		try {
			std::call_once(flag, body);
		} catch (const std::runtime_error &) {
			caught++;
		}
	});
	t1.join();
	std::thread t2([&] { std::call_once(flag, body); });
	t2.join();
	std::call_once(flag, body);
	std::printf("std::call_once that threw: %d call(s), %d caught\n", calls, caught);
	CHECK(calls == 2 && caught == 1);
	std::printf("initialisers completed: %d\n", completed.load());
	CHECK(completed == 3);
	return 0;
}

// cancel_async: PTHREAD_CANCEL_ASYNCHRONOUS acts wherever the thread is: in
// a pthread_mutex_lock wait (not a cancellation point: natively the cancel
// signal unwinds it out of the futex wait), in a busy loop, and just as it
// wakes from a sleep (50 cancels aimed at the moment a 20 ms nanosleep
// ends), and in a loop of write() calls (glibc's cancellable wrapper, which
// waits after the call for a cancel signal it knows is coming: a request
// that never arrives would hang it, and exit() after it). Every join
// returns PTHREAD_CANCELED; the mutex is not left held.
// goshim-test: shim-max-threads=GOMAXPROCS+4
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static volatile int spin;

static void async(void)
{
	int old;
	pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old);
}

static void *locker(void *arg)
{
	(void)arg;
	async();
	pthread_mutex_lock(&m);
	return (void *)1;
}

static void *busy(void *arg)
{
	(void)arg;
	async();
	for (;;)
		spin++;
	return NULL;
}

static void *sleeper(void *arg)
{
	(void)arg;
	async();
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	for (;;)
		spin++;
	return NULL;
}

static int devnull;

static void *writer(void *arg)
{
	(void)arg;
	async();
	for (;;)
		if (write(devnull, "x", 1) != 1)
			return NULL;
	return NULL;
}

static int cancelled(void *(*fn)(void *), long delay_us)
{
	pthread_t t;
	void *r;
	pthread_create(&t, NULL, fn, NULL);
	usleep(delay_us);
	pthread_cancel(t);
	pthread_join(t, &r);
	return r == PTHREAD_CANCELED;
}

int main(void)
{
	int n = 0;

	pthread_mutex_lock(&m);
	for (int i = 0; i < 10; i++)
		n += cancelled(locker, 5000);
	pthread_mutex_unlock(&m);
	printf("in a mutex wait: %d of 10 cancelled\n", n);
	printf("mutex free afterwards: %d\n", pthread_mutex_trylock(&m) == 0);
	pthread_mutex_unlock(&m);

	n = 0;
	for (int i = 0; i < 10; i++)
		n += cancelled(busy, 2000);
	printf("in a busy loop: %d of 10 cancelled\n", n);

	n = 0;
	for (int i = 0; i < 50; i++)
		n += cancelled(sleeper, 19000 + 40 * i);
	printf("as it wakes from a sleep: %d of 50 cancelled\n", n);

	devnull = open("/dev/null", O_WRONLY);
	n = 0;
	for (int i = 0; i < 20; i++)
		n += cancelled(writer, 500 + 100 * i);
	printf("in a write loop: %d of 20 cancelled\n", n);
	return 0;
}

// Every thread ends up waiting on another: natively this hangs forever;
// under goshim the runtime sees that no goroutine can ever run again and
// ends the process like Go: "all goroutines are asleep - deadlock!", the
// goroutines with what each waits on, exit status 2.
// goshim-test: shim-only=1
// goshim-test: exit=2
// goshim-test: timeout=20
// goshim-test: shim-stderr=all goroutines are asleep - deadlock!
// goshim-test: shim-max-threads=GOMAXPROCS+2
#include <pthread.h>
#include <stdio.h>

static pthread_barrier_t never; /* needs 3, only 2 ever arrive */

static void *waiter(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&never);
	return NULL;
}

int main(void)
{
	pthread_t t;

	pthread_barrier_init(&never, NULL, 3);
	pthread_create(&t, NULL, waiter, NULL);
	printf("main joins a thread that waits forever\n");
	fflush(stdout);
	pthread_join(t, NULL);
	printf("unreachable\n");
	return 0;
}

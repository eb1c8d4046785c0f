// signalfd: every thread blocks SIGUSR1 and SIGUSR2; one thread reads a
// signalfd (a blocking read: under goshim it parks, GOMAXPROCS=1 proves
// it) while main sends process signals one at a time and waits for each
// to be acknowledged; a second thread keeps counting meanwhile. Bad
// arguments get the kernel's errors.
// goshim-test: env=GOMAXPROCS=1
// goshim-test: shim-max-threads=GOMAXPROCS+4
// goshim-test: timeout=60
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#define ROUNDS 20

static int sfd;
static sem_t ack;
static volatile int stop;

static void *reader(void *arg)
{
	struct signalfd_siginfo si;
	long usr1 = 0, usr2 = 0;
	(void)arg;
	for (;;) {
		ssize_t n = read(sfd, &si, sizeof si);
		if (n != sizeof si)
			return (void *)-1L;
		if (si.ssi_signo == SIGUSR2)
			break;
		usr1 += si.ssi_signo == SIGUSR1 &&
			si.ssi_pid == (uint32_t)getpid();
		sem_post(&ack);
	}
	usr2++;
	return (void *)(usr1 * 10 + usr2);
}

static void *counter(void *arg)
{
	long n = 0;
	(void)arg;
	while (!stop) {
		n++;
		usleep(100);
	}
	return (void *)(long)(n > 0);
}

int main(void)
{
	sigset_t s;
	pthread_t r, c;
	void *rv, *cv;

	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	sigaddset(&s, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
	sfd = signalfd(-1, &s, SFD_CLOEXEC);
	if (sfd < 0) {
		perror("signalfd");
		return 1;
	}
	sem_init(&ack, 0, 0);
	pthread_create(&r, NULL, reader, NULL);
	pthread_create(&c, NULL, counter, NULL);
	for (int i = 0; i < ROUNDS; i++) {
		usleep(500);
		kill(getpid(), SIGUSR1);
		sem_wait(&ack);
	}
	kill(getpid(), SIGUSR2);
	pthread_join(r, &rv);
	stop = 1;
	pthread_join(c, &cv);
	printf("reader took %ld SIGUSR1 and %ld SIGUSR2; counter ran: %s\n",
	       (long)rv / 10, (long)rv % 10, cv ? "yes" : "no");

	errno = 0;
	int rc = signalfd(-1, &s, 12345);
	printf("bad flags: %d %s\n", rc, strerror(errno));
	rc = signalfd(12345, &s, 0);
	printf("not a signalfd: %d %s\n", rc, strerror(errno));
	char small[8];
	ssize_t n = read(sfd, small, sizeof small);
	printf("short buffer: %zd %s\n", n, strerror(errno));
	return 0;
}

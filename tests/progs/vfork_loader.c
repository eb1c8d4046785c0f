// vfork_loader: the child of vfork or _Fork may make the calls that are
// async-signal-safe (dup2, fcntl, close, sigaction, sigprocmask, open,
// chdir) while other threads of the parent were inside the dynamic loader
// at the fork. glibc's fork resets the loader's lock in its child; vfork
// and _Fork reset nothing, so a child that took that lock would wait for
// good; so with malloc's locks. CPython's subprocess does exactly this
// (vfork, then dup2 and sigaction in the child) while its other threads
// import modules. Under goshim every one of those calls is an interposer:
// one that looked up the C library's function on first use (dlsym) hung
// the child (seen in CI: python's children never exec'd), and one that
// called malloc could (dup2 onto an fd of a part of goshim's fd table not
// yet made). Two threads here go round dlopen, dlsym, dlclose, malloc
// and free meanwhile, all in one malloc arena, so the loader's lock and
// the arena's are held most of the time. The children end by _exit or by
// exec of /bin/true; each child's status is checked.
// goshim-test: timeout=60
#include <dlfcn.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

pid_t _Fork(void);

static atomic_int stop;
static char cwd[4096]; /* where the child goes (LD_PRELOAD may be relative) */

static void *churn(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		void *h = dlopen("libm.so.6", RTLD_NOW);
		if (h == NULL || dlsym(h, "cos") == NULL) {
			printf("dlopen: %s\n", dlerror());
			exit(1);
		}
		dlclose(h);
		free(malloc(4096 + (size_t)(rand() % 65536)));
	}
	return NULL;
}

/* What a spawning library's child does before exec: every call here is
 * async-signal-safe, so valid after vfork or _Fork in a threaded parent.
 * Returns the exit status wanted, or does not return (exec). */
static int child(int k)
{
	struct sigaction sa, dfl = { .sa_handler = SIG_DFL };
	sigset_t none;
	int fd, nb = 1;

	if (dup2(1, 40) != 40 || dup2(1, 700 + k % 200) != 700 + k % 200 || fcntl(40, F_SETFD, FD_CLOEXEC) != 0 ||
	    dup3(40, 41, O_CLOEXEC) != 41 || close(40) != 0 || dup(41) < 0)
		return 10;
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, FIONBIO, &nb) != 0 || close(fd) != 0)
		return 11;
	for (int sig = 1; sig < 32; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		if (sigaction(sig, NULL, &sa) != 0)
			return 12;
		if (sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN &&
		    sigaction(sig, &dfl, NULL) != 0)
			return 13;
	}
	sigemptyset(&none);
	if (sigprocmask(SIG_SETMASK, &none, NULL) != 0 || chdir(cwd) != 0)
		return 14;
	if (k % 4 == 0) {
		execl("/bin/true", "true", (char *)NULL);
		return 15;
	}
	return 0;
}

static void spawn(int k, pid_t (*forker)(void), int *bad)
{
	sigset_t all, old;
	int st;
	pid_t pid;

	/* As CPython does: no handler of the parent's runs in the child. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pid = forker();
	if (pid == 0)
		_exit(child(k));
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0) {
		if (*bad < 3)
			printf("child %d: status %#x\n", k, st);
		(*bad)++;
	}
}

static void on_usr1(int sig)
{
	(void)sig;
}

int main(void)
{
	pthread_t t[2];
	int bad = 0, n = 0;

	if (getcwd(cwd, sizeof cwd) == NULL)
		return 1;
	mallopt(M_ARENA_MAX, 1); /* the children's malloc lock is the churn's */
	signal(SIGUSR1, on_usr1); /* a handler each child resets */
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, churn, NULL);
	for (int k = 0; k < 600; k++, n++)
		spawn(k, vfork, &bad);
	for (int k = 0; k < 200; k++, n++)
		spawn(k, _Fork, &bad);
	atomic_store(&stop, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("%d children, %d failed\n", n, bad);
	return bad != 0;
}

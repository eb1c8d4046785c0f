// Six threads at once start child processes every way there is, over and
// over: popen (reading the child's output) and pclose, system,
// posix_spawn and posix_spawnp with a file action, vfork + exec, _Fork +
// _exit, each child's exit status checked with waitpid. Meanwhile a pipe
// ping-pong between two more threads keeps going (the spawning threads
// block in the kernel; the others must still run). glibc makes popen,
// system and posix_spawn with clone(CLONE_VM|CLONE_VFORK) on a stack of
// their own, which the spawning goroutine's stack and TCB must not upset.
// goshim-test: timeout=60
// goshim-test: shim-max-threads=GOMAXPROCS+10
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define THREADS 6
#define ROUNDS 5

extern char **environ;

struct result {
	int popen_ok, system_ok, spawn_ok, spawnp_ok, vfork_ok, fork_ok;
};

static struct result results[THREADS];
static _Atomic int spawners_left = THREADS;
static int ping[2], pong[2];
static long volleys;

static int wait_status(pid_t pid)
{
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A function of its own: the vfork child borrows this frame. */
static __attribute__((noinline)) pid_t vfork_sh(const char *cmd)
{
	pid_t pid = vfork();
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	return pid;
}

static void *spawner(void *arg)
{
	long id = (long)arg;
	struct result *r = &results[id];

	for (int k = 0; k < ROUNDS; k++) {
		int code = (int)(id * 10 + k) % 100;
		char cmd[64], want[64], line[64];

		snprintf(cmd, sizeof cmd, "echo popen-%ld-%d", id, k);
		snprintf(want, sizeof want, "popen-%ld-%d\n", id, k);
		FILE *f = popen(cmd, "r");
		if (f && fgets(line, sizeof line, f) && strcmp(line, want) == 0 &&
		    pclose(f) == 0)
			r->popen_ok++;

		snprintf(cmd, sizeof cmd, "exit %d", code);
		int st = system(cmd);
		if (WIFEXITED(st) && WEXITSTATUS(st) == code)
			r->system_ok++;

		/* /bin/sh -c 'exit CODE', stdout to /dev/null by file action */
		char *argv[] = { "sh", "-c", cmd, NULL };
		posix_spawn_file_actions_t fa;
		pid_t pid;
		posix_spawn_file_actions_init(&fa);
		posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY,
						 0);
		if (posix_spawn(&pid, "/bin/sh", &fa, NULL, argv, environ) == 0 &&
		    wait_status(pid) == code)
			r->spawn_ok++;
		if (posix_spawnp(&pid, "sh", &fa, NULL, argv, environ) == 0 &&
		    wait_status(pid) == code)
			r->spawnp_ok++;
		posix_spawn_file_actions_destroy(&fa);

		pid = vfork_sh(cmd);
		if (pid > 0 && wait_status(pid) == code)
			r->vfork_ok++;

		pid = _Fork();
		if (pid == 0)
			_exit(code);
		if (pid > 0 && wait_status(pid) == code)
			r->fork_ok++;
	}
	atomic_fetch_sub(&spawners_left, 1);
	return NULL;
}

static void *pinger(void *arg)
{
	char c = 'p';
	(void)arg;
	while (atomic_load(&spawners_left) > 0) {
		if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1)
			break;
		volleys++;
	}
	c = 'q';
	if (write(ping[1], &c, 1) != 1)
		return NULL;
	return NULL;
}

static void *ponger(void *arg)
{
	char c;
	(void)arg;
	while (read(ping[0], &c, 1) == 1 && c == 'p')
		if (write(pong[1], &c, 1) != 1)
			break;
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS], pi, po;

	if (pipe(ping) || pipe(pong))
		return 1;
	pthread_create(&po, NULL, ponger, NULL);
	pthread_create(&pi, NULL, pinger, NULL);
	for (long i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, spawner, (void *)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	pthread_join(pi, NULL);
	pthread_join(po, NULL);
	for (int i = 0; i < THREADS; i++) {
		struct result *r = &results[i];
		printf("thread %d: popen %d system %d posix_spawn %d "
		       "posix_spawnp %d vfork %d _Fork %d (of %d)\n",
		       i, r->popen_ok, r->system_ok, r->spawn_ok, r->spawnp_ok,
		       r->vfork_ok, r->fork_ok, ROUNDS);
	}
	printf("ping-pong went on meanwhile: %s\n", volleys > 0 ? "yes" : "no");
	return 0;
}

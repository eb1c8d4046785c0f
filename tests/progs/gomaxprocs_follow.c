// GOMAXPROCS follows the CPU affinity while the program runs (Go 1.25):
// four threads spin; every OS thread of the process is moved to CPU 0
// (raw sched_setaffinity on each task, as `taskset -a -p` does), then back
// to all CPUs. Under goshim, sysmon reads the affinity again every second
// and shrinks the P set to one (at most one OS thread runs), then grows it
// back. Needs two CPUs. A GOMAXPROCS in the environment would fix the
// count, so the program runs itself again without it.
// goshim-test: shim-only=1
// goshim-test: timeout=60
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile int stop;

static void *spin(void *arg)
{
	volatile unsigned long x = 0;
	(void)arg;
	while (!stop)
		x++;
	return NULL;
}

/* Threads of this process running now (state R). */
static int running(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	char path[300], buf[512];
	int n = 0;

	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "/proc/self/task/%s/stat",
			 e->d_name);
		FILE *f = fopen(path, "r");
		if (f && fgets(buf, sizeof buf, f)) {
			char *q = strrchr(buf, ')');
			n += q && q[2] == 'R';
		}
		if (f)
			fclose(f);
	}
	closedir(d);
	return n;
}

static void all_tasks_to(const cpu_set_t *set)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			syscall(SYS_sched_setaffinity, atoi(e->d_name),
				sizeof *set, set);
	closedir(d);
}

/* Wait up to 5 s for `want` samples in a row that satisfy ok(). */
static int waited_for(int (*ok)(int), int want)
{
	int row = 0;
	for (int i = 0; i < 50 && row < want; i++) {
		usleep(100000);
		row = ok(running()) ? row + 1 : 0;
	}
	return row >= want;
}

static int one_at_most(int n) { return n <= 1; }
static int two_at_least(int n) { return n >= 2; }

int main(int argc, char **argv)
{
	cpu_set_t all, one;
	pthread_t t[4];

	(void)argc;
	if (getenv("GOMAXPROCS")) {
		unsetenv("GOMAXPROCS");
		execv("/proc/self/exe", argv);
		perror("execv");
		return 1;
	}

	sched_getaffinity(0, sizeof all, &all);
	if (CPU_COUNT(&all) < 2) {
		fprintf(stderr, "gomaxprocs_follow: needs two CPUs\n");
		return 1;
	}
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, spin, NULL);
	printf("two Ps, two threads run: %s\n",
	       waited_for(two_at_least, 1) ? "yes" : "no");
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	all_tasks_to(&one);
	printf("affinity one CPU, one thread runs: %s\n",
	       waited_for(one_at_most, 5) ? "yes" : "no");
	all_tasks_to(&all);
	printf("affinity back, two threads run: %s\n",
	       waited_for(two_at_least, 2) ? "yes" : "no");
	stop = 1;
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	return 0;
}

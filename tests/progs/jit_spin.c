// goshim-test: env=GOMAXPROCS=2
// goshim-test: timeout=60
// goshim-test: native-min-threads=9
// goshim-test: shim-max-threads=GOMAXPROCS+3
/*
 * Threads that compute in code the program generated at run time, as a
 * JVM's threads do in its JIT-compiled code: machine code copied into an
 * anonymous executable mapping, a loop that only reads memory. Such code
 * belongs to no loaded module; goshim must still stop it by signal at the
 * end of a slice. If it could not, each spinner would lose its P after
 * 20 ms and keep its OS thread, and a new one would take the P: 8 spinners,
 * 8 more threads. Then the code is unmapped and mapped again (a JIT
 * freeing and reusing its code cache, which goshim must follow) and run
 * once more, and munmap and mremap answer as the kernel does, also
 * through syscall().
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SPINNERS 8
#define RUN_MS 500

/* long spin(volatile int *stop): counts until *stop is set. */
#if defined(__x86_64__)
static const unsigned char code[] = {
	0x31, 0xc0,		/* xor %eax,%eax */
	0x48, 0x83, 0xc0, 0x01, /* 1: add $1,%rax */
	0x8b, 0x17,		/* mov (%rdi),%edx */
	0x85, 0xd2,		/* test %edx,%edx */
	0x74, 0xf6,		/* je 1b */
	0xc3,			/* ret */
};
#elif defined(__aarch64__)
static const unsigned int code[] = {
	0xd2800001, /* mov x1, #0 */
	0x91000421, /* 1: add x1, x1, #1 */
	0xb9400002, /* ldr w2, [x0] */
	0x34ffffc2, /* cbz w2, 1b */
	0xaa0103e0, /* mov x0, x1 */
	0xd65f03c0, /* ret */
};
#else
#error "no machine code for this CPU"
#endif

typedef long spin_fn(volatile int *);

static volatile int stop;
static atomic_int started;
static spin_fn *spin;

static void *spinner(void *arg)
{
	atomic_fetch_add(&started, 1);
	*(long *)arg = spin(&stop);
	return NULL;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000 };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void *map_code(void *at)
{
	void *p = mmap(at, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		       MAP_PRIVATE | MAP_ANONYMOUS | (at ? MAP_FIXED : 0), -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	memcpy(p, code, sizeof code);
	__builtin___clear_cache((char *)p, (char *)p + sizeof code);
	return p;
}

int main(void)
{
	pthread_t t[SPINNERS];
	long counts[SPINNERS];
	void *page = map_code(NULL);
	int ran = 0;

	if (page == NULL) {
		perror("mmap PROT_EXEC");
		return 1;
	}
	spin = (spin_fn *)page;
	for (int i = 0; i < SPINNERS; i++)
		pthread_create(&t[i], NULL, spinner, &counts[i]);
	while (atomic_load(&started) < SPINNERS)
		sleep_ms(1);
	sleep_ms(RUN_MS);
	stop = 1;
	for (int i = 0; i < SPINNERS; i++) {
		pthread_join(t[i], NULL);
		ran += counts[i] > 0;
	}
	printf("%d of %d threads spun in generated code until told to stop\n",
	       ran, SPINNERS);

	/* freed and made again in the same place */
	if (munmap(page, 4096) || map_code(page) != page) {
		perror("munmap and mmap again");
		return 1;
	}
	printf("the code mapped again returns %ld\n", spin(&stop));

	/* the calls' own results */
	int r = munmap((char *)page + 1, 4096);
	printf("munmap of an unaligned address: %d %s\n", r, strerror(errno));
	void *big = mremap(page, 4096, 8192, MREMAP_MAYMOVE);
	printf("mremap to 2 pages: %s\n", big == MAP_FAILED ? strerror(errno) : "ok");
	void *fixed = mremap(big, 8192, 8192, MREMAP_FIXED, page);
	printf("mremap with MREMAP_FIXED alone: %s\n",
	       fixed == MAP_FAILED ? strerror(errno) : "ok");
	long sr = syscall(SYS_munmap, big, 0);
	printf("syscall(SYS_munmap) of length 0: %ld %s\n", sr, strerror(errno));
	sr = syscall(SYS_munmap, big, 8192);
	printf("syscall(SYS_munmap): %ld\n", sr);
	return 0;
}

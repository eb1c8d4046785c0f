// spawn_tree: every thread spawns two children down to depth 12, joins them
// and returns the size of its subtree; node ids are the heap numbering of a
// complete binary tree, so the sum of ids is checked too.
// goshim-test: shim-max-threads=GOMAXPROCS+2
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEPTH 12

struct node {
	uint64_t id;     /* 1 = root, children 2id and 2id+1 */
	int depth;
	uint64_t size;   /* out: nodes in this subtree */
	uint64_t idsum;  /* out: sum of their ids */
};

static void die(const char *what, int err)
{
	fprintf(stderr, "spawn_tree: %s: %s\n", what, strerror(err));
	exit(1);
}

static void *grow(void *arg)
{
	struct node *n = arg;
	n->size = 1;
	n->idsum = n->id;
	if (n->depth == DEPTH)
		return n;
	struct node kid[2];
	pthread_t t[2];
	int e;
	for (int i = 0; i < 2; i++) {
		kid[i] = (struct node){ .id = 2 * n->id + i, .depth = n->depth + 1 };
		if ((e = pthread_create(&t[i], NULL, grow, &kid[i])))
			die("pthread_create", e);
	}
	for (int i = 0; i < 2; i++) {
		void *r;
		if ((e = pthread_join(t[i], &r)))
			die("pthread_join", e);
		if (r != &kid[i]) {
			fprintf(stderr, "spawn_tree: node %llu: child returned the wrong pointer\n",
				(unsigned long long)n->id);
			exit(1);
		}
		n->size += kid[i].size;
		n->idsum += kid[i].idsum;
	}
	uint64_t want = (UINT64_C(2) << (DEPTH - n->depth)) - 1;
	if (n->size != want) {
		fprintf(stderr, "spawn_tree: node %llu: subtree size %llu, want %llu\n",
			(unsigned long long)n->id, (unsigned long long)n->size,
			(unsigned long long)want);
		exit(1);
	}
	return n;
}

int main(void)
{
	struct node root = { .id = 1, .depth = 0 };
	pthread_t t;
	int e;
	if ((e = pthread_create(&t, NULL, grow, &root)))
		die("pthread_create", e);
	if ((e = pthread_join(t, NULL)))
		die("pthread_join", e);
	uint64_t n = (UINT64_C(2) << DEPTH) - 1;
	printf("depth %d: %llu threads\n", DEPTH, (unsigned long long)root.size);
	printf("sum of node ids: %llu\n", (unsigned long long)root.idsum);
	if (root.size != n || root.idsum != n * (n + 1) / 2) {
		fprintf(stderr, "spawn_tree: want %llu threads, id sum %llu\n",
			(unsigned long long)n, (unsigned long long)(n * (n + 1) / 2));
		return 1;
	}
	printf("OK\n");
	return 0;
}

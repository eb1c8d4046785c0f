/* ssl_digest THREADS CHUNKS: OpenSSL 3 from many threads, for the
 * compatibility suite. Each chunk of generated data is hashed (SHA-256,
 * SHA3-256) and encrypted (AES-256-GCM, tag kept) through EVP, fetching
 * the algorithms anew for every chunk: OpenSSL's provider store, its
 * rwlocks, its run-once initialisation and its per-thread state are all
 * crossed from every thread. The per-chunk results are computed once in
 * main alone first and then by THREADS threads taking chunks from a shared
 * counter; both must agree byte for byte. Prints the digest of all results
 * (the same natively and under goshim) and exits 1 on any difference. */
#include <openssl/evp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK (64 * 1024)
#define RESULT 80 /* sha256 32 + sha3-256 32 + gcm tag 16 */

static int nchunks;
static unsigned char *single, *multi; /* nchunks * RESULT each */
static atomic_int next_chunk, failed;

static void fill(unsigned char *p, int chunk)
{
	uint64_t x = (uint64_t)chunk * 0x9e3779b97f4a7c15ull + 1;
	for (int i = 0; i < CHUNK; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		p[i] = (unsigned char)x;
	}
}

static int digest(const char *name, const unsigned char *p, size_t n,
		  unsigned char *out)
{
	EVP_MD *md = EVP_MD_fetch(NULL, name, NULL);
	unsigned len = 0;
	int ok = md && EVP_Digest(p, n, out, &len, md, NULL) && len == 32;
	EVP_MD_free(md);
	return ok;
}

static int seal(const unsigned char *p, int chunk, unsigned char *tag)
{
	static const unsigned char key[32] = "goshim compat suite key, 32 byte";
	unsigned char iv[12] = { 0 }, *out = malloc(CHUNK + 16);
	int len, ok;
	memcpy(iv, &chunk, sizeof chunk);
	EVP_CIPHER *c = EVP_CIPHER_fetch(NULL, "AES-256-GCM", NULL);
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	ok = c && ctx && out &&
	     EVP_EncryptInit_ex2(ctx, c, key, iv, NULL) &&
	     EVP_EncryptUpdate(ctx, out, &len, p, CHUNK) &&
	     EVP_EncryptFinal_ex(ctx, out + len, &len) &&
	     EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, tag);
	EVP_CIPHER_CTX_free(ctx);
	EVP_CIPHER_free(c);
	free(out);
	return ok;
}

static void one_chunk(int chunk, unsigned char *res)
{
	unsigned char *p = malloc(CHUNK);
	if (!p) {
		atomic_store(&failed, 1);
		return;
	}
	fill(p, chunk);
	if (!digest("SHA256", p, CHUNK, res) ||
	    !digest("SHA3-256", p, CHUNK, res + 32) || !seal(p, chunk, res + 64)) {
		fprintf(stderr, "ssl_digest: chunk %d: OpenSSL failed\n", chunk);
		atomic_store(&failed, 1);
	}
	free(p);
}

static void *worker(void *arg)
{
	(void)arg;
	int c;
	while ((c = atomic_fetch_add(&next_chunk, 1)) < nchunks)
		one_chunk(c, multi + (size_t)c * RESULT);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: ssl_digest THREADS CHUNKS\n");
		return 2;
	}
	int nthreads = atoi(argv[1]);
	nchunks = atoi(argv[2]);
	if (nthreads < 1 || nthreads > 1024 || nchunks < 1) {
		fprintf(stderr, "ssl_digest: THREADS 1..1024, CHUNKS >= 1\n");
		return 2;
	}
	single = calloc((size_t)nchunks, RESULT);
	multi = calloc((size_t)nchunks, RESULT);
	pthread_t *t = calloc((size_t)nthreads, sizeof *t);
	if (!single || !multi || !t)
		return 1;
	for (int c = 0; c < nchunks; c++)
		one_chunk(c, single + (size_t)c * RESULT);
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&t[i], NULL, worker, NULL)) {
			fprintf(stderr, "ssl_digest: pthread_create failed\n");
			return 1;
		}
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);

	int differ = 0;
	for (int c = 0; c < nchunks; c++)
		differ += memcmp(single + (size_t)c * RESULT,
				 multi + (size_t)c * RESULT, RESULT) != 0;
	unsigned char all[32];
	digest("SHA256", multi, (size_t)nchunks * RESULT, all);
	printf("openssl: %d threads x %d chunks of 64 KiB, %d differ, all ",
	       nthreads, nchunks, differ);
	for (int i = 0; i < 8; i++)
		printf("%02x", all[i]);
	printf("\n");
	return differ || atomic_load(&failed);
}

/* curl_fetch PORT THREADS REQUESTS: libcurl worker threads, for the
 * compatibility suite. Each of THREADS pthreads has its own easy handle
 * (libcurl's rule for threads) and makes REQUESTS keep-alive requests to
 * the bundled legacy_httpd on 127.0.0.1:PORT, alternating "/" and a short
 * "/sleep", and checks every status and body; every tenth request closes
 * its connection, so connects happen all along. Then the server's hit count
 * must equal what was sent. libcurl waits in poll() on its socket and
 * connects non-blocking: under goshim that is the netpoller's path, from
 * inside a real library. Prints one summary line; exits 1 on any wrong
 * answer. */
#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct body {
	char buf[256];
	size_t len;
};

static int port, nrequests;
static atomic_int bad;

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
	struct body *b = arg;
	size_t len = size * n;
	if (len > sizeof b->buf - 1 - b->len)
		len = sizeof b->buf - 1 - b->len;
	memcpy(b->buf + b->len, p, len);
	b->len += len;
	b->buf[b->len] = '\0';
	return size * n;
}

/* GET path on handle h; the body in *b. Returns the HTTP status, or -1
 * when libcurl failed (said on stderr). */
static long get(CURL *h, const char *path, struct body *b)
{
	char url[128];
	long code = -1;
	snprintf(url, sizeof url, "http://127.0.0.1:%d%s", port, path);
	b->len = 0;
	b->buf[0] = '\0';
	curl_easy_setopt(h, CURLOPT_URL, url);
	CURLcode rc = curl_easy_perform(h);
	if (rc != CURLE_OK) {
		fprintf(stderr, "curl_fetch: %s: %s\n", url,
			curl_easy_strerror(rc));
		return -1;
	}
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	return code;
}

static CURL *new_handle(struct body *b)
{
	CURL *h = curl_easy_init();
	if (!h) {
		fprintf(stderr, "curl_fetch: curl_easy_init failed\n");
		exit(1);
	}
	/* Threads and signals do not mix: libcurl's own advice. */
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, b);
	return h;
}

static void *worker(void *arg)
{
	long id = (long)arg;
	struct body b;
	CURL *h = new_handle(&b);
	for (int i = 0; i < nrequests; i++) {
		char path[64], want[64];
		if ((i + id) % 4 == 0) {
			int ms = 1 + (int)((i + id) % 3);
			snprintf(path, sizeof path, "/sleep?ms=%d", ms);
			snprintf(want, sizeof want, "slept %d\n", ms);
		} else {
			snprintf(path, sizeof path, "/");
			snprintf(want, sizeof want, "hello\n");
		}
		curl_easy_setopt(h, CURLOPT_FORBID_REUSE, (long)(i % 10 == 9));
		long code = get(h, path, &b);
		if (code != 200 || strcmp(b.buf, want) != 0) {
			fprintf(stderr,
				"curl_fetch: thread %ld: %s: status %ld body '%s'\n",
				id, path, code, b.buf);
			atomic_fetch_add(&bad, 1);
		}
	}
	curl_easy_cleanup(h);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: curl_fetch PORT THREADS REQUESTS\n");
		return 2;
	}
	port = atoi(argv[1]);
	int nthreads = atoi(argv[2]);
	nrequests = atoi(argv[3]);
	if (nthreads < 1 || nthreads > 1024 || nrequests < 1) {
		fprintf(stderr, "curl_fetch: THREADS 1..1024, REQUESTS >= 1\n");
		return 2;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		fprintf(stderr, "curl_fetch: curl_global_init failed\n");
		return 1;
	}
	pthread_t *t = calloc((size_t)nthreads, sizeof *t);
	for (long i = 0; i < nthreads; i++) {
		int err = pthread_create(&t[i], NULL, worker, (void *)i);
		if (err) {
			fprintf(stderr, "curl_fetch: pthread_create: %s\n",
				strerror(err));
			return 1;
		}
	}
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	free(t);

	struct body b;
	CURL *h = new_handle(&b);
	long code = get(h, "/hits", &b);
	long hits = code == 200 ? strtol(b.buf, NULL, 10) : -1;
	curl_easy_cleanup(h);
	curl_global_cleanup();
	long want = (long)nthreads * nrequests;
	printf("curl: %d threads x %d requests, %d wrong, server counted %ld of %ld\n",
	       nthreads, nrequests, atomic_load(&bad), hits, want);
	return atomic_load(&bad) || hits != want;
}

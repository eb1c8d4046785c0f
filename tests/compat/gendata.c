/* gendata BYTES SEED: BYTES of deterministic text on stdout, for the
 * compatibility suite's compressors and sort. Lines of pseudo-random words
 * from a small vocabulary: compressible like real text (about 3:1), with
 * keys random enough that sorting moves every line. Same BYTES and SEED,
 * same bytes, on any machine (xorshift64, no libc randomness). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const words[] = {
	"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf",
	"hotel", "india", "juliett", "kilo", "lima", "mike", "november",
	"oscar", "papa", "quebec", "romeo", "sierra", "tango", "uniform",
	"victor", "whiskey", "xray", "yankee", "zulu", "goroutine", "thread",
	"mutex", "channel", "scheduler", "preempt",
};

static uint64_t state;

static uint64_t next(void)
{
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return state;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: gendata BYTES SEED\n");
		return 2;
	}
	unsigned long long left = strtoull(argv[1], NULL, 10);
	state = strtoull(argv[2], NULL, 10) * 0x9e3779b97f4a7c15ull + 1;

	static char buf[1 << 16];
	size_t n = 0;
	while (left > 0) {
		char line[256];
		uint64_t r = next();
		int len = snprintf(line, sizeof line, "%08x", (unsigned)r);
		for (int w = 0; w < 6 + (int)(r >> 60); w++) {
			const char *s = words[next() % 32];
			line[len++] = ' ';
			memcpy(line + len, s, strlen(s));
			len += (int)strlen(s);
		}
		len += snprintf(line + len, sizeof line - (size_t)len, " %u\n",
				(unsigned)(next() % 100000));
		if ((unsigned long long)len > left)
			len = (int)left, line[len - 1] = '\n';
		if (n + (size_t)len > sizeof buf) {
			fwrite(buf, 1, n, stdout);
			n = 0;
		}
		memcpy(buf + n, line, (size_t)len);
		n += (size_t)len;
		left -= (unsigned long long)len;
	}
	fwrite(buf, 1, n, stdout);
	return ferror(stdout) || fflush(stdout) ? 1 : 0;
}

/*
 * trace.c: GOSHIM_TRACE=FILE writes the scheduler's events as Chrome
 * trace-event JSON, which Perfetto (ui.perfetto.dev) and chrome://tracing
 * open.
 *
 * Tracks: process 1 "goroutines" has one track per goroutine (tid = its
 * goroutine id), where "running" slices show when it ran (args: the P),
 * "syscall" slices nest inside them, and instant events mark its
 * creation (args: the parent), each block (args: the wait reason), each
 * unblock (args: who readied it) and its end. Process 2 "procs" has one
 * track per P with "P running" slices (args: the M) and instant "steal"
 * events (args: the victim P). A track per goroutine reads best for a
 * program's threads: each one's life is one row, its waits are the gaps.
 *
 * Events go to a buffer of the M that emits them (no lock shared between
 * Ms; a spinlock only the exit flush ever contends), and are written out
 * as JSON when the buffer is full and at exit; threads that are not Ms
 * (sysmon, threads goshim did not create) share one buffer. So the file
 * is ordered per buffer, not by time: viewers sort by ts. Timestamps are
 * microseconds since start-up with nanosecond decimals. Slices a
 * goroutine or P still had open at exit are closed there, so that every
 * B has its E; events a running goroutine records after that are
 * dropped. A process that ends with _exit (or a signal) writes no more
 * than its full buffers and leaves the JSON unfinished. A child of fork records nothing (the file and its copy of the
 * buffers are the parent's). Programs that run others pass GOSHIM_TRACE
 * on (a shell, timeout): the first process holds FILE (flock) and each
 * later one while it runs writes FILE.PID instead, and says so.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include "netpoll.h"
#include "print.h"
#include "runtime.h"
#include "runtime2.h"
#include "sys.h"
#include "trace.h"

#define TRACE_EVENTS 8192

enum { PID_G = 1, PID_P = 2 };

struct event {
	int64_t ts;
	int64_t tid;
	int64_t arg;
	const char *name;
	const char *argname; /* NULL: no args */
	char text[24];	     /* a string argument (a wait reason) */
	char ph;
	uint8_t pid;
};

struct trace_buf {
	struct spinlock lock;
	struct trace_buf *next; /* all buffers, for the exit flush */
	/* the M's open slices, closed at exit if still open */
	int64_t running; /* goroutine id, or 0 */
	bool in_syscall;
	int n;
	struct event ev[TRACE_EVENTS];
};

bool trace_on;
static int trace_fd = -1;
static int64_t t0;
static struct rlock file_lock; /* the file, and the list of buffers */
static bool wrote_any;
static bool finished; /* the JSON is closed: write nothing more */
static struct trace_buf *buffers;
static struct trace_buf shared; /* threads that are not Ms */
static bool *p_open;		/* P slices open, by P id */

static void write_all(const char *s, size_t n)
{
	while (n > 0) {
		long w = sys_write(trace_fd, s, n);
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

/* Formatted by hand: snprintf made a traced program many times slower. */
static char *str(char *p, const char *s)
{
	while (*s)
		*p++ = *s++;
	return p;
}

/* JSON for one event, at most EVENT_JSON_MAX bytes; returns its end. The
 * text argument is escaped. */
#define EVENT_JSON_MAX 256
static char *format(char *p, const struct event *e)
{
	if (e->ph == 'M') {
		p = str(p, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":");
		p = print_int(p, e->pid);
		p = str(p, ",\"tid\":");
		p = print_int(p, e->tid);
		p = str(p, ",\"args\":{\"name\":\"");
		p = str(p, e->name);
		p = print_int(p, e->tid);
		return str(p, "\"}}");
	}
	int64_t ts = e->ts - t0;
	p = str(p, "{\"name\":\"");
	p = str(p, e->name);
	p = str(p, "\",\"ph\":\"");
	*p++ = e->ph;
	*p++ = '"';
	if (e->ph == 'i')
		p = str(p, ",\"s\":\"t\"");
	p = str(p, ",\"ts\":");
	p = print_int(p, ts / 1000); /* microseconds, nanosecond decimals */
	*p++ = '.';
	*p++ = (char)('0' + ts % 1000 / 100);
	*p++ = (char)('0' + ts % 100 / 10);
	*p++ = (char)('0' + ts % 10);
	p = str(p, ",\"pid\":");
	p = print_int(p, e->pid);
	p = str(p, ",\"tid\":");
	p = print_int(p, e->tid);
	if (e->argname) {
		p = str(p, ",\"args\":{\"");
		p = str(p, e->argname);
		p = str(p, "\":");
		if (e->text[0]) {
			*p++ = '"';
			for (const char *c = e->text; *c; c++) {
				if (*c == '"' || *c == '\\')
					*p++ = '\\';
				*p++ = (unsigned char)*c < 0x20 ? '?' : *c;
			}
			*p++ = '"';
		} else {
			p = print_int(p, e->arg);
		}
		*p++ = '}';
	}
	*p++ = '}';
	return p;
}

/* Write the buffer's events out (its lock held). */
static void flush(struct trace_buf *b)
{
	char out[16384];
	size_t n = 0;

	rlock_lock(&file_lock);
	if (!finished) {
		for (int i = 0; i < b->n; i++) {
			if (n + 2 + EVENT_JSON_MAX > sizeof out) {
				write_all(out, n);
				n = 0;
			}
			if (wrote_any)
				out[n++] = ',', out[n++] = '\n';
			wrote_any = true;
			n = (size_t)(format(out + n, &b->ev[i]) - out);
		}
		write_all(out, n);
	}
	rlock_unlock(&file_lock);
	b->n = 0;
}

/* The calling thread's buffer, locked. */
static struct trace_buf *buf_get(void)
{
	struct g *gp = getg();
	struct m *mp = gp ? gp->m : NULL;
	struct trace_buf *b = mp ? mp->trace : &shared;

	if (b == NULL) {
		b = calloc(1, sizeof *b);
		if (b == NULL)
			b = &shared;
		else {
			rlock_lock(&file_lock);
			b->next = buffers;
			buffers = b;
			rlock_unlock(&file_lock);
			mp->trace = b;
		}
	}
	spin_lock(&b->lock);
	return b;
}

static void put(struct trace_buf *b, char ph, uint8_t pid, int64_t tid,
		const char *name, const char *argname, int64_t arg,
		const char *text)
{
	if (b->n == TRACE_EVENTS)
		flush(b);
	struct event *e = &b->ev[b->n++];
	e->ts = nanotime();
	e->ph = ph;
	e->pid = pid;
	e->tid = tid;
	e->name = name;
	e->argname = argname;
	e->arg = arg;
	size_t k = 0;
	while (text && text[k] && k < sizeof e->text - 1) {
		e->text[k] = text[k];
		k++;
	}
	e->text[k] = 0;
}

static void emit(char ph, uint8_t pid, int64_t tid, const char *name,
		 const char *argname, int64_t arg, const char *text)
{
	struct trace_buf *b = buf_get();
	put(b, ph, pid, tid, name, argname, arg, text);
	spin_unlock(&b->lock);
}

void trace_gocreate(const struct g *gp, const struct g *parent)
{
	struct trace_buf *b = buf_get();
	int64_t id = (int64_t)gp->goid;
	put(b, 'M', PID_G, id, "G", NULL, 0, NULL);
	put(b, 'i', PID_G, id, "create", "parent",
	    parent && !parent->is_g0 ? (int64_t)parent->goid : 0, NULL);
	spin_unlock(&b->lock);
}

void trace_gostart(const struct g *gp, const struct p *pp)
{
	struct trace_buf *b = buf_get();
	b->running = (int64_t)gp->goid;
	put(b, 'B', PID_G, b->running, "running", "P", pp ? pp->id : -1,
	    NULL);
	spin_unlock(&b->lock);
}

void trace_gostop(const struct g *gp, const char *why, bool ended)
{
	struct trace_buf *b = buf_get();
	int64_t id = (int64_t)gp->goid;
	put(b, 'E', PID_G, id, "running", NULL, 0, NULL);
	b->running = 0;
	if (ended)
		put(b, 'i', PID_G, id, "end", NULL, 0, NULL);
	else if (why)
		put(b, 'i', PID_G, id, "block", "reason", 0, why);
	spin_unlock(&b->lock);
}

void trace_gounblock(const struct g *gp, const struct g *by)
{
	emit('i', PID_G, (int64_t)gp->goid, "unblock", "by",
	     by && !by->is_g0 ? (int64_t)by->goid : 0, NULL);
}

void trace_syscall_enter(const struct g *gp)
{
	struct trace_buf *b = buf_get();
	b->in_syscall = true;
	put(b, 'B', PID_G, (int64_t)gp->goid, "syscall", NULL, 0, NULL);
	spin_unlock(&b->lock);
}

void trace_syscall_exit(const struct g *gp)
{
	struct trace_buf *b = buf_get();
	b->in_syscall = false;
	put(b, 'E', PID_G, (int64_t)gp->goid, "syscall", NULL, 0, NULL);
	spin_unlock(&b->lock);
}

/* A P's slices are begun and ended by whoever owns it at the time, one
 * at a time, so p_open needs no lock of its own. */
void trace_procstart(const struct p *pp, const struct m *mp)
{
	p_open[pp->id] = true;
	emit('B', PID_P, pp->id, "P running", "M", mp ? mp->id : -1, NULL);
}

void trace_procstop(const struct p *pp)
{
	p_open[pp->id] = false;
	emit('E', PID_P, pp->id, "P running", NULL, 0, NULL);
}

void trace_steal(const struct p *thief, const struct p *victim)
{
	emit('i', PID_P, thief->id, "steal", "from", victim->id, NULL);
}

/* At exit: close what is open, write every buffer, end the JSON. */
static void trace_finish(void)
{
	if (!trace_on)
		return;
	trace_on = false;
	rlock_lock(&file_lock);
	struct trace_buf *list = buffers;
	rlock_unlock(&file_lock);
	for (struct trace_buf *b = list;; b = b->next) {
		if (b == NULL)
			b = &shared;
		spin_lock(&b->lock);
		if (b->in_syscall)
			put(b, 'E', PID_G, b->running, "syscall", NULL, 0,
			    NULL);
		if (b->running)
			put(b, 'E', PID_G, b->running, "running", NULL, 0,
			    NULL);
		b->running = 0;
		b->in_syscall = false;
		if (b == &shared)
			for (int32_t i = 0; i < gomaxprocs; i++)
				if (p_open[i])
					put(b, 'E', PID_P, i, "P running",
					    NULL, 0, NULL);
		flush(b);
		spin_unlock(&b->lock);
		if (b == &shared)
			break;
	}
	rlock_lock(&file_lock);
	write_all("\n]}\n", 4);
	finished = true;
	rlock_unlock(&file_lock);
}

void trace_fork_child(void)
{
	trace_on = false;
	finished = true;
}

/* The file, locked for this process and emptied; -errno, -EWOULDBLOCK if
 * another process holds it. */
static int trace_open(const char *file)
{
	int fd = fd_runtime_open(file, O_WRONLY | O_CREAT, 0644);
	if (fd < 0)
		return fd;
	long err = SYS2(SYS_flock, fd, LOCK_EX | LOCK_NB);
	if (err == 0)
		err = SYS2(SYS_ftruncate, fd, 0);
	if (err < 0) {
		fd_runtime_close(fd);
		return (int)err;
	}
	return fd;
}

bool trace_fd_is(int fd)
{
	return fd == trace_fd;
}

/* The old number becomes the program's when this returns: no write may
 * still be using it. */
void trace_fd_set(int fd)
{
	rlock_lock(&file_lock);
	trace_fd = fd;
	rlock_unlock(&file_lock);
}

void trace_init(const char *file)
{
	static const char head[] =
		"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n"
		"{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,"
		"\"args\":{\"name\":\"goroutines\"}},\n"
		"{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":2,"
		"\"args\":{\"name\":\"procs\"}}";

	char own[300];

	if (file == NULL || *file == 0)
		return;
	trace_fd = trace_open(file);
	if (trace_fd == -EWOULDBLOCK) {
		snprint(own, sizeof own, "%.280s.%d", file, (int)sys_getpid());
		print("goshim: GOSHIM_TRACE: %.120s is another process's "
		      "trace; this one writes %.140s\n",
		      file, own);
		file = own;
		trace_fd = trace_open(file);
	}
	p_open = calloc((size_t)gomaxprocs, sizeof *p_open);
	if (trace_fd < 0 || p_open == NULL) {
		print("goshim: GOSHIM_TRACE: cannot write %.280s: %s\n",
		      file, strerror(trace_fd < 0 ? -trace_fd : ENOMEM));
		return;
	}
	t0 = nanotime();
	write_all(head, sizeof head - 1);
	wrote_any = true;
	trace_on = true;
	/* What runs already: the main goroutine on P0. */
	for (int32_t i = 0; i < gomaxprocs; i++) {
		struct trace_buf *b = buf_get();
		put(b, 'M', PID_P, i, "P", NULL, 0, NULL);
		spin_unlock(&b->lock);
		if (allp[i]->status == P_RUNNING)
			trace_procstart(allp[i], allp[i]->m);
	}
	struct g *gp = getg();
	trace_gocreate(gp, NULL);
	trace_gostart(gp, gp->m->p);
	runtime_atexit(trace_finish);
}

// thread_local: C++ thread_local objects with constructors and destructors in
// std::threads: constructed lazily and only in threads that use them,
// destroyed in reverse order of construction before join() returns; the main
// thread's own thread_local is destroyed at exit.
// goshim-test: shim-max-threads=GOMAXPROCS+2
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#define CHECK(c) do { if (!(c)) { \
	std::fprintf(stderr, "thread_local: %s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
	std::exit(1); } } while (0)

constexpr int NTHR = 400;
constexpr int BATCH = 50;

static std::atomic<int> ctors{0}, dtors{0}, ticket{0};

struct Order {
	int a = -1, b = -1, c = -1;   // destruction tickets
};
static Order order[NTHR];

struct A {
	int id = -1;
	std::string name;
	A() { ctors++; }
	~A() {
		if (id >= 0)
			order[id].a = ticket++;
		dtors++;
	}
};

struct B {
	int id = -1;
	std::vector<int> data;
	B() : data(64, 7) { ctors++; }
	~B() {
		if (id >= 0)
			order[id].b = ticket++;
		dtors++;
	}
};

struct C {
	int id;
	explicit C(int i) : id(i) { ctors++; }
	~C() {
		order[id].c = ticket++;
		dtors++;
	}
};

struct MainOnly {
	bool used = false;
	~MainOnly() {
		if (used)
			std::printf("main thread's thread_local destroyed at exit\n");
	}
};

// Namespace scope: constructed together, in this order, on first use in a thread.
thread_local A ta;
thread_local B tb;
thread_local MainOnly tm;

static void work(int id)
{
	if (id % 2)
		return;   // odd threads never touch a thread_local: nothing built
	ta.id = id;
	ta.name = "thread-" + std::to_string(id);
	tb.id = id;
	for (int &x : tb.data)
		x = id;
	thread_local C tc(id);   // function scope: built here, after ta and tb
	std::this_thread::yield();
	CHECK(ta.id == id && ta.name == "thread-" + std::to_string(id));
	CHECK(tb.id == id && tc.id == id);
	for (int x : tb.data)
		CHECK(x == id);
}

int main()
{
	int touched = 0;
	for (int base = 0; base < NTHR; base += BATCH) {
		std::vector<std::thread> ts;
		for (int i = base; i < base + BATCH; i++)
			ts.emplace_back(work, i);
		for (int i = base; i < base + BATCH; i++) {
			ts[i - base].join();
			const Order &o = order[i];
			if (i % 2) {
				CHECK(o.a == -1 && o.b == -1 && o.c == -1);
			} else {
				touched++;
				// destroyed before join returned, newest first
				CHECK(o.a >= 0 && o.b >= 0 && o.c >= 0);
				CHECK(o.c < o.b && o.b < o.a);
			}
		}
	}
	int mainbuilt = ctors.load();   // counted before main touches its own
	tm.used = true;
	std::printf("%d threads, %d used thread_locals\n", NTHR, touched);
	std::printf("constructed %d, destroyed %d\n", mainbuilt, dtors.load());
	std::printf("destruction order in every thread: function-scope, then reverse declaration order\n");
	CHECK(mainbuilt == 3 * touched && dtors.load() == mainbuilt);
	CHECK(ta.id == -1 && tb.id == -1);   // main's copies untouched
	std::printf("OK\n");
	return 0;
}

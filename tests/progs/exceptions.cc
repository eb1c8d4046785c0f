// exceptions: C++ exceptions thrown and caught in many threads: deep unwinding
// through destructor-heavy frames whose destructors yield (so a thread is
// descheduled mid-unwind with an exception in flight), nested exceptions,
// rethrow after a yield inside a handler, and std::exception_ptr handed to the
// joining thread through std::promise/std::future and by hand.
// The unwinder takes the loader's lock (dl_iterate_phdr), a futex inside
// libc that goshim cannot see: a thread that waits there on a loaded
// machine has its P handed to one more M.
// goshim-test: shim-max-threads=GOMAXPROCS+3
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <future>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#define CHECK(c) do { if (!(c)) { \
	std::fprintf(stderr, "exceptions: %s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
	std::exit(1); } } while (0)

constexpr int NTHR = 200;
constexpr int BATCH = 50;
constexpr int ROUNDS = 20;
constexpr int DEPTH = 16;

static std::atomic<long> built{0}, destroyed{0}, caught{0};

// Destroyed either by unwinding (one exception in flight) or normally.
struct Guard {
	int in_flight;
	std::string payload;
	explicit Guard(int f) : in_flight(f), payload(40, 'g') { built++; }
	~Guard() {
		CHECK(std::uncaught_exceptions() == in_flight);
		std::this_thread::yield();
		CHECK(std::uncaught_exceptions() == in_flight);
		destroyed++;
	}
};

static std::string msg(const char *what, int id, int r)
{
	return std::string(what) + " " + std::to_string(id) + "/" + std::to_string(r);
}

static void dive(int depth, int id, int r)
{
	Guard g1(1);
	std::vector<int> v(depth + 1, id);
	Guard g2(1);
	if (depth == 0) {
		std::this_thread::yield();
		throw std::runtime_error(msg("bottom", id, r));
	}
	dive(depth - 1, id, r);
	CHECK(false);   // not reached
}

static void rounds(int id)
{
	for (int r = 0; r < ROUNDS; r++) {
		Guard normal(0);   // destroyed at the end of each round, nothing in flight

		// 1. deep unwind through yielding destructors
		try {
			Guard g(1);
			dive(DEPTH, id, r);
		} catch (const std::runtime_error &e) {
			CHECK(std::uncaught_exceptions() == 0);
			CHECK(e.what() == msg("bottom", id, r));
			caught++;
		}

		// 2. nested exceptions
		try {
			try {
				Guard g(1);
				throw std::out_of_range(msg("inner", id, r));
			} catch (const std::logic_error &) {
				Guard g(1);   // unwound by the nested throw below
				std::this_thread::yield();
				std::throw_with_nested(std::runtime_error(msg("outer", id, r)));
			}
		} catch (const std::runtime_error &e) {
			CHECK(e.what() == msg("outer", id, r));
			try {
				std::rethrow_if_nested(e);
				CHECK(false);
			} catch (const std::out_of_range &inner) {
				CHECK(inner.what() == msg("inner", id, r));
				caught++;
			}
			caught++;
		}

		// 3. the handled exception survives a yield and is rethrown
		try {
			try {
				throw id * 1000 + r;
			} catch (int) {
				std::this_thread::yield();
				CHECK(std::current_exception() != nullptr);
				throw;
			}
		} catch (int v) {
			CHECK(v == id * 1000 + r);
			CHECK(std::current_exception() != nullptr);
			caught++;
		}
		CHECK(std::current_exception() == nullptr);
	}
}

static void with_promise(int id, std::promise<int> p)
{
	rounds(id);
	try {
		Guard g(1);
		std::this_thread::yield();
		throw std::runtime_error(msg("promise", id, 0));
	} catch (...) {
		p.set_exception(std::current_exception());
	}
}

static std::exception_ptr by_hand[NTHR];

static void with_ptr(int id)
{
	rounds(id);
	try {
		throw std::invalid_argument(msg("by hand", id, 0));
	} catch (...) {
		std::this_thread::yield();
		by_hand[id] = std::current_exception();
	}
}

int main()
{
	int from_promise = 0, from_ptr = 0;
	for (int base = 0; base < NTHR; base += BATCH) {
		std::vector<std::thread> ts;
		std::vector<std::future<int>> fs;
		for (int i = base; i < base + BATCH; i++) {
			if (i % 2) {
				ts.emplace_back(with_ptr, i);
			} else {
				std::promise<int> p;
				fs.push_back(p.get_future());
				ts.emplace_back(with_promise, i, std::move(p));
			}
		}
		for (int i = base, f = 0; i < base + BATCH; i++) {
			ts[i - base].join();
			try {
				if (i % 2)
					std::rethrow_exception(by_hand[i]);
				else
					fs[f++].get();
				CHECK(false);
			} catch (const std::invalid_argument &e) {
				CHECK(i % 2 && e.what() == msg("by hand", i, 0));
				from_ptr++;
			} catch (const std::runtime_error &e) {
				CHECK(i % 2 == 0 && e.what() == msg("promise", i, 0));
				from_promise++;
			}
			by_hand[i] = nullptr;
		}
	}
	std::printf("%d threads x %d rounds: %ld exceptions caught in threads\n",
		    NTHR, ROUNDS, caught.load());
	std::printf("rethrown in main: %d via std::future, %d via exception_ptr\n",
		    from_promise, from_ptr);
	std::printf("guards built %ld, destroyed %ld\n", built.load(), destroyed.load());
	CHECK(caught.load() == (long)NTHR * ROUNDS * 4);
	CHECK(from_promise == NTHR / 2 && from_ptr == NTHR / 2);
	CHECK(built.load() == destroyed.load());
	CHECK(built.load() == (long)NTHR * ROUNDS * (2 + 2 * (DEPTH + 1) + 2) + NTHR / 2);
	std::printf("OK\n");
	return 0;
}

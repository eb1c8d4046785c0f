// cxx_threads: the C++ standard library's threads, as C++ programs use
// them, for the compatibility suite: std::thread, std::mutex,
// std::condition_variable, std::async and futures (values and exceptions),
// std::shared_mutex and thread_local objects with constructors and
// destructors. libstdc++ reaches pthreads through its gthr layer (and
// __cxa_thread_atexit for thread_local destructors), so this checks that
// path, not the C one. Every result is exact and printed; natively and
// under goshim the output must be the same.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <future>
#include <mutex>
#include <shared_mutex>
#include <stdexcept>
#include <thread>
#include <vector>

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

// Each thread's own object: built on first use in that thread, destroyed
// when the thread exits; the destructor reports the thread's work.
static std::atomic<uint64_t> tls_destroyed{0}, tls_sum{0};
struct PerThread {
	uint64_t work = 0;
	~PerThread()
	{
		tls_sum += work;
		tls_destroyed++;
	}
};
static thread_local PerThread per_thread;

// 1. Plain threads over disjoint slices, joined.
static uint64_t threads_sum(int nthreads, uint64_t n)
{
	std::vector<uint64_t> part(nthreads);
	std::vector<std::thread> ts;
	for (int t = 0; t < nthreads; t++)
		ts.emplace_back([&part, t, nthreads, n] {
			uint64_t s = 0;
			for (uint64_t i = t; i < n; i += nthreads)
				s += mix(i);
			per_thread.work += n / nthreads;
			part[t] = s;
		});
	for (auto &th : ts)
		th.join();
	uint64_t s = 0;
	for (uint64_t v : part)
		s += v;
	return s;
}

// 2. A bounded queue with a mutex and two condition variables, several
// producers and consumers; the consumers' checksum is order-independent.
static uint64_t queue_sum(int producers, int consumers, int per_producer)
{
	std::mutex mu;
	std::condition_variable not_full, not_empty;
	std::deque<uint64_t> q;
	const size_t cap = 64;
	int producing = producers;
	std::atomic<uint64_t> sum{0};
	std::vector<std::thread> ts;

	for (int p = 0; p < producers; p++)
		ts.emplace_back([&, p] {
			for (int i = 0; i < per_producer; i++) {
				std::unique_lock<std::mutex> lk(mu);
				not_full.wait(lk, [&] { return q.size() < cap; });
				q.push_back(mix((uint64_t)p * per_producer + i));
				not_empty.notify_one();
			}
			std::lock_guard<std::mutex> lk(mu);
			if (--producing == 0)
				not_empty.notify_all();
		});
	for (int c = 0; c < consumers; c++)
		ts.emplace_back([&] {
			uint64_t local = 0;
			for (;;) {
				std::unique_lock<std::mutex> lk(mu);
				not_empty.wait(lk, [&] {
					return !q.empty() || producing == 0;
				});
				if (q.empty())
					break;
				local += q.front();
				q.pop_front();
				not_full.notify_one();
			}
			sum += local;
		});
	for (auto &th : ts)
		th.join();
	return sum;
}

// 3. std::async tasks: values come back through futures, and so does an
// exception thrown in one of them.
static uint64_t async_sum(int tasks, int *caught)
{
	std::vector<std::future<uint64_t>> fs;
	for (int t = 0; t < tasks; t++)
		fs.push_back(std::async(std::launch::async, [t] {
			if (t % 7 == 3)
				throw std::runtime_error("task " + std::to_string(t));
			uint64_t s = 0;
			for (int i = 0; i < 20000; i++)
				s += mix((uint64_t)t << 32 | (uint64_t)i);
			per_thread.work += 1;
			return s;
		}));
	uint64_t s = 0;
	*caught = 0;
	for (auto &f : fs) {
		try {
			s += f.get();
		} catch (const std::runtime_error &) {
			(*caught)++;
		}
	}
	return s;
}

// 4. Readers and writers on a std::shared_mutex: readers must always see
// the two halves of the pair equal.
static int shared_rounds(int readers, int writers, int rounds, long *value)
{
	std::shared_mutex mu;
	long a = 0, b = 0;
	std::atomic<int> torn{0};
	std::vector<std::thread> ts;
	for (int w = 0; w < writers; w++)
		ts.emplace_back([&] {
			for (int i = 0; i < rounds; i++) {
				std::unique_lock<std::shared_mutex> lk(mu);
				a++;
				std::this_thread::yield();
				b++;
			}
		});
	for (int r = 0; r < readers; r++)
		ts.emplace_back([&] {
			for (int i = 0; i < rounds; i++) {
				std::shared_lock<std::shared_mutex> lk(mu);
				if (a != b)
					torn++;
			}
		});
	for (auto &th : ts)
		th.join();
	*value = a;
	return torn;
}

int main()
{
	std::printf("threads: sum %016llx\n",
		    (unsigned long long)threads_sum(16, 2000000));
	std::printf("queue: sum %016llx\n",
		    (unsigned long long)queue_sum(4, 4, 50000));
	int caught;
	uint64_t as = async_sum(32, &caught);
	std::printf("async: sum %016llx, %d exceptions\n",
		    (unsigned long long)as, caught);
	long v;
	int torn = shared_rounds(8, 2, 20000, &v);
	std::printf("shared_mutex: %ld writes, %d torn reads\n", v, torn);
	// Every thread above has exited: their thread_local objects are gone.
	std::printf("thread_local: %llu destroyed, work %llu\n",
		    (unsigned long long)tls_destroyed.load(),
		    (unsigned long long)tls_sum.load());
	return 0;
}

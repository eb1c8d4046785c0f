// atomic_wait: C++20 waits, which libstdc++ makes with raw futex calls
// through syscall(): 500 threads block in std::atomic<int>::wait until a
// notify_all, then 500 block acquiring a std::counting_semaphore that
// main releases one unit at a time, then pairs of threads pass a token
// back and forth with wait and notify_one. Natively every waiter holds an
// OS thread; under goshim they park.
// goshim-test: shim-max-threads=GOMAXPROCS+4
// goshim-test: native-min-threads=501
// goshim-test: timeout=60
#include <atomic>
#include <cstdio>
#include <semaphore>
#include <thread>
#include <vector>

static constexpr int N = 500;
static constexpr int PAIRS = 8, ROUNDS = 2000;

int main()
{
	std::atomic<int> gate{0}, arrived{0}, passed{0};
	std::vector<std::thread> ts;

	for (int i = 0; i < N; i++)
		ts.emplace_back([&] {
			arrived.fetch_add(1);
			gate.wait(0);
			passed.fetch_add(1);
		});
	while (arrived.load() < N)
		std::this_thread::sleep_for(std::chrono::milliseconds(1));
	std::this_thread::sleep_for(std::chrono::milliseconds(200));
	gate.store(1);
	gate.notify_all();
	for (auto &t : ts)
		t.join();
	ts.clear();
	std::printf("atomic wait: %d of %d passed the gate\n", passed.load(),
		    N);

	std::counting_semaphore<> sem(0);
	std::atomic<int> acquired{0};
	for (int i = 0; i < N; i++)
		ts.emplace_back([&] {
			sem.acquire();
			acquired.fetch_add(1);
		});
	std::this_thread::sleep_for(std::chrono::milliseconds(200));
	for (int i = 0; i < N; i++)
		sem.release();
	for (auto &t : ts)
		t.join();
	ts.clear();
	bool none_left = !sem.try_acquire_for(std::chrono::milliseconds(20));
	std::printf("counting_semaphore: %d acquired, %s left\n",
		    acquired.load(), none_left ? "none" : "some");

	std::vector<std::atomic<int>> tokens(PAIRS);
	std::atomic<long> turns{0};
	for (int p = 0; p < PAIRS; p++)
		for (int side = 0; side < 2; side++)
			ts.emplace_back([&, p, side] {
				auto &tok = tokens[p];
				for (int r = 0; r < ROUNDS; r++) {
					int mine = 2 * r + side;
					int v;
					while ((v = tok.load()) != mine)
						tok.wait(v);
					tok.store(mine + 1);
					tok.notify_one();
					turns.fetch_add(1);
				}
			});
	for (auto &t : ts)
		t.join();
	std::printf("ping-pong: %ld turns\n", turns.load());
	return 0;
}

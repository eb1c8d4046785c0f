// dump_exceptions: C++ exceptions still work after a goroutine dump has
// loaded libunwind into the process. libunwind exports _Unwind_* too;
// goshim dlopens it RTLD_LOCAL so that the program's throws keep going
// through libgcc's unwinder. The main thread raises SIGQUIT while 32
// threads throw and catch through destructor-heavy frames, waits until the
// dump has loaded libunwind.so.8, then lets them throw again: every
// exception must be caught where it should and every destructor run.
// Natively SIGQUIT would end the program: goshim only.
// goshim-test: shim-only=1
// goshim-test: shim-stderr=^SIGQUIT: goroutine dump$
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <link.h>
#include <stdexcept>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

constexpr int NTHR = 32;
constexpr int THROWS = 2000;
constexpr int DEPTH = 8;

static std::atomic<long> built{0}, destroyed{0}, caught{0};
static std::atomic<int> phase{0};

struct Guard {
	Guard() { built++; }
	~Guard() { destroyed++; }
};

[[gnu::noinline]] static void dive(int depth, int i)
{
	Guard g;
	if (depth == 0)
		throw std::runtime_error("deep " + std::to_string(i));
	dive(depth - 1, i);
}

static void thrower()
{
	for (int round = 0; round < 2; round++) {
		while (phase.load() < round * 2)
			std::this_thread::yield();
		for (int i = 0; i < THROWS; i++) {
			try {
				dive(DEPTH, i);
			} catch (const std::runtime_error &e) {
				if (std::strncmp(e.what(), "deep ", 5) == 0)
					caught++;
			}
		}
	}
}

static int find_unwind(struct dl_phdr_info *info, size_t, void *found)
{
	if (info->dlpi_name && std::strstr(info->dlpi_name, "libunwind.so.8"))
		*(bool *)found = true;
	return 0;
}

static bool libunwind_loaded()
{
	bool found = false;
	dl_iterate_phdr(find_unwind, &found);
	return found;
}

int main(int, char **argv)
{
	// A shell that starts a job in the background makes it ignore
	// SIGQUIT, and goshim then leaves SIGQUIT alone: start again with
	// the default action.
	struct sigaction old;
	if (sigaction(SIGQUIT, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) {
		std::signal(SIGQUIT, SIG_DFL);
		execv("/proc/self/exe", argv);
		std::perror("execv");
		return 1;
	}
	std::vector<std::thread> ts;
	for (int i = 0; i < NTHR; i++)
		ts.emplace_back(thrower);
	std::raise(SIGQUIT); // while the first round throws
	for (int i = 0; i < 600 && !libunwind_loaded(); i++)
		std::this_thread::sleep_for(std::chrono::milliseconds(100));
	std::printf("libunwind loaded: %s\n", libunwind_loaded() ? "yes" : "no");
	phase = 2; // second round, with libunwind in the process
	for (auto &t : ts)
		t.join();
	long want = (long)NTHR * THROWS * 2;
	std::printf("caught %s, destructors %s\n",
		    caught == want ? "all" : "MISSING",
		    built == destroyed && destroyed == want * (DEPTH + 1)
			    ? "all" : "MISSING");
	return 0;
}

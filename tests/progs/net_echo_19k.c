// net_echo_19k: 19,000 concurrent loopback connections to a
// thread-per-connection echo server under goshim: as many as one process
// may hold here (RLIMIT_NOFILE's hard limit is 20,000; run-progs.sh
// raises the soft limit to it). The client is a second process, also
// thread per connection; it spreads its connections over source addresses
// 127.0.0.2.. if the ephemeral port range is too small for one. 2 round
// trips each, every byte checksummed; the output is the 10k test's shape
// (net_echo_19k.expected), the server checks every byte against what the
// clients must have sent. Shim-only: natively the two processes would
// need 38,000 threads, more than the default pid_max (32,768).
// See net_echo_procs.h. The thread bound counts both processes: each has
// its sysmon and its Ms, and on a loaded machine a system call that the
// kernel leaves off the CPU past 20 us gets its P handed to another M
// (one more thread, as in Go): 5 threads quiet, 7 seen beside other jobs.
// goshim-test: args=19000 2
// goshim-test: shim-only=1
// goshim-test: shim-max-threads=GOMAXPROCS+6
// goshim-test: timeout=120
#include "net_echo_procs.h"

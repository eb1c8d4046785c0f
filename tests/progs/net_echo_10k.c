// net_echo_10k: 10,000 concurrent loopback connections to a
// thread-per-connection echo server, from a thread-per-connection client
// in a second process (both ends of 10,000 connections are more fds than
// RLIMIT_NOFILE allows one process here). 4 round trips of 1..8192 bytes
// each, every byte checksummed. Natively the server has 10,000 handler
// threads at once; under goshim a handful. See net_echo_procs.h.
// goshim-test: args=10000 4
// goshim-test: native-min-threads=10001
// goshim-test: shim-max-threads=GOMAXPROCS+4
// goshim-test: timeout=120
#include "net_echo_procs.h"

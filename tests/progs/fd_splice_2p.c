// fd_splice at GOMAXPROCS=2: the reader parked on the socket must stay
// watched by the netpoller while the M that was polling goes on to run
// the writer's sendfile in the kernel (a P handed off idle must go to an
// M that polls, as in Go).
// goshim-test: env=GOMAXPROCS=2
// goshim-test: shim-max-threads=GOMAXPROCS+4
// goshim-test: native-min-threads=21
// goshim-test: timeout=60
#include "fd_splice.c"

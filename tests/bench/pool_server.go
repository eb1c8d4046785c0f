// pool_server CONNS [WORK]: the Go counterpart of pool_server.c for `make
// bench`: it listens on 127.0.0.1 (an ephemeral port), prints "port N",
// accepts CONNS connections with one goroutine each, and each hands every
// 64-byte request it reads to a pool of four worker goroutines on a
// channel; a worker computes WORK rounds of the same hash (default 20000)
// and hands the request back, and the connection's goroutine echoes it.
// Once every connection has ended it prints "cpu_us_per_req N" and
// "cswitch_per_req N" and exits.
package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
)

type job struct {
	buf  []byte
	back chan struct{}
}

func compute(buf []byte, rounds int) {
	x := binary.LittleEndian.Uint64(buf[8:16]) | 1
	for i := 0; i < rounds; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	if x == 0 {
		buf[0] ^= 1
	}
}

func main() {
	conns, rounds := 0, 20000
	if len(os.Args) >= 2 {
		conns, _ = strconv.Atoi(os.Args[1])
	}
	if len(os.Args) >= 3 {
		rounds, _ = strconv.Atoi(os.Args[2])
	}
	if conns < 1 || rounds < 0 {
		fmt.Fprintln(os.Stderr, "usage: pool_server CONNS [WORK]")
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "pool_server:", err)
		os.Exit(1)
	}
	fmt.Printf("port %d\n", ln.Addr().(*net.TCPAddr).Port)

	jobs := make(chan job, 1024)
	for i := 0; i < 4; i++ {
		go func() {
			for j := range jobs {
				compute(j.buf, rounds)
				j.back <- struct{}{}
			}
		}()
	}
	var wg sync.WaitGroup
	var requests int64
	for i := 0; i < conns; i++ {
		c, err := ln.Accept()
		if err != nil {
			fmt.Fprintln(os.Stderr, "pool_server: accept:", err)
			os.Exit(1)
		}
		wg.Add(1)
		go func(c net.Conn) {
			defer wg.Done()
			defer c.Close()
			buf := make([]byte, 64)
			back := make(chan struct{})
			for {
				if _, err := io.ReadFull(c, buf); err != nil {
					return
				}
				jobs <- job{buf, back}
				<-back
				if _, err := c.Write(buf); err != nil {
					return
				}
				atomic.AddInt64(&requests, 1)
			}
		}(c)
	}
	wg.Wait()
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil && requests > 0 {
		us := float64(ru.Utime.Sec+ru.Stime.Sec)*1e6 + float64(ru.Utime.Usec+ru.Stime.Usec)
		fmt.Printf("cpu_us_per_req %.2f\n", us/float64(requests))
		fmt.Printf("cswitch_per_req %.3f\n", float64(ru.Nvcsw+ru.Nivcsw)/float64(requests))
	}
}

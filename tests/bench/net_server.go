// net_server CONNS: the Go counterpart of net_server.c for `make
// bench`, a goroutine-per-connection echo server: it listens on
// 127.0.0.1 (an ephemeral port), prints "port N", accepts CONNS
// connections with one goroutine each, echoes what each reads until EOF,
// and once every connection has ended prints "rss_peak_kib N" (VmHWM from
// /proc/self/status), "cpu_us_per_req N" and "cswitch_per_req N" (user +
// system CPU time and context switches per 64 bytes echoed) and exits.
package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

func vmhwmKiB() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if fields := strings.Fields(s.Text()); len(fields) >= 2 && fields[0] == "VmHWM:" {
			v, _ := strconv.ParseInt(fields[1], 10, 64)
			return v
		}
	}
	return -1
}

func main() {
	conns := 0
	if len(os.Args) == 2 {
		conns, _ = strconv.Atoi(os.Args[1])
	}
	if conns < 1 {
		fmt.Fprintln(os.Stderr, "usage: net_server CONNS")
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "net_server:", err)
		os.Exit(1)
	}
	fmt.Printf("port %d\n", ln.Addr().(*net.TCPAddr).Port)

	var wg sync.WaitGroup
	var echoed int64
	for i := 0; i < conns; i++ {
		c, err := ln.Accept()
		if err != nil {
			fmt.Fprintln(os.Stderr, "net_server: accept:", err)
			os.Exit(1)
		}
		wg.Add(1)
		go func(c net.Conn) {
			defer wg.Done()
			defer c.Close()
			buf := make([]byte, 4096)
			total := int64(0)
			defer func() { atomic.AddInt64(&echoed, total) }()
			for {
				n, err := c.Read(buf)
				if n <= 0 || err != nil {
					return
				}
				if _, err := c.Write(buf[:n]); err != nil {
					return
				}
				total += int64(n)
			}
		}(c)
	}
	wg.Wait()
	fmt.Printf("rss_peak_kib %d\n", vmhwmKiB())
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil && echoed >= 64 {
		us := float64(ru.Utime.Sec+ru.Stime.Sec)*1e6 + float64(ru.Utime.Usec+ru.Stime.Usec)
		fmt.Printf("cpu_us_per_req %.2f\n", us/float64(echoed/64))
		fmt.Printf("cswitch_per_req %.3f\n", float64(ru.Nvcsw+ru.Nivcsw)/float64(echoed/64))
	}
}

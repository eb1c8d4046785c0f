// mem_blocked [N=100000]: the Go counterpart of mem_blocked.c: VmRSS (from
// /proc/self/status) before starting N goroutines that each wait on one
// sync.Cond under one sync.Mutex, and again once all N are waiting; then
// releases them. Prints "rss_kib_per_blocked KIB", the two readings and
// "create_all_ms MS" (from the first go statement until all N wait).
package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

func vmrssKiB() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		fmt.Fprintln(os.Stderr, "mem_blocked:", err)
		os.Exit(1)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if fields := strings.Fields(s.Text()); len(fields) >= 2 && fields[0] == "VmRSS:" {
			v, _ := strconv.ParseInt(fields[1], 10, 64)
			return v
		}
	}
	return -1
}

func main() {
	n := 100000
	if len(os.Args) > 1 {
		v, err := strconv.Atoi(os.Args[1])
		if err != nil || v < 1 {
			fmt.Fprintln(os.Stderr, "usage: mem_blocked [N]")
			os.Exit(2)
		}
		n = v
	}
	var mu sync.Mutex
	cond := sync.NewCond(&mu)
	allIn := sync.NewCond(&mu)
	waiting, released := 0, 0
	release := false
	var wg sync.WaitGroup

	before := vmrssKiB()
	t0 := time.Now()
	wg.Add(n)
	for i := 0; i < n; i++ {
		go func() {
			mu.Lock()
			waiting++
			if waiting == n {
				allIn.Signal()
			}
			for !release {
				cond.Wait()
			}
			released++
			mu.Unlock()
			wg.Done()
		}()
	}
	mu.Lock()
	for waiting < n {
		allIn.Wait()
	}
	mu.Unlock()
	createAll := time.Since(t0)
	blocked := vmrssKiB()

	mu.Lock()
	release = true
	cond.Broadcast()
	mu.Unlock()
	wg.Wait()
	if released != n {
		fmt.Fprintf(os.Stderr, "mem_blocked: %d of %d released\n", released, n)
		os.Exit(1)
	}
	fmt.Printf("rss_kib_per_blocked %.2f\n", float64(blocked-before)/float64(n))
	fmt.Printf("rss_before_kib %d\n", before)
	fmt.Printf("rss_blocked_kib %d\n", blocked)
	fmt.Printf("create_all_ms %.1f\n", float64(createAll.Nanoseconds())/1e6)
}

// mem_blocked [N=100000]: the Go counterpart of mem_blocked.c: VmRSS (from
// /proc/self/status) before starting N goroutines that each wait on one
// sync.Cond under one sync.Mutex, and again once all N are waiting; then
// releases them. Prints "rss_kib_per_blocked KIB", the two readings and
// "create_all_ms MS" (from the first go statement until all N wait); with
// BENCH_MEMCG=DIR also the cgroup's total and kernel share, as
// mem_blocked.c does ("total_kib_per_blocked", "kernel_kib_per_blocked").
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

// readNumber: the first number in DIR/NAME, or -1.
func readNumber(dir, name string) int64 {
	b, err := os.ReadFile(dir + "/" + name)
	if err != nil {
		return -1
	}
	fields := strings.Fields(string(b))
	if len(fields) == 0 {
		return -1
	}
	v, err := strconv.ParseInt(fields[0], 10, 64)
	if err != nil {
		return -1
	}
	return v
}

// statSum: the sum of memory.stat's lines named in keys (v2), or -1.
func statSum(dir string, keys ...string) int64 {
	b, err := os.ReadFile(dir + "/memory.stat")
	if err != nil {
		return -1
	}
	var sum int64
	found := false
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		for _, k := range keys {
			if f[0] == k {
				v, _ := strconv.ParseInt(f[1], 10, 64)
				sum += v
				found = true
			}
		}
	}
	if !found {
		return -1
	}
	return sum
}

// memcgKiB: the cgroup's total and kernel share in KiB, read as
// mem_blocked.c reads them; ok false without BENCH_MEMCG or its files.
func memcgKiB() (total, kernel int64, ok bool) {
	dir := os.Getenv("BENCH_MEMCG")
	if dir == "" {
		return 0, 0, false
	}
	if total = readNumber(dir, "memory.current"); total >= 0 {
		if kernel = statSum(dir, "kernel"); kernel < 0 {
			kernel = statSum(dir, "kernel_stack", "pagetables", "sec_pagetables",
				"percpu", "sock", "slab", "vmalloc")
		}
	} else {
		total = readNumber(dir, "memory.usage_in_bytes")
		kernel = readNumber(dir, "memory.kmem.usage_in_bytes")
	}
	if total < 0 || kernel < 0 {
		return 0, 0, false
	}
	return total >> 10, kernel >> 10, true
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

	total0, kernel0, memcg := memcgKiB()
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
	total1, kernel1, memcg1 := memcgKiB()

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
	if memcg && memcg1 {
		fmt.Printf("total_kib_per_blocked %.2f\n", float64(total1-total0)/float64(n))
		fmt.Printf("kernel_kib_per_blocked %.2f\n", float64(kernel1-kernel0)/float64(n))
		fmt.Printf("total_before_kib %d\n", total0)
		fmt.Printf("total_blocked_kib %d\n", total1)
	}
}

// sysmon_stall.go MODE: the Go counterpart of sysmon_stall.c (same modes,
// same output). "raw" blocks in syscall.RawSyscall, which Go's sysmon
// cannot see either: the P stays with the blocked thread. "pair" prints
// syscall_ns for syscall.Syscall(SYS_GETPPID) (entersyscall + the call +
// exitsyscall) and rawsyscall_ns for RawSyscall (the call alone).
package main

import (
	"fmt"
	"os"
	"sort"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

const ticks = 1000

var stop int32
var sink uint64

func ticker(done chan bool) {
	late := make([]time.Duration, 0, ticks)
	start := time.Now()
	next := start
	for len(late) < ticks && next.Sub(start) < time.Second {
		next = next.Add(time.Millisecond)
		time.Sleep(time.Until(next))
		l := time.Since(next)
		late = append(late, l)
		if l > time.Millisecond {
			next = time.Now()
		}
	}
	n := len(late)
	sort.Slice(late, func(a, b int) bool { return late[a] < late[b] })
	fmt.Printf("stall_max_us %.0f\n", float64(late[n-1].Nanoseconds())/1e3)
	fmt.Printf("stall_p99_us %.0f\n", float64(late[n*99/100].Nanoseconds())/1e3)
	done <- true
}

func fsyncer(i int) {
	dir := os.Getenv("TMPDIR")
	if dir == "" {
		dir = "/tmp"
	}
	f, err := os.CreateTemp(dir, "sysmon_stall")
	if err != nil {
		panic(err)
	}
	os.Remove(f.Name())
	buf := make([]byte, 4096)
	for atomic.LoadInt32(&stop) == 0 {
		if _, err := f.WriteAt(buf, 0); err != nil {
			panic(err)
		}
		if err := f.Sync(); err != nil {
			panic(err)
		}
	}
	f.Close()
}

func spinner() {
	for atomic.LoadInt32(&stop) == 0 {
		sink++
	}
}

func main() {
	mode := "none"
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	if mode == "pair" {
		n := 200000
		t0 := time.Now()
		for i := 0; i < n; i++ {
			syscall.Syscall(syscall.SYS_GETPPID, 0, 0, 0)
		}
		fmt.Printf("syscall_ns %.0f\n", float64(time.Since(t0).Nanoseconds())/float64(n))
		t0 = time.Now()
		for i := 0; i < n; i++ {
			syscall.RawSyscall(syscall.SYS_GETPPID, 0, 0, 0)
		}
		fmt.Printf("rawsyscall_ns %.0f\n", float64(time.Since(t0).Nanoseconds())/float64(n))
		return
	}
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil {
		panic(err)
	}
	finished := make(chan bool, 4)
	n := 0
	switch mode {
	case "fsync":
		n = 4
		for i := 0; i < n; i++ {
			go func(i int) { fsyncer(i); finished <- true }(i)
		}
	case "spin":
		n = 4
		for i := 0; i < n; i++ {
			go func() { spinner(); finished <- true }()
		}
	case "raw":
		n = 2
		for i := 0; i < n; i++ {
			go func() {
				var c [1]byte
				syscall.RawSyscall(syscall.SYS_READ, uintptr(p[0]),
					uintptr(unsafe.Pointer(&c[0])), 1)
				finished <- true
			}()
		}
	case "none":
	default:
		fmt.Fprintln(os.Stderr, "usage: sysmon_stall fsync|spin|raw|none|pair")
		os.Exit(2)
	}
	done := make(chan bool)
	go ticker(done)
	<-done
	atomic.StoreInt32(&stop, 1)
	syscall.Write(p[1], []byte("xx"))
	for i := 0; i < n; i++ {
		<-finished
	}
}

// sync_sleep [N=10000] [SLEEPS=100]: the Go counterpart of sync_sleep.c: N
// goroutines start together (a closed channel) and each does
// time.Sleep(1ms) SLEEPS times; prints "sleep_wall_ms MS", the wall time
// from before the first go statement to after wg.Wait. Checks that no sleep
// was shorter than asked.
package main

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

func arg(i, def int) int {
	if len(os.Args) <= i {
		return def
	}
	v, err := strconv.Atoi(os.Args[i])
	if err != nil || v < 0 {
		fmt.Fprintln(os.Stderr, "usage: sync_sleep [N] [SLEEPS]")
		os.Exit(2)
	}
	return v
}

func main() {
	n := arg(1, 10000)
	sleeps := arg(2, 100)
	var wg sync.WaitGroup
	var shorts, done int64
	start := make(chan struct{})

	t0 := time.Now()
	wg.Add(n)
	for i := 0; i < n; i++ {
		go func() {
			<-start
			for k := 0; k < sleeps; k++ {
				s := time.Now()
				time.Sleep(time.Millisecond)
				if time.Since(s) < time.Millisecond {
					atomic.AddInt64(&shorts, 1)
				}
				atomic.AddInt64(&done, 1)
			}
			wg.Done()
		}()
	}
	close(start)
	wg.Wait()
	d := time.Since(t0)
	if done != int64(n)*int64(sleeps) || shorts != 0 {
		fmt.Fprintf(os.Stderr, "sync_sleep: %d sleeps done (want %d), %d too short\n",
			done, int64(n)*int64(sleeps), shorts)
		os.Exit(1)
	}
	fmt.Printf("sleep_wall_ms %.1f\n", float64(d.Nanoseconds())/1e6)
}

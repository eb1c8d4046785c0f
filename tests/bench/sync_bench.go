// sync_bench MODE [N]: the Go counterpart of sync_bench.c; prints
// "NAME VALUE" lines, each the best of 3 timed runs after a warm-up.
//
//	pingpong [N=100000]  two goroutines hand a turn back and forth:
//	                     "cond_pingpong NS" per round trip with sync.Mutex +
//	                     two sync.Cond, "chan_pingpong NS" with two
//	                     unbuffered channels
//	lock [N=20000000]    sync.Mutex Lock+Unlock of a free mutex:
//	                     "lock_uncontended NS" per pair
//	contend [N=32000000] 64 goroutines add 1 to one counter under one
//	                     sync.Mutex, N in all: "mutex_contended64 OPS" per s
//	                     over the span from the first one's start to the last
//	                     one's end (as in sync_bench.c)
package main

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

const reps = 3
const contenders = 64

func best(f func() time.Duration) time.Duration {
	b := time.Duration(1<<63 - 1)
	for r := 0; r < reps; r++ {
		if d := f(); d < b {
			b = d
		}
	}
	return b
}

func die(format string, a ...interface{}) {
	fmt.Fprintf(os.Stderr, "sync_bench: "+format+"\n", a...)
	os.Exit(1)
}

// ---- pingpong with sync.Cond
type ppCond struct {
	mu     sync.Mutex
	cond   [2]*sync.Cond
	turn   int
	stop   bool
	rounds int
}

func (p *ppCond) peer(done chan<- struct{}) {
	p.mu.Lock()
	for {
		for p.turn != 1 && !p.stop {
			p.cond[1].Wait()
		}
		if p.stop {
			break
		}
		p.rounds++
		p.turn = 0
		p.cond[0].Signal()
	}
	p.mu.Unlock()
	close(done)
}

func (p *ppCond) run(n int) {
	p.mu.Lock()
	for i := 0; i < n; i++ {
		p.turn = 1
		p.cond[1].Signal()
		for p.turn != 0 {
			p.cond[0].Wait()
		}
	}
	p.mu.Unlock()
}

func pingpongCond(n int) {
	p := &ppCond{}
	p.cond[0] = sync.NewCond(&p.mu)
	p.cond[1] = sync.NewCond(&p.mu)
	done := make(chan struct{})
	go p.peer(done)
	p.run(n/10 + 1)
	b := best(func() time.Duration {
		t0 := time.Now()
		p.run(n)
		return time.Since(t0)
	})
	p.mu.Lock()
	p.stop = true
	p.cond[1].Signal()
	p.mu.Unlock()
	<-done
	if p.rounds != n/10+1+reps*n {
		die("pingpong: %d rounds seen by the peer", p.rounds)
	}
	fmt.Printf("cond_pingpong %.1f\n", float64(b.Nanoseconds())/float64(n))
}

// ---- pingpong with unbuffered channels
func pingpongChan(n int) {
	ping := make(chan int)
	pong := make(chan int)
	go func() {
		for v := range ping {
			pong <- v + 1
		}
		close(pong)
	}()
	run := func(n int) {
		for i := 0; i < n; i++ {
			ping <- i
			if v := <-pong; v != i+1 {
				die("chan pingpong: got %d, want %d", v, i+1)
			}
		}
	}
	run(n/10 + 1)
	b := best(func() time.Duration {
		t0 := time.Now()
		run(n)
		return time.Since(t0)
	})
	close(ping)
	<-pong
	fmt.Printf("chan_pingpong %.1f\n", float64(b.Nanoseconds())/float64(n))
}

// ---- lock
var lkMu sync.Mutex
var lkCount int

func lockBench(n int) {
	loop := func(n int) time.Duration {
		t0 := time.Now()
		for i := 0; i < n; i++ {
			lkMu.Lock()
			lkCount++
			lkMu.Unlock()
		}
		return time.Since(t0)
	}
	loop(n/10 + 1)
	b := best(func() time.Duration { return loop(n) })
	if lkCount != n/10+1+reps*n {
		die("lock: count %d", lkCount)
	}
	fmt.Printf("lock_uncontended %.2f\n", float64(b.Nanoseconds())/float64(n))
}

// ---- contend
func contendOnce(per int) time.Duration {
	var mu sync.Mutex
	var wg sync.WaitGroup
	counter := 0
	start := make(chan struct{})
	var begin, end [contenders]time.Time
	wg.Add(contenders)
	for i := 0; i < contenders; i++ {
		go func(i int) {
			<-start
			begin[i] = time.Now()
			for j := 0; j < per; j++ {
				mu.Lock()
				counter++
				mu.Unlock()
			}
			end[i] = time.Now()
			wg.Done()
		}(i)
	}
	close(start)
	wg.Wait()
	first, last := begin[0], end[0]
	for i := 1; i < contenders; i++ {
		if begin[i].Before(first) {
			first = begin[i]
		}
		if end[i].After(last) {
			last = end[i]
		}
	}
	d := last.Sub(first)
	if counter != per*contenders {
		die("contend: counter %d, want %d", counter, per*contenders)
	}
	return d
}

func contend(n int) {
	contendOnce(n/contenders/10 + 1)
	per := n / contenders
	b := best(func() time.Duration { return contendOnce(per) })
	fmt.Printf("mutex_contended64 %.0f\n", float64(per*contenders)/b.Seconds())
}

func main() {
	mode := ""
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	n := 0
	if len(os.Args) > 2 {
		v, err := strconv.Atoi(os.Args[2])
		if err != nil {
			die("bad N: %s", os.Args[2])
		}
		n = v
	}
	switch mode {
	case "pingpong":
		if n <= 0 {
			n = 100000
		}
		pingpongCond(n)
		pingpongChan(n)
	case "lock":
		if n <= 0 {
			n = 20000000
		}
		lockBench(n)
	case "contend":
		if n < contenders {
			n = 32000000
		}
		contend(n)
	default:
		fmt.Fprintln(os.Stderr, "usage: sync_bench pingpong|lock|contend [N]")
		os.Exit(2)
	}
}

// pool_batch [BLOCKS=4000] [WORKERS=8] [WORK=300000]: the Go counterpart of
// pool_batch.c: a reader goroutine sends BLOCKS block numbers on a channel
// buffered 2 x WORKERS, WORKERS goroutines compute WORK rounds of the same
// hash for each, and a writer takes the results in block order (waiting on
// a sync.Cond for the next). Prints "blocks_per_s N" and "wall_ms N".
package main

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

func compute(block, rounds int) uint64 {
	x := uint64(block)*0x9E3779B97F4A7C15 | 1
	for i := 0; i < rounds; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

func arg(i, def int) int {
	if len(os.Args) > i {
		v, err := strconv.Atoi(os.Args[i])
		if err != nil || v < 1 {
			fmt.Fprintln(os.Stderr, "usage: pool_batch [BLOCKS] [WORKERS] [WORK]")
			os.Exit(2)
		}
		return v
	}
	return def
}

func main() {
	blocks, workers, rounds := arg(1, 4000), arg(2, 8), arg(3, 300000)
	result := make([]uint64, blocks)
	ready := make([]bool, blocks)
	var mu sync.Mutex
	resultIn := sync.NewCond(&mu)
	queue := make(chan int, 2*workers)

	t0 := time.Now()
	go func() {
		for b := 0; b < blocks; b++ {
			queue <- b
		}
		close(queue)
	}()
	var wg sync.WaitGroup
	wg.Add(workers)
	for i := 0; i < workers; i++ {
		go func() {
			defer wg.Done()
			for b := range queue {
				r := compute(b, rounds)
				mu.Lock()
				result[b], ready[b] = r, true
				resultIn.Broadcast()
				mu.Unlock()
			}
		}()
	}
	var sum uint64
	for b := 0; b < blocks; b++ {
		mu.Lock()
		for !ready[b] {
			resultIn.Wait()
		}
		sum = sum*31 + result[b]
		mu.Unlock()
	}
	wg.Wait()
	wall := time.Since(t0)

	var want uint64
	for b := 0; b < blocks; b++ {
		r := result[b]
		if b%97 == 0 {
			r = compute(b, rounds)
		}
		want = want*31 + r
	}
	if want != sum {
		fmt.Fprintln(os.Stderr, "pool_batch: checksum mismatch")
		os.Exit(1)
	}
	fmt.Printf("blocks_per_s %.0f\n", float64(blocks)/wall.Seconds())
	fmt.Printf("wall_ms %.1f\n", float64(wall.Nanoseconds())/1e6)
}

// create_join [N]: the Go counterpart of create_join.c: N goroutine starts
// with sync.WaitGroup waits, one at a time ("serial") and 100 at a time
// ("batch100"); prints "SHAPE NS" (nanoseconds per goroutine).
package main

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

const batchSize = 100

func serial(n int) uint64 {
	var wg sync.WaitGroup
	var res uint64
	var sum uint64
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			res = uint64(i)*3 + 1
			wg.Done()
		}(i)
		wg.Wait()
		sum += res
	}
	return sum
}

func batch(n int) uint64 {
	var wg sync.WaitGroup
	var res [batchSize]uint64
	var sum uint64
	for base := 0; base < n; base += batchSize {
		wg.Add(batchSize)
		for j := 0; j < batchSize; j++ {
			go func(j int) {
				res[j] = uint64(base+j)*3 + 1
				wg.Done()
			}(j)
		}
		wg.Wait()
		for j := 0; j < batchSize; j++ {
			sum += res[j]
		}
	}
	return sum
}

func main() {
	n := 100000
	if len(os.Args) > 1 {
		v, err := strconv.Atoi(os.Args[1])
		if err != nil {
			fmt.Fprintln(os.Stderr, "create_join: bad N:", os.Args[1])
			os.Exit(2)
		}
		n = v
	}
	n = (n + batchSize - 1) / batchSize * batchSize
	want := 3*uint64(n)*uint64(n-1)/2 + uint64(n)

	serial(1000)
	batch(1000)

	t0 := time.Now()
	s := serial(n)
	t1 := time.Now()
	b := batch(n)
	t2 := time.Now()
	if s != want || b != want {
		fmt.Fprintln(os.Stderr, "create_join: wrong sums")
		os.Exit(1)
	}
	fmt.Printf("serial %.1f\n", float64(t1.Sub(t0).Nanoseconds())/float64(n))
	fmt.Printf("batch100 %.1f\n", float64(t2.Sub(t1).Nanoseconds())/float64(n))
}

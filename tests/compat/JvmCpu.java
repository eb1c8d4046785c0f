/* JvmCpu: the JVM CPU job of the compatibility suite. Many Java threads
 * computing, allocating and synchronizing, each part with a result that
 * does not depend on how its threads were scheduled, printed so that the
 * native and the goshim run can be compared line by line:
 *
 *   sort     a ForkJoinPool of 64 workers merge-sorts 2M pseudo-random
 *            longs with RecursiveTask splits; checked sorted here, and a
 *            weighted checksum printed.
 *   stream   a parallel stream in the same pool turns 2M numbers into
 *            strings (garbage for the collector) and counts them by
 *            length and by last digit into concurrent maps.
 *   threads  256 platform threads, in 8 rounds behind a CyclicBarrier,
 *            each builds and drops lists of boxed numbers and adds its
 *            sums to a few shared counters under contended monitors
 *            (synchronized, wait/notifyAll).
 *
 * The heap is kept small by the caller (-Xmx), so the collector runs many
 * times while all of this goes on: every collection stops every thread at
 * a safepoint. The number of collections goes to stderr (it is timing).
 * Exits 1 if a check fails. */
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RecursiveAction;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.IntStream;

public class JvmCpu {
	static final int N = 2_000_000;

	static class Sort extends RecursiveAction {
		private static final long serialVersionUID = 1;
		final long[] a, tmp;
		final int lo, hi;

		Sort(long[] a, long[] tmp, int lo, int hi) {
			this.a = a;
			this.tmp = tmp;
			this.lo = lo;
			this.hi = hi;
		}

		@Override
		protected void compute() {
			if (hi - lo <= 4096) {
				java.util.Arrays.sort(a, lo, hi);
				return;
			}
			int mid = (lo + hi) >>> 1;
			invokeAll(new Sort(a, tmp, lo, mid), new Sort(a, tmp, mid, hi));
			System.arraycopy(a, lo, tmp, lo, hi - lo);
			for (int i = lo, l = lo, r = mid; i < hi; i++)
				a[i] = r >= hi || (l < mid && tmp[l] <= tmp[r]) ? tmp[l++] : tmp[r++];
		}
	}

	static boolean ok = true;

	static void check(boolean c, String what) {
		if (!c) {
			System.out.println("FAIL " + what);
			ok = false;
		}
	}

	static void sort(ForkJoinPool pool) {
		long[] a = new long[N];
		long x = 88172645463325252L;
		for (int i = 0; i < N; i++) {
			x ^= x << 13;
			x ^= x >>> 7;
			x ^= x << 17;
			a[i] = x % 1_000_000_007L;
		}
		pool.invoke(new Sort(a, new long[N], 0, N));
		long sum = 0;
		for (int i = 0; i < N; i++) {
			check(i == 0 || a[i - 1] <= a[i], "sort: out of order at " + i);
			if (!ok)
				return;
			sum = sum * 31 + a[i] * (i + 1);
		}
		System.out.printf("sort: %d longs, min %d, max %d, checksum %016x%n", N, a[0], a[N - 1], sum);
	}

	static void stream(ForkJoinPool pool) throws Exception {
		Map<Integer, LongAdder> byLen = new ConcurrentHashMap<>(), byDigit = new ConcurrentHashMap<>();
		pool.submit(() -> IntStream.range(0, N).parallel()
				.mapToObj(i -> Long.toString((long) i * 2654435761L % 1_000_003L))
				.forEach(s -> {
					byLen.computeIfAbsent(s.length(), k -> new LongAdder()).increment();
					byDigit.computeIfAbsent(s.charAt(s.length() - 1) - '0', k -> new LongAdder()).increment();
				})).get();
		long total = byLen.values().stream().mapToLong(LongAdder::sum).sum();
		check(total == N, "stream: counted " + total + " of " + N);
		System.out.println("stream: by length " + sorted(byLen) + ", by last digit " + sorted(byDigit));
	}

	static String sorted(Map<Integer, LongAdder> m) {
		Map<Integer, Long> t = new TreeMap<>();
		m.forEach((k, v) -> t.put(k, v.sum()));
		return t.toString();
	}

	static final Object lock = new Object();
	static long shared, turns;

	static void threads() throws Exception {
		final int nthreads = 256, rounds = 8;
		CyclicBarrier barrier = new CyclicBarrier(nthreads);
		Thread[] ts = new Thread[nthreads];
		long[] mine = new long[nthreads];
		for (int t = 0; t < nthreads; t++) {
			final int id = t;
			ts[t] = new Thread(() -> {
				try {
					for (int r = 0; r < rounds; r++) {
						ArrayList<Long> list = new ArrayList<>();
						for (int i = 0; i < 20_000; i++)
							list.add((long) (id * 31 + r) * i);
						long s = 0;
						for (Long v : list)
							s += v;
						mine[id] += s;
						synchronized (lock) {
							shared += s;
							turns++;
							lock.notifyAll();
						}
						barrier.await();
					}
				} catch (Exception e) {
					throw new RuntimeException(e);
				}
			}, "worker-" + t);
			ts[t].start();
		}
		// A waiter woken by every thread's every round.
		synchronized (lock) {
			while (turns < (long) nthreads * rounds)
				lock.wait();
		}
		long sum = 0;
		for (int t = 0; t < nthreads; t++) {
			ts[t].join();
			sum += mine[t];
		}
		check(sum == shared, "threads: shared counter " + shared + ", threads' own sums " + sum);
		System.out.println("threads: " + nthreads + " threads x " + rounds + " rounds, " + turns + " turns, sum " + shared);
	}

	public static void main(String[] args) throws Exception {
		ForkJoinPool pool = new ForkJoinPool(64);
		sort(pool);
		stream(pool);
		pool.shutdown();
		threads();
		long gcs = 0;
		for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans())
			gcs += gc.getCollectionCount();
		System.err.println("JvmCpu: " + gcs + " collections");
		System.exit(ok ? 0 : 1);
	}
}

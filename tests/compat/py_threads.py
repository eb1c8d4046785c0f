"""py_threads: CPython's threads, for the compatibility suite.

CPython hands its global interpreter lock around with a mutex and a
condition variable waited on with a 5 ms timeout (the switch interval), so
every thread here crosses timed condvar waits thousands of times, besides
the locks, queues, conditions and events of the threading module. Then
threads start child processes at the same time, as build tools do: fork
(or vfork) and exec from one thread while the others run, pipes both
ways. Every result is exact and printed; natively and under goshim the
output must be the same.
"""
import concurrent.futures
import hashlib
import queue
import subprocess
import threading


def hash_work(i):
    h = hashlib.sha256()
    for k in range(2000):
        h.update(b"%d-%d" % (i, k))
    return h.hexdigest()


def pool():
    with concurrent.futures.ThreadPoolExecutor(max_workers=32) as ex:
        results = list(ex.map(hash_work, range(200)))
    return hashlib.sha256("".join(results).encode()).hexdigest()[:16]


def pipeline(producers=8, consumers=8, per_producer=5000):
    q = queue.Queue(maxsize=16)
    total = [0]
    lock = threading.Lock()

    def produce(p):
        for i in range(per_producer):
            q.put(p * per_producer + i)

    def consume():
        local = 0
        while True:
            x = q.get()
            if x is None:
                break
            local += x
        with lock:
            total[0] += local

    ps = [threading.Thread(target=produce, args=(p,)) for p in range(producers)]
    cs = [threading.Thread(target=consume) for _ in range(consumers)]
    for t in ps + cs:
        t.start()
    for t in ps:
        t.join()
    for _ in cs:
        q.put(None)
    for t in cs:
        t.join()
    return total[0]


def rendezvous(n=50):
    """n threads wait on a condition; all must see the one notify_all."""
    cond = threading.Condition()
    waiting = [0]
    go = [False]
    seen = []

    def waiter(i):
        with cond:
            waiting[0] += 1
            cond.notify_all()
            cond.wait_for(lambda: go[0], timeout=60)
            seen.append(i)

    ts = [threading.Thread(target=waiter, args=(i,)) for i in range(n)]
    for t in ts:
        t.start()
    with cond:
        cond.wait_for(lambda: waiting[0] == n, timeout=60)
        go[0] = True
        cond.notify_all()
    for t in ts:
        t.join()
    return sorted(seen) == list(range(n))


def gil_counter(threads=8, rounds=200000):
    """Pure-Python loops: the GIL changes hands on its 5 ms timer."""
    counts = [0] * threads

    def spin(i):
        c = 0
        for _ in range(rounds):
            c += 1
        counts[i] = c

    ts = [threading.Thread(target=spin, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return sum(counts)


def children(jobs=64, workers=16):
    """Each job pipes data through sha256sum(1) and checks its answer."""
    def job(i):
        data = b"%d " % i * (1000 + i * 37)
        out = subprocess.run(["sha256sum"], input=data, capture_output=True,
                             check=True).stdout.split()[0].decode()
        return out == hashlib.sha256(data).hexdigest()

    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as ex:
        return sum(ex.map(job, range(jobs)))


print("pool:", pool())
print("pipeline:", pipeline())
print("rendezvous:", rendezvous())
print("gil:", gil_counter())
print("children: %d of 64 right" % children())

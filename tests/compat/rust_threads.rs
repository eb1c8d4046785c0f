// rust_threads: Rust's std threads, whose locks wait on raw futex system
// calls (std's Mutex, Condvar, RwLock, thread::park and mpsc channels make
// syscall(SYS_futex, ...) through the C library, not pthread calls).
// 64 threads each add to one Mutex counter, meet at a Condvar barrier,
// read and write one RwLock, send over one channel, and pass a token
// around a ring with park/unpark. Prints what each part computed; the
// output must be the same natively and under goshim. Built with Debian's
// rustc (1.63: only what std had then).
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, RwLock};
use std::thread;

const THREADS: usize = 64;
const ADDS: u64 = 20_000;
const LAPS: usize = 50;

fn main() {
    let counter = Arc::new(Mutex::new(0u64));
    let barrier = Arc::new((Mutex::new(0usize), Condvar::new()));
    let table = Arc::new(RwLock::new(vec![0u64; THREADS]));
    let (tx, rx) = mpsc::channel::<u64>();

    let mut handles = Vec::new();
    for i in 0..THREADS {
        let counter = Arc::clone(&counter);
        let barrier = Arc::clone(&barrier);
        let table = Arc::clone(&table);
        let tx = tx.clone();
        handles.push(thread::spawn(move || {
            for _ in 0..ADDS {
                *counter.lock().unwrap() += 1;
            }
            // Nobody goes on until all have added.
            let (lock, cv) = &*barrier;
            let mut n = lock.lock().unwrap();
            *n += 1;
            if *n == THREADS {
                cv.notify_all();
            }
            while *n < THREADS {
                n = cv.wait(n).unwrap();
            }
            drop(n);
            let seen = *counter.lock().unwrap();
            table.write().unwrap()[i] = seen + i as u64;
            let sum: u64 = table.read().unwrap().iter().sum();
            tx.send(sum.min(1) + i as u64).unwrap();
            seen
        }));
    }
    drop(tx);
    let received: u64 = rx.iter().sum();
    let mut all_saw_total = true;
    for h in handles {
        all_saw_total &= h.join().unwrap() == THREADS as u64 * ADDS;
    }
    let table_sum: u64 = table.read().unwrap().iter().sum();
    println!("mutex counter: {}", *counter.lock().unwrap());
    println!("every thread saw the total after the condvar barrier: {}", all_saw_total);
    println!("rwlock table: {}", table_sum);
    println!("channel: {}", received);

    // A token goes round a ring of threads LAPS times: each waits for its
    // turn with park() and hands the token on with unpark().
    let turn = Arc::new(AtomicUsize::new(0));
    let ring: Arc<Mutex<Vec<thread::Thread>>> = Arc::new(Mutex::new(Vec::new()));
    let ready = Arc::new((Mutex::new(false), Condvar::new()));
    let mut members = Vec::new();
    for i in 0..THREADS {
        let turn = Arc::clone(&turn);
        let ring = Arc::clone(&ring);
        let ready = Arc::clone(&ready);
        members.push(thread::spawn(move || {
            let (lock, cv) = &*ready;
            let mut r = lock.lock().unwrap();
            while !*r {
                r = cv.wait(r).unwrap();
            }
            drop(r);
            let mut passes = 0usize;
            for _ in 0..LAPS {
                while turn.load(Ordering::Acquire) % THREADS != i {
                    thread::park();
                }
                passes += 1;
                turn.fetch_add(1, Ordering::AcqRel);
                let next = ring.lock().unwrap()[(i + 1) % THREADS].clone();
                next.unpark();
            }
            passes
        }));
    }
    *ring.lock().unwrap() = members.iter().map(|h| h.thread().clone()).collect();
    {
        let (lock, cv) = &*ready;
        *lock.lock().unwrap() = true;
        cv.notify_all();
    }
    let passes: usize = members.into_iter().map(|h| h.join().unwrap()).sum();
    println!("park/unpark ring: {} passes, token at {}", passes, turn.load(Ordering::Acquire));
}

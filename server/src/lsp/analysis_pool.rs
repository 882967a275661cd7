//! The threads the server analyses on: one per core, for the server's whole
//! life, instead of tokio's blocking pool. An analysis is CPU-bound, so more
//! at once would not finish sooner; and the allocator keeps a heap per
//! thread, which holds pages for as long as values allocated there live:
//! analyses spread over tokio's changing blocking threads (which also read
//! and write stdio) left 70–112 MiB with the 15 real bundles open, where
//! two fixed threads hold 45 MiB (bench/lsp.py).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};

type Job = Box<dyn FnOnce() + Send>;

pub(crate) struct AnalysisPool {
    jobs: Sender<Job>,
    threads: usize,
    /// One permit per thread, taken before a job is queued, so a caller can
    /// wait for a thread and still drop a job a newer change made useless.
    slots: Arc<tokio::sync::Semaphore>,
}

/// Why a job gave no result: no thread could be started, or it panicked.
#[derive(Debug)]
pub(crate) struct Failed;

impl AnalysisPool {
    /// A pool of one thread per core (at least one).
    pub(crate) fn per_core() -> AnalysisPool {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let (jobs, queue) = channel::<Job>();
        let queue = Arc::new(Mutex::new(queue));
        let mut started = 0;
        for index in 0..threads {
            let queue = queue.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("mzk-analysis-{index}"))
                .stack_size(mzk_analyzer::base::limits::THREAD_STACK_BYTES)
                .spawn(move || work(&queue));
            started += usize::from(spawned.is_ok());
        }
        AnalysisPool {
            jobs,
            threads: started,
            slots: Arc::new(tokio::sync::Semaphore::new(started)),
        }
    }

    /// Waits until a thread is free; `None` when the pool has no thread.
    pub(crate) async fn slot(&self) -> Option<tokio::sync::OwnedSemaphorePermit> {
        if self.threads == 0 {
            return None;
        }
        self.slots.clone().acquire_owned().await.ok()
    }

    /// Runs `job` on a pool thread holding `slot`, which is given back when
    /// the job ends.
    pub(crate) async fn run<R: Send + 'static>(
        &self,
        slot: tokio::sync::OwnedSemaphorePermit,
        job: impl FnOnce() -> R + Send + 'static,
    ) -> Result<R, Failed> {
        let (answer, answered) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move || {
            // A panic is the job's answer, not the thread's end.
            let result = catch_unwind(AssertUnwindSafe(job)).ok();
            // Free before the answer: whoever reads it may queue at once.
            drop(slot);
            let _ = answer.send(result);
        });
        self.jobs.send(job).map_err(|_| Failed)?;
        answered.await.ok().flatten().ok_or(Failed)
    }
}

fn work(queue: &Mutex<Receiver<Job>>) {
    loop {
        // The lock is held only while waiting for the next job.
        let next = match queue.lock() {
            Ok(queue) => queue.recv(),
            Err(_) => return,
        };
        match next {
            Ok(job) => job(),
            // The pool is gone: the server is ending.
            Err(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn jobs_answer_and_a_panic_leaves_the_pool_working() {
        let pool = AnalysisPool::per_core();
        let slot = pool.slot().await.unwrap();
        assert_eq!(pool.run(slot, || 6 * 7).await.unwrap(), 42);
        let slot = pool.slot().await.unwrap();
        let panicked = pool.run(slot, || -> u32 { panic!("a bug in an analysis") });
        assert!(panicked.await.is_err());
        // Every thread still answers, and every permit came back.
        for _ in 0..pool.threads * 3 {
            let slot = pool.slot().await.unwrap();
            let name = pool.run(slot, || std::thread::current().name().map(String::from));
            assert!(name.await.unwrap().unwrap().starts_with("mzk-analysis-"));
        }
        assert_eq!(pool.slots.available_permits(), pool.threads);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn no_more_jobs_run_at_once_than_there_are_threads() {
        let pool = Arc::new(AnalysisPool::per_core());
        let (running, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let jobs: Vec<_> = (0..pool.threads * 4)
            .map(|_| {
                let (pool, running, most) = (pool.clone(), running.clone(), most.clone());
                tokio::spawn(async move {
                    let slot = pool.slot().await.unwrap();
                    pool.run(slot, move || {
                        let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                        std::thread::sleep(std::time::Duration::from_millis(20));
                        running.fetch_sub(1, Ordering::SeqCst);
                    })
                    .await
                    .unwrap();
                })
            })
            .collect();
        for job in jobs {
            job.await.unwrap();
        }
        let most = most.load(Ordering::SeqCst);
        assert!((1..=pool.threads).contains(&most), "{most} at once");
    }
}

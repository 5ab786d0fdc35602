//! Where an [`ObjectStorage`](crate::ObjectStorage)'s requests run: on the
//! caller's Tokio runtime when it was given one
//! ([`ObjectStorage::on_runtime`](crate::ObjectStorage::on_runtime)), else on
//! a small runtime of its own, started on its first request (a storage
//! that only ever runs on the caller's never starts one).

use std::future::Future;
use std::sync::OnceLock;
use tessera_storage::{StorageError, StorageErrorKind, StorageResult};
use tokio::runtime::{Handle, Runtime, RuntimeFlavor};
use tokio::task::JoinHandle;

/// The runtime a storage's requests are spawned on.
pub(crate) struct Executor {
    /// The caller's runtime, where one was given.
    caller: Option<Handle>,
    /// The storage's own, made on first need; taken on drop.
    own: OnceLock<Result<Runtime, String>>,
}

impl Executor {
    /// Requests on a runtime of the storage's own.
    pub(crate) fn own() -> Executor {
        Executor {
            caller: None,
            own: OnceLock::new(),
        }
    }

    /// Requests on the runtime of `handle`.
    pub(crate) fn on(handle: Handle) -> Executor {
        Executor {
            caller: Some(handle),
            own: OnceLock::new(),
        }
    }

    /// Whether the storage has started a runtime of its own.
    pub(crate) fn own_started(&self) -> bool {
        self.own.get().is_some_and(|r| r.is_ok())
    }

    /// The runtime to spawn on from this thread: the caller's, unless the
    /// caller's is a current-thread runtime and this thread is in its
    /// context: its own thread, where a wait would stop the very runtime
    /// that must answer, or one of its blocking threads, which Tokio does
    /// not tell apart from it; the request then goes to the storage's own
    /// runtime.
    fn handle(&self) -> StorageResult<Handle> {
        if let Some(caller) = &self.caller {
            let driving = Handle::try_current().is_ok_and(|current| {
                current.id() == caller.id()
                    && current.runtime_flavor() == RuntimeFlavor::CurrentThread
            });
            if !driving {
                return Ok(caller.clone());
            }
        }
        let own = self.own.get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("tessera-object-store")
                .enable_all()
                .build()
                .map_err(|e| e.to_string())
        });
        match own {
            Ok(rt) => Ok(rt.handle().clone()),
            Err(e) => Err(StorageError::new(
                StorageErrorKind::Other,
                "",
                format!("starting the object store's runtime: {e}"),
            )),
        }
    }

    /// Starts `fut` where this storage's requests run.
    pub(crate) fn spawn<T: Send + 'static>(
        &self,
        fut: impl Future<Output = T> + Send + 'static,
    ) -> StorageResult<JoinHandle<T>> {
        Ok(self.handle()?.spawn(fut))
    }

    /// Starts `fut` for a caller that awaits it (never blocks a thread on
    /// it): on the caller's runtime whatever thread this is, else the
    /// storage's own.
    pub(crate) fn spawn_awaited<T: Send + 'static>(
        &self,
        fut: impl Future<Output = T> + Send + 'static,
    ) -> StorageResult<JoinHandle<T>> {
        match &self.caller {
            Some(caller) => Ok(caller.spawn(fut)),
            None => self.spawn(fut),
        }
    }
}

impl Drop for Executor {
    fn drop(&mut self) {
        // A runtime dropped inside another runtime's task would panic, so
        // it is shut down in the background instead.
        if let Some(Ok(rt)) = self.own.take() {
            rt.shutdown_background();
        }
    }
}

/// Waits for `task` on this thread. In a task of a multi-thread runtime
/// the worker's other tasks are handed to other threads first
/// ([`tokio::task::block_in_place`]), so that a synchronous read called
/// from async code blocks no task but its own.
pub(crate) fn wait_for<T>(task: JoinHandle<T>) -> Result<T, tokio::task::JoinError> {
    let on_worker = tokio::task::try_id().is_some()
        && Handle::try_current()
            .is_ok_and(|current| current.runtime_flavor() == RuntimeFlavor::MultiThread);
    match on_worker {
        true => tokio::task::block_in_place(|| futures::executor::block_on(task)),
        false => futures::executor::block_on(task),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caller_runtime_runs_the_requests_and_none_of_its_own_starts() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let executor = Executor::on(rt.handle().clone());
        // From a thread outside the runtime, as a reader's threads are.
        let task = executor
            .spawn(async { tokio::runtime::Handle::current().id() })
            .unwrap();
        assert_eq!(wait_for(task).unwrap(), rt.handle().id());
        assert!(!executor.own_started());
        // From one of the runtime's own workers.
        let inner = rt.block_on(async {
            let task = executor.spawn(async { 7 }).unwrap();
            tokio::spawn(async move { wait_for(task).unwrap() })
                .await
                .unwrap()
        });
        assert_eq!(inner, 7);
        assert!(!executor.own_started());
    }

    #[test]
    fn the_thread_driving_a_current_thread_runtime_is_served_by_the_storages_own() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let executor = Executor::on(rt.handle().clone());
        let got = rt.block_on(async {
            // A synchronous wait here, on the runtime's only thread.
            let task = executor.spawn(async { 5 }).unwrap();
            wait_for(task).unwrap()
        });
        assert_eq!(got, 5);
        assert!(executor.own_started());
    }

    #[test]
    fn without_a_caller_runtime_the_own_starts_on_first_request() {
        let executor = Executor::own();
        assert!(!executor.own_started());
        let task = executor.spawn(async { 3 }).unwrap();
        assert_eq!(wait_for(task).unwrap(), 3);
        assert!(executor.own_started());
    }
}

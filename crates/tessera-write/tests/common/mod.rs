//! What the asynchronous writer's and maintenance's tests share: a
//! thread's own executor, local files answered as an asynchronous storage,
//! and folder copies.

use std::future::Future;
use std::path::Path;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use tessera_storage::{AnswersFuture, AsyncStorage, LocalFs, Need};

/// Runs `f` to its end on this thread, asleep while it waits.
pub fn block_on<F: Future>(f: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut f = std::pin::pin!(f);
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::park();
    }
}

/// Local files answered as an asynchronous storage.
pub struct Local;

impl AsyncStorage for Local {
    fn answer(&self, needs: Vec<Need>) -> AnswersFuture {
        Box::pin(std::future::ready(tessera_storage::answer(&LocalFs, needs)))
    }
}

/// A copy of the folder `from` at `to`.
pub fn copy_dir(from: &Path, to: &Path) {
    let _ = std::fs::remove_dir_all(to);
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        match e.path().is_dir() {
            true => copy_dir(&e.path(), &to.join(e.file_name())),
            false => drop(std::fs::copy(e.path(), to.join(e.file_name())).unwrap()),
        }
    }
}

/// A column of one fixed-sized value per cell, the dimension if named `x`.
pub fn fixed(name: &str, datatype: tessera_tile::Datatype, data: Vec<u8>) -> tessera_cells::Column {
    match name {
        "x" => tessera_cells::Column::fixed_dimension(name, datatype, data),
        _ => tessera_cells::Column::fixed(name, datatype, data),
    }
}

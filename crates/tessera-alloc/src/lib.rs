//! A global allocator for programs that build large result buffers: the
//! system allocator, plus a request to Linux to back every large
//! allocation with transparent huge pages.
//!
//! Why: a read fills tens or hundreds of MiB of fresh memory (tiles,
//! coordinates, result columns). With 4 KiB pages the kernel takes one page
//! fault per 4 KiB on first touch, and on the benchmark arrays those faults
//! cost more time than decoding (docs/PERFORMANCE.md has the figures). Most
//! distributions set transparent huge pages to `madvise`, so they apply only
//! where a program asks; this allocator asks, for allocations of
//! [`LARGE`] bytes or more. Elsewhere (other systems, `never`) it is the
//! system allocator unchanged. A program that calls [`set_from_environment`]
//! as it starts (tessera's CLI and Python module do) turns the request off
//! under `TESSERA_HUGEPAGES=0`, to measure what it buys.
//!
//! The allocator never reads the environment itself: it would from
//! whichever thread made the first large allocation, and a `getenv` there
//! races a `setenv` on another thread (Python code setting `os.environ`, a
//! C library), which glibc does not guard and which can crash the process.
//!
//! ```
//! #[global_allocator]
//! static ALLOC: tessera_alloc::HugePages = tessera_alloc::HugePages;
//!
//! tessera_alloc::set_from_environment();
//! let v = vec![1u8; 8 << 20];
//! assert_eq!(v.iter().map(|&b| b as u64).sum::<u64>(), 8 << 20);
//! ```

use std::alloc::{GlobalAlloc, Layout, System};

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod heap;
#[cfg(target_os = "linux")]
mod madvise;

/// Allocations from this size up are advised to use huge pages: two huge
/// pages' worth, so at least one aligned huge page lies inside. (Measured:
/// 8 MiB missed the 4 MiB tiles of the benchmark arrays; 2 MiB bought no more.)
pub const LARGE: usize = 4 << 20;

/// The system allocator, advising huge pages for large allocations.
#[derive(Debug, Clone, Copy, Default)]
pub struct HugePages;

#[cfg(target_os = "linux")]
mod advise {
    use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

    const HUGE: usize = 2 << 20;
    /// 0 or 1: advise (0 until set), 2: do not.
    static STATE: AtomicU8 = AtomicU8::new(0);
    /// Calls of `without_huge_pages` running: no advice while any runs.
    static PAUSED: AtomicUsize = AtomicUsize::new(0);

    /// Pauses the advice until `resume`.
    pub fn pause() {
        PAUSED.fetch_add(1, Ordering::Relaxed);
    }

    pub fn resume() {
        PAUSED.fetch_sub(1, Ordering::Relaxed);
    }

    pub(crate) fn enabled() -> bool {
        PAUSED.load(Ordering::Relaxed) == 0 && STATE.load(Ordering::Relaxed) != 2
    }

    /// Turns the advice on or off from now on.
    pub fn set(on: bool) {
        STATE.store(if on { 1 } else { 2 }, Ordering::Relaxed);
    }

    /// Advises huge pages for the whole 2 MiB pages inside `[p, p + len)`.
    pub fn huge(p: *mut u8, len: usize) {
        if p.is_null() || !enabled() {
            return;
        }
        let start = (p as usize).next_multiple_of(HUGE);
        let end = (p as usize + len) / HUGE * HUGE;
        // [start, end) lies inside an allocation we were just handed.
        crate::madvise::huge_pages(start, end);
    }
}

/// After the system allocator handed out `p` of `size` bytes: the advice
/// its heap or its own mapping gets.
fn advise_after(p: *mut u8, size: usize) {
    // The heap's switch first: off (libraries, writes), one load.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if heap::on() && advise::enabled() {
        heap::after_alloc(p, size);
    }
    if size >= LARGE {
        advise::huge(p, size);
    }
}

#[cfg(not(target_os = "linux"))]
mod advise {
    pub fn huge(_: *mut u8, _: usize) {}
    pub fn set(_: bool) {}
    pub fn pause() {}
    pub fn resume() {}
}

/// Turns the huge-page advice on or off for the rest of the process (it is
/// on unless turned off here or by [`set_from_environment`]). A program
/// that makes a few very large allocations, as `tessera write` does
/// (whole columns of hundreds of MiB), turns it off: where the kernel compacts memory to find huge pages on
/// demand (`defrag` = `madvise`), that compaction costs more than the page
/// faults huge pages save (docs/PERFORMANCE.md, "Writing").
pub fn set_huge_pages(on: bool) {
    advise::set(on);
}

/// For a program that makes a read and exits (`tessera read`, `tessera
/// sql`): buffers of up to 32 MiB are kept in glibc's heaps and those heaps
/// are backed by huge pages, as glibc does under
/// `GLIBC_TUNABLES=glibc.malloc.hugetlb=1`. A read's tiles and result
/// columns of a few MiB then fault in 2 MiB at a time, not 4 KiB (the
/// small reads of docs/PERFORMANCE.md took about a tenth less time). It
/// changes glibc's settings for the whole process, so a library never
/// calls it; only a program, as it starts. It follows
/// [`set_huge_pages`] and [`without_huge_pages`] as the rest of the advice
/// does. Elsewhere than on glibc Linux it does nothing.
pub fn huge_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    heap::enable();
}

/// Turns the huge-page advice off if the environment sets
/// `TESSERA_HUGEPAGES=0`. Call it where nothing else changes the
/// environment meanwhile: as a program starts, or as a Python module is
/// imported (with the GIL held, no Python code sets `os.environ`).
pub fn set_from_environment() {
    if std::env::var_os("TESSERA_HUGEPAGES").is_some_and(|v| v == "0") {
        advise::set(false);
    }
}

/// Runs `f` with the huge-page advice paused: a library's write (many
/// fresh buffers of MiB, filled once) calls it where a program would call
/// [`set_huge_pages(false)`](set_huge_pages), since compaction on demand
/// costs the write more than the faults it saves (docs/PERFORMANCE.md,
/// "Writing"). The pause is the process's while `f` runs: allocations of
/// other threads then go unadvised too, which changes their speed, never
/// their result. Calls may overlap; the advice resumes when the last
/// returns (or unwinds).
pub fn without_huge_pages<T>(f: impl FnOnce() -> T) -> T {
    struct Resume;
    impl Drop for Resume {
        fn drop(&mut self) {
            advise::resume();
        }
    }
    advise::pause();
    let _resume = Resume;
    f()
}

// SAFETY: every method forwards to `System` with the same arguments, and only
// adds a madvise hint on memory `System` returned; layouts are never changed.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for HugePages {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is.
        let p = unsafe { System.alloc(layout) };
        advise_after(p, layout.size());
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is.
        let p = unsafe { System.alloc_zeroed(layout) };
        advise_after(p, layout.size());
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded as is.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded as is.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        advise_after(p, new_size);
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Allocates through `HugePages` directly (not as the global allocator),
    /// writes a pattern, grows and shrinks the block, and checks the bytes.
    #[test]
    fn allocations_keep_their_contents_across_sizes_and_reallocs() {
        let a = HugePages;
        for &size in &[
            1usize,
            4095,
            1 << 20,
            LARGE - 1,
            LARGE,
            LARGE + 12_345,
            3 * LARGE,
        ] {
            for &align in &[1usize, 8, 64, 4096] {
                let layout = Layout::from_size_align(size, align).unwrap();
                // SAFETY (test): the layout has a non-zero size; the block is
                // used within its size and freed with its layout.
                #[allow(unsafe_code)]
                unsafe {
                    let p = a.alloc(layout);
                    assert!(!p.is_null());
                    assert_eq!(p as usize % align, 0);
                    for i in (0..size).step_by(997) {
                        *p.add(i) = (i % 251) as u8;
                    }
                    let grown = size * 2 + 1;
                    let q = a.realloc(p, layout, grown);
                    assert!(!q.is_null());
                    for i in (0..size).step_by(997) {
                        assert_eq!(
                            *q.add(i),
                            (i % 251) as u8,
                            "size {size} align {align} at {i}"
                        );
                    }
                    *q.add(grown - 1) = 7;
                    a.dealloc(q, Layout::from_size_align(grown, align).unwrap());

                    let z = a.alloc_zeroed(layout);
                    assert!((0..size).step_by(4093).all(|i| *z.add(i) == 0));
                    a.dealloc(z, layout);
                }
            }
        }
    }

    /// Pauses nest, and the advice resumes after the last, even when it
    /// unwinds.
    #[cfg(target_os = "linux")]
    #[test]
    fn pauses_nest_and_resume_after_unwinding() {
        let _serial = STATE_TESTS.lock().unwrap_or_else(|p| p.into_inner());
        set_huge_pages(true);
        assert!(advise::enabled());
        without_huge_pages(|| {
            assert!(!advise::enabled());
            without_huge_pages(|| assert!(!advise::enabled()));
            assert!(!advise::enabled());
        });
        assert!(advise::enabled());
        let unwound = std::panic::catch_unwind(|| without_huge_pages(|| panic!("a failed write")));
        assert!(unwound.is_err());
        assert!(advise::enabled());
    }

    /// The tests that change the advice's state, one at a time.
    static STATE_TESTS: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// Large allocations leave the environment unread (a `getenv` on the
    /// allocating thread would race a `setenv` elsewhere); the program
    /// reads it when it says.
    #[cfg(target_os = "linux")]
    #[test]
    fn the_environment_is_read_when_the_program_says() {
        let _serial = STATE_TESTS.lock().unwrap_or_else(|p| p.into_inner());
        std::env::set_var("TESSERA_HUGEPAGES", "0");
        let layout = Layout::from_size_align(2 * LARGE, 8).unwrap();
        // SAFETY (test): a non-zero size, freed with its layout.
        #[allow(unsafe_code)]
        unsafe {
            HugePages.dealloc(HugePages.alloc(layout), layout);
        }
        assert!(advise::enabled(), "the allocator read the environment");
        set_from_environment();
        assert!(!advise::enabled());
        std::env::remove_var("TESSERA_HUGEPAGES");
        set_huge_pages(true);
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    /// The `VmFlags` of the mapping holding `at`, from /proc/self/smaps.
    fn flags_at(at: usize) -> String {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut inside = false;
        for line in smaps.lines() {
            if let Some((range, _)) = line.split_once(' ') {
                if let Some((lo, hi)) = range.split_once('-') {
                    if let (Ok(lo), Ok(hi)) =
                        (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
                    {
                        inside = lo <= at && at < hi;
                        continue;
                    }
                }
            }
            if inside {
                if let Some(f) = line.strip_prefix("VmFlags:") {
                    return f.to_owned();
                }
            }
        }
        panic!("no mapping holds {at:#x}");
    }

    /// Buffers of a few MiB, from this thread and from another, lie in
    /// heaps advised for huge pages (`hg` in their mapping's flags), and
    /// keep their contents.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn heaps_holding_buffers_are_advised() {
        let _serial = STATE_TESTS.lock().unwrap_or_else(|p| p.into_inner());
        set_huge_pages(true);
        huge_heap();
        let check = || {
            let layout = std::alloc::Layout::from_size_align(3 << 20, 8).unwrap();
            // SAFETY (test): a non-zero size, used within it, freed with it.
            #[allow(unsafe_code)]
            unsafe {
                let p = std::alloc::GlobalAlloc::alloc(&HugePages, layout);
                assert!(!p.is_null());
                p.write_bytes(7, layout.size());
                let flags = flags_at(p as usize + layout.size() / 2);
                assert!(*p.add(layout.size() - 1) == 7);
                std::alloc::GlobalAlloc::dealloc(&HugePages, p, layout);
                flags
            }
        };
        let here = check();
        assert!(here.split_whitespace().any(|f| f == "hg"), "{here}");
        let there = std::thread::spawn(check).join().unwrap();
        assert!(there.split_whitespace().any(|f| f == "hg"), "{there}");
    }
}

//! Huge pages for glibc's heaps, for a program that asks ([`crate::huge_heap`]).
//!
//! A read builds its result, and decodes its tiles, in buffers of a few
//! hundred KiB to a few MiB: below [`crate::LARGE`], so not advised one by
//! one, and each 4 KiB page of them costs a page fault on first touch. Here
//! glibc is told to keep such buffers in its heaps (`M_MMAP_THRESHOLD`) and
//! to grow the main heap 16 MiB at a time (`M_TOP_PAD`), and each heap is
//! advised as a whole: the main heap's every extension (the program break
//! moved since last seen) and each other thread's heap (a glibc arena's
//! aligned 64 MiB region) once. This is what glibc itself does under
//! `GLIBC_TUNABLES=glibc.malloc.hugetlb=1`, which a program cannot set once
//! it runs. Advice is given over whole heaps, never over one allocation of
//! them: advising part of a mapping splits it in the kernel's tables.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Buffers below this size come from glibc's heaps (32 MiB: glibc's
/// largest threshold on 64-bit systems; larger ones are mapped apart and
/// advised by [`crate::LARGE`]'s path).
pub const MMAP_THRESHOLD: usize = 32 << 20;
/// How much more than asked glibc grows its main heap by.
const TOP_PAD: usize = 16 << 20;
/// The region a glibc arena's heap is aligned to and reserves (glibc's
/// `HEAP_MAX_SIZE`: twice the largest mmap threshold, on 64-bit systems).
const ARENA_HEAP: usize = 64 << 20;

/// Whether heaps are advised: off until a program calls [`enable`].
static ON: AtomicBool = AtomicBool::new(false);
/// The program break when advice began: the main heap holds little below it.
static START: AtomicUsize = AtomicUsize::new(0);
/// The program break when last seen: the main heap is advised up to it.
static LAST_BREAK: AtomicUsize = AtomicUsize::new(0);
/// The arenas' heaps advised so far (their aligned bases); 0 is free. A
/// process has at most eight arenas a core; past this many, the rest go
/// unadvised.
static ARENAS: [AtomicUsize; 64] = [const { AtomicUsize::new(0) }; 64];

/// The program break: where the main heap ends.
fn program_break() -> usize {
    // SAFETY: sbrk(0) moves nothing; it returns the current break.
    #[allow(unsafe_code)]
    unsafe {
        libc::sbrk(0) as usize
    }
}

/// Advises `[start, end)` (the start page-aligned down) to use huge pages.
fn advise(start: usize, end: usize) {
    crate::madvise::huge_pages(start / 4096 * 4096, end);
}

/// Keeps buffers below [`MMAP_THRESHOLD`] in glibc's heaps, grows the main
/// heap by 16 MiB at a time, and advises heaps from now on.
pub fn enable() {
    // SAFETY: mallopt only sets glibc's allocation parameters; both values
    // are within the ranges glibc accepts.
    #[allow(unsafe_code)]
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD as libc::c_int);
        libc::mallopt(libc::M_TOP_PAD, TOP_PAD as libc::c_int);
    }
    let brk = program_break();
    START.store(brk, Ordering::Relaxed);
    LAST_BREAK.store(brk, Ordering::Relaxed);
    ON.store(true, Ordering::Relaxed);
}

/// Whether heaps are advised (a program called [`enable`]).
pub fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// After glibc handed out `p` (of `size` bytes), heaps being advised
/// ([`on`]): advises the heap it came from if that heap grew or is new.
pub fn after_alloc(p: *mut u8, size: usize) {
    if p.is_null() || size >= MMAP_THRESHOLD {
        return;
    }
    let at = p as usize;
    let brk = program_break();
    // The main heap lies below the break and, but for what a program
    // allocated as it started, above where the break was when advice
    // began; arenas' heaps are mapped far from it.
    let start = START.load(Ordering::Relaxed);
    if at < brk && at >= start.saturating_sub(ARENA_HEAP) {
        let seen = LAST_BREAK.swap(brk, Ordering::Relaxed);
        if brk > seen {
            advise(seen, brk);
        }
        return;
    }
    let base = at & !(ARENA_HEAP - 1);
    for slot in &ARENAS {
        match slot.compare_exchange(0, base, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => {
                advise(base, base + ARENA_HEAP);
                return;
            }
            Err(held) if held == base => return,
            Err(_) => {}
        }
    }
}

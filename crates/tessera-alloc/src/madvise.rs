//! Asking Linux to back a range of memory with transparent huge pages:
//! the allocator's one `madvise` call, for single allocations and heaps alike.

/// Advises `[start, end)` (page-aligned addresses) to use huge pages.
pub fn huge_pages(start: usize, end: usize) {
    if end > start {
        // SAFETY: MADV_HUGEPAGE only changes how the kernel backs mapped
        // anonymous memory, never its contents. A failure (THP disabled, an
        // old kernel, a range holding unmapped pages) leaves the memory as it
        // was, so its result is ignored.
        #[allow(unsafe_code)]
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

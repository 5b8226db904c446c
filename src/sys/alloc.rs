//! The binary's global allocator: the system's (glibc malloc), except that small over-aligned
//! blocks come from plain malloc with the alignment done here.
//!
//! Why: tokio allocates one 128-byte-aligned `ScheduledIo` (cache-line padded) per socket it
//! registers, and Rust's `System` serves alignments above 16 with posix_memalign, which in
//! glibc 2.36 has no thread cache: it mallocs size + alignment, then splits off and frees the
//! misaligned head and the tail. Under callgrind that cost 780 instructions per connection
//! and its free another ~270, of a crr request's ~11,100 in the worker (issue 21 item 3): a
//! connection per request registers a socket per request. Here the same block is one malloc
//! of size + alignment from the thread cache, the start found by rounding up, the pointer
//! malloc gave kept in the word before it for `dealloc`.

use std::alloc::{GlobalAlloc, Layout, System};

/// malloc's own alignment on 64-bit glibc: layouts up to it go to `System` unchanged.
const MALLOC_ALIGN: usize = 16;
/// Alignments above this go to `System` too (page-aligned buffers: rare, and the padding of
/// up to `align` bytes would matter).
const MAX_ALIGN: usize = 4096;

/// The global allocator of the `wirebench` binary (see the module's note).
pub struct Allocator;

/// Whether this layout is aligned here rather than by posix_memalign.
fn aligned_here(layout: Layout) -> bool {
    layout.align() > MALLOC_ALIGN && layout.align() <= MAX_ALIGN
}

// SAFETY: every block handed out is valid for `layout.size()` bytes at `layout.align()`: malloc
// returns 16-aligned memory of size + align bytes; rounding `raw + 8` up to `align` (a power of
// two, a multiple of 16) moves the start by 16..=align bytes, so size bytes still fit and the
// word before the start (for the pointer to free) lies within the block. Rust passes `dealloc`
// and `realloc` the layout the block was allocated with, so `aligned_here` picks the same path.
unsafe impl GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !aligned_here(layout) {
            return System.alloc(layout);
        }
        let Some(total) = layout.size().checked_add(layout.align()) else {
            return std::ptr::null_mut();
        };
        let raw = libc::malloc(total).cast::<u8>();
        if raw.is_null() {
            return raw;
        }
        let start = (raw as usize + 8).next_multiple_of(layout.align());
        let ptr = raw.add(start - raw as usize);
        ptr.cast::<*mut u8>().sub(1).write(raw);
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if aligned_here(layout) {
            libc::free(ptr.cast::<*mut u8>().sub(1).read().cast());
        } else {
            System.dealloc(ptr, layout);
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if !aligned_here(layout) {
            return System.alloc_zeroed(layout);
        }
        let ptr = self.alloc(layout);
        if !ptr.is_null() {
            ptr.write_bytes(0, layout.size());
        }
        ptr
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if !aligned_here(layout) {
            return System.realloc(ptr, layout, new_size);
        }
        // SAFETY: the caller guarantees new_size, rounded up to the alignment, fits an isize.
        let new = Layout::from_size_align_unchecked(new_size, layout.align());
        let fresh = self.alloc(new);
        if !fresh.is_null() {
            fresh.copy_from_nonoverlapping(ptr, layout.size().min(new_size));
            self.dealloc(ptr, layout);
        }
        fresh
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether the `n` bytes at `p` are all `b`.
    ///
    /// # Safety
    /// `p` must be valid for reading `n` bytes.
    unsafe fn all(p: *const u8, n: usize, b: u8) -> bool {
        std::slice::from_raw_parts(p, n).iter().all(|&x| x == b)
    }

    #[test]
    fn over_aligned_blocks_are_aligned_whole_and_freed() {
        let a = Allocator;
        for align in [1, 8, 16, 32, 64, 128, 256, 4096, 8192] {
            for size in [1, 8, 24, 100, 128, 1000, 5000] {
                let l = Layout::from_size_align(size, align).unwrap();
                // SAFETY: every layout has a non-zero size; each block is written and read
                // within its size and freed (or reallocated) with the layout it has.
                unsafe {
                    let z = a.alloc_zeroed(l);
                    assert_eq!(z as usize % align, 0, "{size} B at {align}");
                    assert!(all(z, size, 0));
                    let mut p = a.alloc(l);
                    assert_eq!(p as usize % align, 0, "{size} B at {align}");
                    p.write_bytes(0xa5, size);
                    z.write_bytes(0x5a, size);
                    // Growing and shrinking keep the bytes that fit and the alignment.
                    for new_size in [size * 3, size.div_ceil(2)] {
                        let q = a.realloc(p, l, new_size);
                        assert_eq!(q as usize % align, 0);
                        assert!(all(q, size.min(new_size), 0xa5));
                        q.write_bytes(0xa5, new_size);
                        let nl = Layout::from_size_align(new_size, align).unwrap();
                        p = a.realloc(q, nl, size);
                        assert_eq!(p as usize % align, 0);
                        assert!(all(p, size.min(new_size), 0xa5));
                        p.write_bytes(0xa5, size);
                    }
                    assert!(
                        all(z, size, 0x5a),
                        "a neighbour's writes stayed in its block"
                    );
                    a.dealloc(p, l);
                    a.dealloc(z, l);
                }
            }
        }
    }
}

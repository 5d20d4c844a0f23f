//! The allocator of the program and of the benchmark's floor: mimalloc, asked for plain blocks
//! where the alignment is a word's.
//!
//! Builds allocate many small values from several threads at once; mimalloc serves those
//! without the lock and page-protection traffic of the system allocator's per-thread heaps.
//! It is built without asking for transparent huge pages (the `no_thp` feature): with them, a
//! build of 4,500 resources peaked at about 107 MiB resident, its 55 MB of live values spread
//! over partly filled 2 MiB pages; without them at 80 MiB, for about 3% more CPU time (18,000
//! page faults of 4 KiB instead of 350 of 2 MiB).
//!
//! It is mimalloc 2, not the crate's default 3: on the 500-app build, two sets of 21 and 25
//! runs of each in turn, 2.6-3.2% less wall and CPU time, 1,000 fewer page faults and 3 MiB less
//! at the peak; the monorepo's 2,000 roots in one run, the same time and memory.
//!
//! The `mimalloc` crate's allocator asks for every block through mimalloc's aligned calls, which
//! check the alignment and the block they found before they return it: about 50 instructions an
//! allocation where `mi_malloc` takes about 20, over the 2.5 million allocations of a 500-app
//! build. Every mimalloc block is a multiple of a word long and starts on a word, so an
//! alignment up to a word's needs nothing more; larger ones still go through the aligned calls.

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

use libmimalloc_sys as mi;

/// Alignments every block has.
const WORD: usize = std::mem::size_of::<usize>();

pub struct Allocator;

// SAFETY: each call hands mimalloc a size and, above a word, the alignment the layout asks for;
// every block mimalloc returns is word-aligned; blocks are freed and resized only by mimalloc.
unsafe impl GlobalAlloc for Allocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let (size, align) = (layout.size(), layout.align());
        unsafe { (if align <= WORD { mi::mi_malloc(size) } else { mi::mi_malloc_aligned(size, align) }) as *mut u8 }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let (size, align) = (layout.size(), layout.align());
        unsafe { (if align <= WORD { mi::mi_zalloc(size) } else { mi::mi_zalloc_aligned(size, align) }) as *mut u8 }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        unsafe { mi::mi_free(ptr as *mut c_void) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let (ptr, align) = (ptr as *mut c_void, layout.align());
        unsafe { (if align <= WORD { mi::mi_realloc(ptr, new_size) } else { mi::mi_realloc_aligned(ptr, new_size, align) }) as *mut u8 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks of every alignment up to a page come back aligned, keep their bytes when they
    /// grow and shrink, and zeroed ones are zero.
    #[test]
    fn blocks_are_aligned_and_keep_their_bytes() {
        let a = Allocator;
        for align in [1, 2, 4, 8, 16, 32, 64, 4096] {
            for size in [1, 7, 8, 24, 100, 5000, 300_000] {
                let layout = Layout::from_size_align(size, align).unwrap();
                unsafe {
                    let p = a.alloc(layout);
                    assert!(!p.is_null());
                    assert_eq!(p as usize % align, 0, "size {size}, align {align}");
                    std::ptr::write_bytes(p, 0xA5, size);
                    let grown = a.realloc(p, layout, size * 3);
                    assert_eq!(grown as usize % align, 0, "grown: size {size}, align {align}");
                    assert!((0..size).all(|i| *grown.add(i) == 0xA5));
                    let shrunk = a.realloc(grown, Layout::from_size_align(size * 3, align).unwrap(), size / 2 + 1);
                    assert_eq!(shrunk as usize % align, 0, "shrunk: size {size}, align {align}");
                    assert!((0..size / 2 + 1).all(|i| *shrunk.add(i) == 0xA5));
                    a.dealloc(shrunk, Layout::from_size_align(size / 2 + 1, align).unwrap());
                    let z = a.alloc_zeroed(layout);
                    assert_eq!(z as usize % align, 0);
                    assert!((0..size).all(|i| *z.add(i) == 0));
                    a.dealloc(z, layout);
                }
            }
        }
    }
}

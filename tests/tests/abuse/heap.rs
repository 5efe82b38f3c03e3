//! The process's heap in use, which the memory test measures.

/// glibc's heap statistics (`mallinfo2`, glibc 2.33+), over all arenas: the bytes the process
/// holds through malloc, including what the FMU's binary allocates. Unlike RSS it does not hide
/// a leak in memory that earlier frees left for reuse. mallinfo2 counts the chunks glibc keeps
/// in its per-thread cache (tcache, up to 7 per size class) as in use, so the measuring process
/// runs with the tcache off (`NO_TCACHE`): otherwise the cache filling up reads as growth.
#[repr(C)]
struct MallInfo2 {
    arena: usize,
    ordblks: usize,
    smblks: usize,
    hblks: usize,
    hblkhd: usize,
    usmblks: usize,
    fsmblks: usize,
    uordblks: usize,
    fordblks: usize,
    keepcost: usize,
}

extern "C" {
    fn mallinfo2() -> MallInfo2;
}

pub(crate) fn heap_in_use() -> usize {
    let info = unsafe { mallinfo2() };
    info.uordblks + info.hblkhd
}

pub(crate) const NO_TCACHE: &str = "glibc.malloc.tcache_count=0";

"""The bounds every chapter reader shares.

Read as ``limits.NAME`` when used (never copied into another module by
``from ... import``), so that one value governs every reader and a test that
lowers it reaches them all.
"""

#: An entry larger than this is not treated as a page (a decompression bomb or not a page at all).
MAX_PAGE_BYTES = 128 * 1024 * 1024

#: Formats that cannot stream an entry (7z, compressed RAR, rendered PDF pages) hold a page
#: in memory to serve it; this caps that memory per request. Larger pages are refused.
MAX_BUFFERED_BYTES = 32 * 1024 * 1024

#: Bytes a reader may decompress to reach one entry. In a solid archive (7z block, solid
#: RAR) every entry before it in its block is decompressed too, so a 1 KB page can cost
#: gigabytes of work; such entries are refused instead.
MAX_DECOMPRESS_WORK = 64 * 1024 * 1024

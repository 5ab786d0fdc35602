/* The kernel's copy from the page cache, five ways, on one thread: whole
 * 4 MiB tiles into a buffer reused (what `xtask floor` does); 4 KiB rows to
 * their places in a 16 MiB result (what tessera's direct reads do), at
 * page-aligned file offsets and SHIFT bytes off them; spans of SPAN bytes
 * (default 64 KiB) read into a buffer reused and their rows copied out; and
 * rows copied out of a mapping of the file (MAP_POPULATE if POP is set).
 * A tile's rows on disk lie 12 bytes further off alignment at each 64 KiB
 * chunk (its header). Why the int32 full read trails the floor, and why
 * neither a bounce buffer nor a mapping would do better (docs/PERFORMANCE.md).
 *
 *   cc -O2 row_copy.c -o /tmp/row_copy
 *   /tmp/row_copy target/bench/scale-1/dense_i32_raw/__fragments/<fragment>/a0.tdb 12 [SPAN]
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: row_copy FILE SHIFT [SPAN]\n");
        return 2;
    }
    int fd = open(argv[1], O_RDONLY);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    off_t shift = atol(argv[2]);
    size_t tile = 4 << 20, result = 16 << 20;
    off_t size = lseek(fd, 0, SEEK_END);
    int tiles = (int)((size - shift) / (off_t)tile);
    char *res = aligned_alloc(2 << 20, result), *buf = aligned_alloc(2 << 20, tile);
    madvise(res, result, MADV_HUGEPAGE);
    madvise(buf, tile, MADV_HUGEPAGE);
    memset(res, 1, result);
    memset(buf, 1, tile);
    struct iovec iov[512];
    double whole = 0, aligned = 0, shifted = 0, spans = 0, mapped = 0;
    size_t span = argc > 3 ? (size_t)atol(argv[3]) : 65536;
    char *sbuf = aligned_alloc(4096, span);
    memset(sbuf, 1, span);
    for (int pass = 0; pass < 10; pass++) {
        double t0 = now_ms();
        for (int t = 0; t < tiles; t++)
            pread(fd, buf, tile, (off_t)t * tile);
        whole += now_ms() - t0;
        for (int s = 0; s < 2; s++) {
            off_t off = s ? shift : 0;
            double t1 = now_ms();
            for (int t = 0; t < tiles; t++)
                for (int half = 0; half < 2; half++) {
                    /* 512 rows of 8 tiles of 4 KiB: tile t fills column t % 8. */
                    for (int r = 0; r < 512; r++) {
                        iov[r].iov_base = res + (size_t)r * 32768 + (t % 8) * 4096;
                        iov[r].iov_len = 4096;
                    }
                    preadv(fd, iov, 512, (off_t)t * tile + half * (tile / 2) + off);
                }
            *(s ? &shifted : &aligned) += now_ms() - t1;
        }
        /* spans of SPAN bytes read into a small reused buffer, rows copied out */
        double t2 = now_ms();
        for (int t = 0; t < tiles; t++)
            for (size_t at = 0; at < tile; at += span) {
                pread(fd, sbuf, span, (off_t)t * tile + at + shift);
                for (size_t r = at / 4096; r < (at + span) / 4096; r++)
                    memcpy(res + (r % 512) * 32768 + (t % 8) * 4096, sbuf + (r * 4096 - at), 4096);
            }
        spans += now_ms() - t2;
        double t3 = now_ms();
        char *m = mmap(0, size, PROT_READ, MAP_PRIVATE | (getenv("POP") ? MAP_POPULATE : 0), fd, 0);
        for (int t = 0; t < tiles; t++)
            for (size_t r = 0; r < 1024; r++)
                memcpy(res + (r % 512) * 32768 + (t % 8) * 4096, m + (size_t)t * tile + r * 4096 + shift, 4096);
        munmap(m, size);
        mapped += now_ms() - t3;
    }
    printf("per pass, mean of 10: whole tiles %.1f ms, rows aligned %.1f ms, rows %ld bytes off %.1f ms, spans of %zu via buffer %.1f ms, mmap %.1f ms\n",
           whole / 10, aligned / 10, (long)shift, shifted / 10, span, spans / 10, mapped / 10);
    return 0;
}

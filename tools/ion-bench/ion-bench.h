/* SPDX-License-Identifier: MIT */
/*
 * ion-bench's own declarations, shared by tools/ion-bench.c (the timed
 * ops, the report, main) and the files of tools/ion-bench/: bounce.c
 * (swiotlb bytes bounced for edu, the "bounce" op).
 */
#ifndef ION_BENCH_H
#define ION_BENCH_H

/* A progress line "# ..." on stdout (and what the guest's console shows). */
void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * The "bounce" op: ion-auto's and ion-system's 1 MiB buffers mapped and
 * read by edu, the bytes swiotlb bounced ("@bounce" rows); ion_test is
 * loaded with edu_dma_bits @edu_bits when it is not loaded yet.
 */
void run_bounce(int edu_bits);

#endif /* ION_BENCH_H */

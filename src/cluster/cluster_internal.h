/* What clg_train needs of MPI: a communicator of its own, sums that leave every rank with the
 * same bits, and broadcasts. Without MPI every call is CLG_ERR_UNSUPPORTED. */
#ifndef CLGRAD_CLUSTER_INTERNAL_H
#define CLGRAD_CLUSTER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "clgrad/cluster.h"

typedef struct clg__cluster clg__cluster;

/* A duplicate of MPI_COMM_WORLD (errors returned, not fatal); needs clg_cluster_init or the
 * application's MPI_Init first. */
clg_status clg__cluster_open(clg__cluster **out);
void clg__cluster_close(clg__cluster *c);
int clg__cluster_rank(const clg__cluster *c);
int clg__cluster_size(const clg__cluster *c);

/* buf = the sum over ranks of buf, in messages of at most bucket_bytes (0: 4 MiB), the same
 * bits on every rank with Open MPI's algorithms (checked by the caller: clg__cluster_same). */
clg_status clg__cluster_sum_floats(clg__cluster *c, float *buf, size_t n, size_t bucket_bytes);
clg_status clg__cluster_sum_doubles(clg__cluster *c, double *buf, size_t n);
/* The same sum started without waiting (MPI_Iallreduce in buckets): buf must stay put until
 * clg__cluster_wait, which ends every sum started and tells the first failure;
 * clg__cluster_progress moves them along meanwhile. */
void clg__cluster_isum_floats(clg__cluster *c, float *buf, size_t n, size_t bucket_bytes);
void clg__cluster_progress(clg__cluster *c);
clg_status clg__cluster_wait(clg__cluster *c);
/* *same = 1 when buf holds the same bytes on every rank (a 64-bit hash compared). */
clg_status clg__cluster_same(clg__cluster *c, const void *buf, size_t bytes, int *same);
/* Rank root's bytes to every rank. */
clg_status clg__cluster_broadcast(clg__cluster *c, void *buf, size_t bytes, int root);
/* Bytes this rank has sent so far (sums and broadcasts, counted as MPI payload). */
uint64_t clg__cluster_bytes_sent(const clg__cluster *c);

#endif

/* Cluster training over MPI: ExecutionEnvironment "parallel". Each MPI rank trains on its own
 * devices; clg_train with the execution environment CLG_ENV_PARALLEL splits every global mini-batch
 * across the ranks and combines their gradients with MPI, so that every rank holds the same
 * weights after every step. Needs clgrad built with CLGRAD_WITH_MPI (Open MPI). */
#ifndef CLGRAD_CLUSTER_H
#define CLGRAD_CLUSTER_H

#include "clgrad/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** 1 when this clgrad was built with MPI, else 0. */
CLG_API int clg_cluster_available(void);

/** Starts MPI for this process (MPI_Init_thread, MPI_THREAD_FUNNELED: clgrad calls MPI from
 *  the thread that called clg_train) unless the application already did, and tells this
 *  process's rank and the number of ranks; either output may be NULL.
 *  @return CLG_OK; CLG_ERR_UNSUPPORTED without MPI; CLG_ERR_INTERNAL when MPI fails. */
CLG_API clg_status clg_cluster_init(int *argc, char ***argv, int *rank, int *size);

/** This process's rank among the ranks on the same host, and their number (to pick a device
 *  per rank). CLG_ERR_UNSUPPORTED without MPI or before clg_cluster_init. */
CLG_API clg_status clg_cluster_local_rank(int *local_rank, int *local_size);

/** Ends MPI if clg_cluster_init started it; a no-op otherwise. */
CLG_API void clg_cluster_finalize(void);

/** Ends every rank of the job at once with this exit code (MPI_Abort); exit(code) without MPI. */
CLG_API void clg_cluster_abort(int code);

#ifdef __cplusplus
}
#endif

#endif

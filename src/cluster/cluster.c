/* MPI for cluster training (Open MPI), or stubs that say it is not built in. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/cluster_internal.h"
#include "runtime/runtime_internal.h"

#ifdef CLGRAD_HAVE_MPI
#include <mpi.h>

struct clg__cluster {
    MPI_Comm comm;
    int rank, size;
    uint64_t sent;
    MPI_Request *req;      /* sums in flight (clg__cluster_isum_floats); capacity kept */
    size_t nreq, capreq;
    clg_status failed;     /* a sum that could not start */
};

/* Whether clg_cluster_init started MPI (so that finalize ends it): the one piece of process
 * state here, as MPI itself is per process. */
static int started_here;

static clg_status mpi_fail(int err, const char *what)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(err, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "error %d", err);
    return clg__fail(NULL, CLG_ERR_INTERNAL, "MPI %s failed: %s", what, text);
}

int clg_cluster_available(void)
{
    return 1;
}

clg_status clg_cluster_init(int *argc, char ***argv, int *rank, int *size)
{
    int ready = 0, done = 0;
    MPI_Initialized(&ready);
    MPI_Finalized(&done);
    if (done)
        return clg__fail(NULL, CLG_ERR_INVALID_ARG, "clg_cluster_init: MPI was already finalized");
    if (!ready) {
        int provided = 0;
        int err = MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
        if (err != MPI_SUCCESS)
            return mpi_fail(err, "MPI_Init_thread");
        started_here = 1;
    }
    if (rank)
        MPI_Comm_rank(MPI_COMM_WORLD, rank);
    if (size)
        MPI_Comm_size(MPI_COMM_WORLD, size);
    return CLG_OK;
}

clg_status clg_cluster_local_rank(int *local_rank, int *local_size)
{
    int ready = 0;
    MPI_Initialized(&ready);
    if (!ready)
        return clg__fail(NULL, CLG_ERR_UNSUPPORTED, "clg_cluster_local_rank: MPI is not started "
                         "(clg_cluster_init)");
    MPI_Comm local;
    int err = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
    if (err != MPI_SUCCESS)
        return mpi_fail(err, "MPI_Comm_split_type");
    if (local_rank)
        MPI_Comm_rank(local, local_rank);
    if (local_size)
        MPI_Comm_size(local, local_size);
    MPI_Comm_free(&local);
    return CLG_OK;
}

void clg_cluster_finalize(void)
{
    int done = 0;
    MPI_Finalized(&done);
    if (started_here && !done)
        MPI_Finalize();
    started_here = 0;
}

void clg_cluster_abort(int code)
{
    int ready = 0, done = 0;
    MPI_Initialized(&ready);
    MPI_Finalized(&done);
    if (ready && !done)
        MPI_Abort(MPI_COMM_WORLD, code);
    exit(code);
}

clg_status clg__cluster_open(clg__cluster **out)
{
    *out = NULL;
    int ready = 0, done = 0;
    MPI_Initialized(&ready);
    MPI_Finalized(&done);
    if (!ready || done)
        return clg__fail(NULL, CLG_ERR_UNSUPPORTED, "execution environment \"parallel\": MPI is "
                         "not started (run under mpirun; clg_cluster_init first)");
    clg__cluster *c = clg__calloc(1, sizeof *c);
    if (!c)
        return clg__oom(NULL, "cluster");
    int err = MPI_Comm_dup(MPI_COMM_WORLD, &c->comm);
    if (err != MPI_SUCCESS) {
        free(c);
        return mpi_fail(err, "MPI_Comm_dup");
    }
    MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(c->comm, &c->rank);
    MPI_Comm_size(c->comm, &c->size);
    *out = c;
    return CLG_OK;
}

void clg__cluster_close(clg__cluster *c)
{
    if (!c)
        return;
    int done = 0;
    MPI_Finalized(&done);
    if (!done) {
        clg__cluster_wait(c);
        MPI_Comm_free(&c->comm);
    }
    free(c->req);
    free(c);
}

int clg__cluster_rank(const clg__cluster *c)
{
    return c ? c->rank : 0;
}

int clg__cluster_size(const clg__cluster *c)
{
    return c ? c->size : 1;
}

/* Elements of `elem` bytes per message: bucket_bytes (0: 4 MiB) worth, at least one, and
 * within MPI's int counts. */
static size_t bucket_elems(size_t bucket_bytes, size_t elem)
{
    size_t per = (bucket_bytes ? bucket_bytes : (size_t)4 << 20) / elem;
    return per ? (per < ((size_t)1 << 30) ? per : (size_t)1 << 30) : 1;
}

/* An allreduce in buckets. Open MPI's algorithms (recursive doubling, ring, Rabenseifner)
 * compute each sum in one place or from commutative pairs, so every rank gets the same bits;
 * clg_train verifies that at every epoch's end (clg__cluster_same). */
static clg_status sum(clg__cluster *c, void *buf, size_t n, size_t elem, MPI_Datatype type,
                      size_t bucket_bytes)
{
    size_t per = bucket_elems(bucket_bytes, elem);
    unsigned char *p = buf;
    for (size_t off = 0; off < n; off += per) {
        int count = (int)(n - off < per ? n - off : per);
        int err = MPI_Allreduce(MPI_IN_PLACE, p + off * elem, count, type, MPI_SUM, c->comm);
        if (err != MPI_SUCCESS)
            return mpi_fail(err, "gradient sum");
        c->sent += (uint64_t)count * elem;
    }
    return CLG_OK;
}

clg_status clg__cluster_same(clg__cluster *c, const void *buf, size_t bytes, int *same)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a over the bytes, 8 at a time */
    const unsigned char *p = buf;
    size_t i = 0;
    for (; i + 8 <= bytes; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 1099511628211ull;
    }
    for (; i < bytes; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    uint64_t lo = h, hi = h;
    int err = MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_UINT64_T, MPI_MIN, c->comm);
    if (err == MPI_SUCCESS)
        err = MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_UINT64_T, MPI_MAX, c->comm);
    if (err != MPI_SUCCESS)
        return mpi_fail(err, "weight check");
    *same = lo == hi;
    return CLG_OK;
}

clg_status clg__cluster_sum_floats(clg__cluster *c, float *buf, size_t n, size_t bucket_bytes)
{
    return sum(c, buf, n, sizeof *buf, MPI_FLOAT, bucket_bytes);
}

void clg__cluster_isum_floats(clg__cluster *c, float *buf, size_t n, size_t bucket_bytes)
{
    size_t per = bucket_elems(bucket_bytes, sizeof *buf);
    for (size_t off = 0; off < n && c->failed == CLG_OK; off += per) {
        if (c->nreq == c->capreq) {
            size_t cap = c->capreq ? 2 * c->capreq : 64;
            MPI_Request *grown = clg__realloc(c->req, cap * sizeof *grown);
            if (!grown) {
                c->failed = clg__oom(NULL, "cluster");
                return;
            }
            c->req = grown, c->capreq = cap;
        }
        int count = (int)(n - off < per ? n - off : per);
        int err = MPI_Iallreduce(MPI_IN_PLACE, buf + off, count, MPI_FLOAT, MPI_SUM, c->comm,
                                 &c->req[c->nreq]);
        if (err != MPI_SUCCESS) {
            c->failed = mpi_fail(err, "gradient sum");
            return;
        }
        c->nreq++;
        c->sent += (uint64_t)count * sizeof *buf;
    }
}

void clg__cluster_progress(clg__cluster *c)
{
    int flag = 0;
    if (c->nreq)
        MPI_Testall((int)c->nreq, c->req, &flag, MPI_STATUSES_IGNORE);
}

clg_status clg__cluster_wait(clg__cluster *c)
{
    int err = c->nreq ? MPI_Waitall((int)c->nreq, c->req, MPI_STATUSES_IGNORE) : MPI_SUCCESS;
    c->nreq = 0;
    clg_status st = c->failed;
    c->failed = CLG_OK;
    if (err != MPI_SUCCESS)
        return mpi_fail(err, "gradient sum");
    return st;
}

clg_status clg__cluster_sum_doubles(clg__cluster *c, double *buf, size_t n)
{
    return sum(c, buf, n, sizeof *buf, MPI_DOUBLE, 0);
}

clg_status clg__cluster_broadcast(clg__cluster *c, void *buf, size_t bytes, int root)
{
    unsigned char *p = buf;
    for (size_t off = 0; off < bytes; off += (size_t)1 << 30) {
        int count = (int)(bytes - off < ((size_t)1 << 30) ? bytes - off : (size_t)1 << 30);
        int err = MPI_Bcast(p + off, count, MPI_BYTE, root, c->comm);
        if (err != MPI_SUCCESS)
            return mpi_fail(err, "broadcast");
        if (c->rank == root)
            c->sent += (uint64_t)count;
    }
    return CLG_OK;
}

uint64_t clg__cluster_bytes_sent(const clg__cluster *c)
{
    return c ? c->sent : 0;
}

#else /* no MPI */

static clg_status unsupported(const char *what)
{
    return clg__fail(NULL, CLG_ERR_UNSUPPORTED, "%s: clgrad was built without MPI "
                     "(CLGRAD_WITH_MPI; apt-get install libopenmpi-dev)", what);
}

int clg_cluster_available(void)
{
    return 0;
}

clg_status clg_cluster_init(int *argc, char ***argv, int *rank, int *size)
{
    (void)argc, (void)argv;
    if (rank)
        *rank = 0;
    if (size)
        *size = 1;
    return unsupported("clg_cluster_init");
}

clg_status clg_cluster_local_rank(int *local_rank, int *local_size)
{
    (void)local_rank, (void)local_size;
    return unsupported("clg_cluster_local_rank");
}

void clg_cluster_finalize(void)
{
}

void clg_cluster_abort(int code)
{
    exit(code);
}

clg_status clg__cluster_open(clg__cluster **out)
{
    *out = NULL;
    return unsupported("execution environment \"parallel\"");
}

void clg__cluster_close(clg__cluster *c)
{
    (void)c;
}

int clg__cluster_rank(const clg__cluster *c)
{
    (void)c;
    return 0;
}

int clg__cluster_size(const clg__cluster *c)
{
    (void)c;
    return 1;
}

clg_status clg__cluster_sum_floats(clg__cluster *c, float *buf, size_t n, size_t bucket_bytes)
{
    (void)c, (void)buf, (void)n, (void)bucket_bytes;
    return unsupported("cluster sum");
}

clg_status clg__cluster_same(clg__cluster *c, const void *buf, size_t bytes, int *same)
{
    (void)c, (void)buf, (void)bytes;
    *same = 1;
    return unsupported("cluster check");
}

void clg__cluster_isum_floats(clg__cluster *c, float *buf, size_t n, size_t bucket_bytes)
{
    (void)c, (void)buf, (void)n, (void)bucket_bytes;
}

void clg__cluster_progress(clg__cluster *c)
{
    (void)c;
}

clg_status clg__cluster_wait(clg__cluster *c)
{
    (void)c;
    return unsupported("cluster sum");
}

clg_status clg__cluster_sum_doubles(clg__cluster *c, double *buf, size_t n)
{
    (void)c, (void)buf, (void)n;
    return unsupported("cluster sum");
}

clg_status clg__cluster_broadcast(clg__cluster *c, void *buf, size_t bytes, int root)
{
    (void)c, (void)buf, (void)bytes, (void)root;
    return unsupported("cluster broadcast");
}

uint64_t clg__cluster_bytes_sent(const clg__cluster *c)
{
    (void)c;
    return 0;
}

#endif

/* A small persistent thread pool for data-parallel loops over rows. */
#include "internal.h"
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#define TSR_MAX_THREADS 256

static int tsr__default_threads;

void tsr_set_threads(int n) { tsr__default_threads = n > 0 ? (n > TSR_MAX_THREADS ? TSR_MAX_THREADS : n) : 0; }

int tsr_threads(void)
{
    if (tsr__default_threads > 0) return tsr__default_threads;
    {
        const char *e = getenv("TSR_THREADS");
        int n = e ? atoi(e) : 0;
        if (n <= 0) n = (int)sysconf(_SC_NPROCESSORS_ONLN);
        if (n <= 0) n = 1;
        return n > TSR_MAX_THREADS ? TSR_MAX_THREADS : n;
    }
}

int tsr__exec_threads(const tsr_exec *ex)
{
    if (ex && ex->threads > 0) return ex->threads > TSR_MAX_THREADS ? TSR_MAX_THREADS : ex->threads;
    return tsr_threads();
}

int tsr__exec_threads_for(const tsr_exec *ex, size_t work, size_t serial_below)
{
    return work < serial_below ? 1 : tsr__exec_threads(ex);
}

/* One job at a time: the pool is shared, callers are serialised by job_lock. Workers take chunk
 * indices from 'next' until all are handed out. */
static struct {
    pthread_mutex_t job_lock, lock;
    pthread_cond_t wake, done;
    int started;                 /* workers created */
    unsigned long generation;    /* bumps for each job */
    tsr__range_fn fn;
    void *ctx;
    int n, chunk, nchunks, next, finished, workers_wanted;
} tsr__pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
               PTHREAD_COND_INITIALIZER, 0, 0, NULL, NULL, 0, 0, 0, 0, 0, 0};

static void tsr__run_chunks(void)
{
    for (;;) {
        int c, b, e;
        pthread_mutex_lock(&tsr__pool.lock);
        c = tsr__pool.next < tsr__pool.nchunks ? tsr__pool.next++ : -1;
        pthread_mutex_unlock(&tsr__pool.lock);
        if (c < 0) return;
        b = c * tsr__pool.chunk;
        e = b + tsr__pool.chunk < tsr__pool.n ? b + tsr__pool.chunk : tsr__pool.n;
        tsr__pool.fn(tsr__pool.ctx, b, e);
        pthread_mutex_lock(&tsr__pool.lock);
        if (++tsr__pool.finished == tsr__pool.nchunks) pthread_cond_signal(&tsr__pool.done);
        pthread_mutex_unlock(&tsr__pool.lock);
    }
}

/* Set on pool workers and on a caller while it runs a job: a parallel loop started from inside
 * one runs inline instead of waiting for the pool it is part of. */
static _Thread_local int tsr__in_pool;

static void *tsr__worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    unsigned long seen = 0;
    tsr__in_pool = 1;
    for (;;) {
        pthread_mutex_lock(&tsr__pool.lock);
        while (tsr__pool.generation == seen || id >= tsr__pool.workers_wanted) {
            if (tsr__pool.generation != seen) seen = tsr__pool.generation; /* not needed this job */
            pthread_cond_wait(&tsr__pool.wake, &tsr__pool.lock);
        }
        seen = tsr__pool.generation;
        pthread_mutex_unlock(&tsr__pool.lock);
        tsr__run_chunks();
    }
    return NULL;
}

void tsr__parallel_for(int n, int min_chunk, int threads, tsr__range_fn fn, void *ctx)
{
    int nthreads = threads > 0 ? threads : tsr_threads();
    int chunk, nchunks;
    if (n <= 0) return;
    if (min_chunk < 1) min_chunk = 1;
    if (nthreads > TSR_MAX_THREADS) nthreads = TSR_MAX_THREADS;
    /* A few chunks per thread balances uneven rows without much locking. */
    chunk = (n + nthreads * 4 - 1) / (nthreads * 4);
    if (chunk < min_chunk) chunk = min_chunk;
    nchunks = (n + chunk - 1) / chunk;
    /* Serial when there is nothing to share, when nested, or when another thread holds the pool
     * (its loop is already using the cores). */
    if (nthreads == 1 || nchunks == 1 || tsr__in_pool || pthread_mutex_trylock(&tsr__pool.job_lock) != 0) {
        fn(ctx, 0, n);
        return;
    }
    if (nthreads > nchunks) nthreads = nchunks;
    tsr__in_pool = 1;
    pthread_mutex_lock(&tsr__pool.lock);
    while (tsr__pool.started < nthreads - 1) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&t, &attr, tsr__worker, (void *)(intptr_t)tsr__pool.started) != 0) {
            pthread_attr_destroy(&attr);
            break;   /* fewer workers: the calling thread still does all remaining chunks */
        }
        pthread_attr_destroy(&attr);
        tsr__pool.started++;
    }
    tsr__pool.fn = fn;
    tsr__pool.ctx = ctx;
    tsr__pool.n = n;
    tsr__pool.chunk = chunk;
    tsr__pool.nchunks = nchunks;
    tsr__pool.next = 0;
    tsr__pool.finished = 0;
    tsr__pool.workers_wanted = nthreads - 1;
    tsr__pool.generation++;
    pthread_cond_broadcast(&tsr__pool.wake);
    pthread_mutex_unlock(&tsr__pool.lock);
    tsr__run_chunks();
    pthread_mutex_lock(&tsr__pool.lock);
    while (tsr__pool.finished < tsr__pool.nchunks) pthread_cond_wait(&tsr__pool.done, &tsr__pool.lock);
    tsr__pool.workers_wanted = 0;
    pthread_mutex_unlock(&tsr__pool.lock);
    tsr__in_pool = 0;
    pthread_mutex_unlock(&tsr__pool.job_lock);
}

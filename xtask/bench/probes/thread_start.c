/* How long a new thread waits to run while the thread that created it is
 * busy, and how long a sleeping thread takes to wake then. Why the 1 %
 * row-band read gains nothing from a second thread on the benchmark machine
 * (docs/PERFORMANCE.md).
 *
 *   cc -O2 -pthread thread_start.c -o /tmp/thread_start && /tmp/thread_start
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static atomic_int started, go;
static double woke;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;

static void *helper(void *arg) {
    (void)arg;
    atomic_store(&started, 1);
    pthread_mutex_lock(&m);
    while (!atomic_load(&go))
        pthread_cond_wait(&c, &m);
    woke = now_us();
    pthread_mutex_unlock(&m);
    return NULL;
}

int main(void) {
    for (int k = 0; k < 8; k++) {
        atomic_store(&started, 0);
        atomic_store(&go, 0);
        pthread_t t;
        double t0 = now_us();
        pthread_create(&t, NULL, helper, NULL);
        while (!atomic_load(&started)) {} /* the creator stays busy */
        double t1 = now_us();
        usleep(3000); /* the helper goes to sleep */
        pthread_mutex_lock(&m);
        atomic_store(&go, 1);
        double signalled = now_us();
        pthread_cond_signal(&c);
        pthread_mutex_unlock(&m);
        for (double s = now_us(); now_us() - s < 1000;) {} /* busy again */
        pthread_join(t, NULL);
        printf("start while the creator is busy: %7.1f us; wake while it is busy: %6.1f us\n",
               t1 - t0, woke - signalled);
    }
    return 0;
}

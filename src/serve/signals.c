/* signals.c - signals and lost leadership stop serve (see signals-int.h). */
#include "serve/signals-int.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>

#include "serve/log-int.h"

void serve_on_leader_change(void *ud, bool leading)
{
    struct serve *s = ud;

    serve_lock(s);
    if (!leading) {
        s->lost_leadership = true;
        s->stopping = true;
    }
    pthread_cond_broadcast(&s->cv);
    serve_unlock(s);
}

void serve_on_leader_log(void *ud, int level, const char *msg)
{
    (void)ud;
    serve_log(level == 0 ? 'E' : 'I', level, "%s", log_quote_msg(msg));
}

static void *signal_thread(void *arg)
{
    struct serve *s = arg;
    sigset_t set;
    int sig = 0;

    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGUSR1); /* internal: wakes this thread at exit */
    sigwait(&set, &sig);
    serve_lock(s);
    if (sig != SIGUSR1 && !s->stopping)
        serve_log('I', 0, "\"Received %s; shutting down\"", sig == SIGTERM ? "SIGTERM" : "SIGINT");
    s->stopping = true;
    pthread_cond_broadcast(&s->cv);
    serve_unlock(s);
    return NULL;
}

int serve_signals_start(struct serve *s)
{
    sigset_t sigs;

    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (pthread_create(&s->signal_thread, NULL, signal_thread, s))
        return -EAGAIN;
    s->signals_started = true;
    pthread_setname_np(s->signal_thread, "signals");
    return 0;
}

void serve_signals_stop(struct serve *s)
{
    if (!s->signals_started)
        return;
    pthread_kill(s->signal_thread, SIGUSR1);
    pthread_join(s->signal_thread, NULL);
    s->signals_started = false;
}

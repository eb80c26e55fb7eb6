/* test_queue.c - the scheduling queue: ordering, backoff, unschedulable moves, the keymap. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/keymap.h"
#include "serve/queue.h"
#include "test.h"

/* a queue with kube-scheduler's PopFromBackoffQ on */
static struct serve_queue *queue_pop_backoff(void)
{
    struct serve_queue_opts o = {0, 0, 0, NULL, 0, true};

    return serve_queue_new(&o);
}

static const char *pop_key(struct serve_queue *q, int64_t now)
{
    const struct serve_queue_item *it = serve_queue_pop(q, now);

    return it ? it->key : "(none)";
}

static void queue_orders_by_priority_then_arrival(void)
{
    struct serve_queue *q = queue_pop_backoff();

    CHECK_INT_EQ(serve_queue_add(q, "ns/low", 0, NULL, 1, NULL), 0);
    CHECK_INT_EQ(serve_queue_add(q, "ns/high-late", 100, NULL, 3, NULL), 0);
    CHECK_INT_EQ(serve_queue_add(q, "ns/high-early", 100, NULL, 2, NULL), 0);
    CHECK_INT_EQ(serve_queue_add(q, "ns/low-same-time", 0, NULL, 1, NULL), 0);
    CHECK_INT_EQ(serve_queue_count(q, SERVE_QUEUE_ACTIVE), 4);
    CHECK_STR_EQ(pop_key(q, 10), "ns/high-early");
    CHECK_STR_EQ(pop_key(q, 10), "ns/high-late");
    CHECK_STR_EQ(pop_key(q, 10), "ns/low");
    CHECK_STR_EQ(pop_key(q, 10), "ns/low-same-time");
    CHECK_STR_EQ(pop_key(q, 10), "(none)");
    CHECK_INT_EQ(serve_queue_count(q, SERVE_QUEUE_IN_FLIGHT), 4);
    serve_queue_free(q, NULL);
}

static void queue_backoff_doubles_to_cap(void)
{
    struct serve_queue *q = queue_pop_backoff();

    CHECK_INT_EQ(serve_queue_backoff_ms(q, 1), 1000);
    CHECK_INT_EQ(serve_queue_backoff_ms(q, 2), 2000);
    CHECK_INT_EQ(serve_queue_backoff_ms(q, 4), 8000);
    CHECK_INT_EQ(serve_queue_backoff_ms(q, 5), 10000);
    CHECK_INT_EQ(serve_queue_backoff_ms(q, 50), 10000);
    serve_queue_free(q, NULL);
}

static void queue_backoff_waits(void)
{
    struct serve_queue *q = queue_pop_backoff();

    /* kube-scheduler's windows: the expiry (100 + 1000) is aligned down to 1000, and the pod
     * backs off while the window is not past it, so until 2000 */
    serve_queue_add(q, "a/p", 0, NULL, 0, NULL);
    CHECK_STR_EQ(pop_key(q, 0), "a/p");
    serve_queue_backoff(q, "a/p", 100);
    CHECK_INT_EQ(serve_queue_count(q, SERVE_QUEUE_BACKOFF), 1);
    CHECK_INT_EQ(serve_queue_next_ms(q, 100), 1900);
    CHECK_STR_EQ(pop_key(q, 1999), "(none)"); /* an error backoff is never popped early */
    CHECK_STR_EQ(pop_key(q, 2000), "a/p");
    serve_queue_backoff(q, "a/p", 2000); /* 2000 + 2000: the window starting at 4000 */
    CHECK_STR_EQ(pop_key(q, 4999), "(none)");
    CHECK_STR_EQ(pop_key(q, 5000), "a/p");
    serve_queue_backoff(q, "a/p", 5999); /* 5999 + 4000: 9000 to 9999, so until 10000 */
    CHECK_STR_EQ(pop_key(q, 9999), "(none)");
    CHECK_STR_EQ(pop_key(q, 10000), "a/p");
    CHECK_INT_EQ(serve_queue_get(q, "a/p")->attempts, 3);
    serve_queue_free(q, NULL);
}

static void queue_backoff_counts_errors_apart(void)
{
    struct serve_queue *q = queue_pop_backoff();
    int i;

    /* kube-scheduler: three rejections, then an error backs off by the one error (1 s), two
     * errors in a row by 2 s; the next rejection counts the rejections again (4: 8 s) */
    serve_queue_add(q, "a/p", 0, NULL, 0, NULL);
    for (i = 0; i < 3; i++) {
        pop_key(q, 0);
        serve_queue_unschedulable(q, "a/p", 0);
        serve_queue_move_all(q, 100000);
    }
    CHECK_STR_EQ(pop_key(q, 100000), "a/p");
    serve_queue_backoff(q, "a/p", 100000);
    CHECK_INT_EQ(serve_queue_next_ms(q, 100000), 2000); /* 1 s, then the next window */
    CHECK_STR_EQ(pop_key(q, 102000), "a/p");
    serve_queue_backoff(q, "a/p", 102000);
    CHECK_INT_EQ(serve_queue_next_ms(q, 102000), 3000);
    CHECK_STR_EQ(pop_key(q, 105000), "a/p");
    serve_queue_unschedulable(q, "a/p", 105000);
    CHECK_INT_EQ(serve_queue_move_all(q, 105000), 1);
    CHECK_INT_EQ(serve_queue_count(q, SERVE_QUEUE_BACKOFF), 1);
    /* backing off 8 s (to 114000) but moved by an event: popped at once, nothing else to do
     * (kube-scheduler's PopFromBackoffQ) */
    CHECK_INT_EQ(serve_queue_next_ms(q, 105000), 0);
    CHECK_STR_EQ(pop_key(q, 105000), "a/p");
    CHECK_INT_EQ(serve_queue_get(q, "a/p")->attempts, 6);
    serve_queue_free(q, NULL);
}

static void queue_unschedulable_moves_on_event(void)
{
    struct serve_queue *q = queue_pop_backoff();

    serve_queue_add(q, "a/x", 0, NULL, 0, NULL);
    serve_queue_add(q, "a/y", 0, NULL, 0, NULL);
    pop_key(q, 0);
    pop_key(q, 0);
    serve_queue_unschedulable(q, "a/x", 0);
    serve_queue_unschedulable(q, "a/y", 0);
    CHECK_INT_EQ(serve_queue_count(q, SERVE_QUEUE_UNSCHEDULABLE), 2);
    /* an unschedulable pod is not retried just because its backoff ended */
    CHECK_STR_EQ(pop_key(q, 5000), "(none)");
    /* a node event during the backoff sends it to the backoff heap, not straight back */
    CHECK_INT_EQ(serve_queue_move_all(q, 500), 2);
    CHECK_INT_EQ(serve_queue_count(q, SERVE_QUEUE_BACKOFF), 2);
    CHECK_INT_EQ(serve_queue_count(q, SERVE_QUEUE_ACTIVE), 0);
    /* ... from which a pod is popped when none is active (PopFromBackoffQ) */
    CHECK_STR_EQ(pop_key(q, 600), "a/x");
    CHECK_INT_EQ(serve_queue_count(q, SERVE_QUEUE_BACKOFF), 1);
    serve_queue_unschedulable(q, "a/x", 2000); /* 2 s: until 5000 */
    CHECK_INT_EQ(serve_queue_move_all(q, 4999), 1);
    CHECK_INT_EQ(serve_queue_count(q, SERVE_QUEUE_BACKOFF), 2);
    /* a/y's backoff (until 2000) is over: it goes active, ahead of a/x backing off */
    CHECK_STR_EQ(pop_key(q, 4999), "a/y");
    serve_queue_unschedulable(q, "a/y", 5000); /* 2 s: until 8000 */
    /* after its backoff, a move goes straight to active */
    CHECK_INT_EQ(serve_queue_move_all(q, 8000), 1);
    CHECK_INT_EQ(serve_queue_count(q, SERVE_QUEUE_ACTIVE), 1);
    CHECK_INT_EQ(serve_queue_count(q, SERVE_QUEUE_BACKOFF), 1);
    serve_queue_free(q, NULL);
}

static void queue_backoff_windows_follow_the_wall_clock(void)
{
    /* the wall clock is 400 ms ahead: windows start at 600, 1600, 2600, ... of now_ms */
    struct serve_queue_opts o = {0, 0, 0, NULL, 400, true};
    struct serve_queue *q = serve_queue_new(&o);

    serve_queue_add(q, "a/err", 0, NULL, 0, NULL);
    serve_queue_add(q, "a/low", 0, NULL, 0, NULL);
    serve_queue_add(q, "a/high", 5, NULL, 0, NULL);
    pop_key(q, 0);
    pop_key(q, 0);
    pop_key(q, 0);
    serve_queue_backoff(q, "a/err", 100);         /* 1100: window 600, until 1600 */
    serve_queue_unschedulable(q, "a/low", 200);   /* 1200: until 1600 */
    serve_queue_unschedulable(q, "a/high", 1000); /* 2000: window 1600, until 2600 */
    CHECK_INT_EQ(serve_queue_get(q, "a/err")->attempts, 1);
    CHECK_INT_EQ(serve_queue_move_all(q, 1100), 2);
    /* the error backoff is never popped early; the moved ones are, earliest window first */
    CHECK_STR_EQ(pop_key(q, 1100), "a/low");
    CHECK_STR_EQ(pop_key(q, 1100), "a/high");
    CHECK_STR_EQ(pop_key(q, 1599), "(none)");
    CHECK_INT_EQ(serve_queue_next_ms(q, 1100), 500);
    CHECK_STR_EQ(pop_key(q, 1600), "a/err");
    serve_queue_free(q, NULL);
}

static void queue_backoff_heap_orders_a_window_by_priority(void)
{
    struct serve_queue *q = queue_pop_backoff();

    serve_queue_add(q, "a/first", 0, NULL, 0, NULL);
    serve_queue_add(q, "a/second", 7, NULL, 0, NULL);
    pop_key(q, 0);
    pop_key(q, 0);
    serve_queue_unschedulable(q, "a/first", 100);  /* until 2000 */
    serve_queue_unschedulable(q, "a/second", 900); /* until 2000 too: same window */
    CHECK_INT_EQ(serve_queue_move_all(q, 1000), 2);
    /* kube-scheduler's lessBackoffCompletedWithPriority: in one window, as the active queue */
    CHECK_STR_EQ(pop_key(q, 1000), "a/second");
    CHECK_STR_EQ(pop_key(q, 1000), "a/first");
    serve_queue_free(q, NULL);
}

static void queue_equal_priorities_by_last_return(void)
{
    struct serve_queue *q = queue_pop_backoff();

    /* kube-scheduler's PrioritySort: equal priorities by QueuedPodInfo.Timestamp, the time
     * the pod was added or last came back from an attempt, not the first add */
    serve_queue_add(q, "a/early", 0, NULL, 0, NULL);
    serve_queue_add(q, "a/late", 0, NULL, 10, NULL);
    CHECK_STR_EQ(pop_key(q, 20), "a/early");
    CHECK_STR_EQ(pop_key(q, 20), "a/late");
    serve_queue_unschedulable(q, "a/late", 30);
    serve_queue_unschedulable(q, "a/early", 40);
    CHECK_INT_EQ(serve_queue_move_all(q, 100000), 2);
    CHECK_STR_EQ(pop_key(q, 100000), "a/late");
    CHECK_STR_EQ(pop_key(q, 100000), "a/early");
    serve_queue_free(q, NULL);
}

static void queue_moved_pods_wait_without_pop_backoff(void)
{
    struct serve_queue *q = serve_queue_new(NULL); /* (PopFromBackoffQ off: serve's default) */

    serve_queue_add(q, "a/x", 0, NULL, 0, NULL);
    pop_key(q, 0);
    serve_queue_unschedulable(q, "a/x", 100); /* until 2000 */
    CHECK_INT_EQ(serve_queue_move_all(q, 500), 1);
    CHECK_INT_EQ(serve_queue_next_ms(q, 500), 1500);
    CHECK_STR_EQ(pop_key(q, 1999), "(none)");
    CHECK_STR_EQ(pop_key(q, 2000), "a/x");
    serve_queue_free(q, NULL);
}

static void queue_flush_moves_old_pods(void)
{
    struct serve_queue_opts o = {0, 0, 60000, NULL, 0, true};
    struct serve_queue *q = serve_queue_new(&o);

    serve_queue_add(q, "a/old", 0, NULL, 0, NULL);
    serve_queue_add(q, "a/new", 0, NULL, 0, NULL);
    pop_key(q, 0);
    pop_key(q, 0);
    serve_queue_unschedulable(q, "a/old", 0);
    serve_queue_unschedulable(q, "a/new", 30000);
    CHECK_INT_EQ(serve_queue_next_ms(q, 50000), -1); /* (the flush is the caller's) */
    /* kube-scheduler's flush moves the pods parked for longer than the duration, strictly */
    CHECK_INT_EQ(serve_queue_flush(q, 60000), 0);
    CHECK_INT_EQ(serve_queue_flush(q, 60001), 1);
    CHECK_STR_EQ(pop_key(q, 60001), "a/old");
    CHECK_INT_EQ(serve_queue_count(q, SERVE_QUEUE_UNSCHEDULABLE), 1);
    serve_queue_free(q, NULL);
}

static void queue_unschedulable_list_keeps_age_order(void)
{
    struct serve_queue_opts o = {0, 0, 1000, NULL, 0, true};
    struct serve_queue *q = serve_queue_new(&o);
    const char *keys[] = {"a/0", "a/1", "a/2", "a/3"};
    int i;

    for (i = 0; i < 4; i++) {
        serve_queue_add(q, keys[i], 0, NULL, 0, NULL);
        pop_key(q, 0);
        serve_queue_unschedulable(q, keys[i], i * 100);
    }
    serve_queue_delete(q, "a/1");                  /* from the middle */
    serve_queue_add(q, "a/0", 0, NULL, 350, NULL); /* updated: leaves the list (backoff) */
    CHECK_INT_EQ(serve_queue_count(q, SERVE_QUEUE_UNSCHEDULABLE), 2);
    CHECK_INT_EQ(serve_queue_next_ms(q, 350), 0); /* a/0 can be popped */
    CHECK_STR_EQ(pop_key(q, 350), "a/0");
    CHECK_INT_EQ(serve_queue_next_ms(q, 350), -1); /* parked pods wait for the flush */
    CHECK_INT_EQ(serve_queue_flush(q, 1250), 1);   /* a/2, parked at 200 */
    CHECK_INT_EQ(serve_queue_count(q, SERVE_QUEUE_UNSCHEDULABLE), 1);
    serve_queue_unschedulable(q, "a/0", 1300);   /* re-parked at the tail */
    CHECK_INT_EQ(serve_queue_flush(q, 1301), 1); /* only a/3 (parked at 300) */
    CHECK_INT_EQ(serve_queue_count(q, SERVE_QUEUE_UNSCHEDULABLE), 1);
    CHECK_INT_EQ(serve_queue_move_all(q, 5000), 1);
    CHECK_INT_EQ(serve_queue_count(q, SERVE_QUEUE_UNSCHEDULABLE), 0);
    serve_queue_free(q, NULL);
}

static bool is_marked(const void *data)
{
    return data && *(const int *)data;
}

static void queue_move_if_moves_only_the_chosen(void)
{
    struct serve_queue *q = queue_pop_backoff();
    int yes = 1, no = 0;

    serve_queue_add(q, "a/x", 0, &no, 0, NULL);
    serve_queue_add(q, "a/y", 0, &yes, 0, NULL);
    serve_queue_add(q, "a/z", 0, &yes, 0, NULL);
    pop_key(q, 0);
    pop_key(q, 0);
    pop_key(q, 0);
    serve_queue_unschedulable(q, "a/x", 0);
    serve_queue_unschedulable(q, "a/y", 0);
    serve_queue_unschedulable(q, "a/z", 5000);
    /* y's backoff is over (active), z's is not (backoff heap); x stays parked */
    CHECK_INT_EQ(serve_queue_move_if(q, 2000, is_marked), 2);
    CHECK_INT_EQ(serve_queue_count(q, SERVE_QUEUE_UNSCHEDULABLE), 1);
    CHECK_INT_EQ(serve_queue_count(q, SERVE_QUEUE_ACTIVE), 1);
    CHECK_INT_EQ(serve_queue_count(q, SERVE_QUEUE_BACKOFF), 1);
    CHECK_STR_EQ(pop_key(q, 2000), "a/y");
    CHECK_INT_EQ(serve_queue_move_if(q, 2000, is_marked), 0);
    CHECK_INT_EQ(serve_queue_move_all(q, 2000), 1);
    serve_queue_free(q, NULL);
}

static void queue_update_and_delete(void)
{
    struct serve_queue *q = queue_pop_backoff();
    int a = 1, b = 2;
    void *old = NULL;

    serve_queue_add(q, "a/p", 0, &a, 0, NULL);
    serve_queue_add(q, "a/q", 5, NULL, 0, NULL);
    /* raising p's priority reorders the heap */
    CHECK_INT_EQ(serve_queue_add(q, "a/p", 10, &b, 1, &old), 0);
    CHECK(old == &a);
    CHECK(serve_queue_get(q, "a/p")->data == &b);
    CHECK_STR_EQ(pop_key(q, 1), "a/p");
    /* an update of an in-flight pod keeps it in flight */
    serve_queue_add(q, "a/p", 10, &a, 1, NULL);
    CHECK_INT_EQ(serve_queue_count(q, SERVE_QUEUE_IN_FLIGHT), 1);
    CHECK(serve_queue_delete(q, "a/p") == &a);
    CHECK(serve_queue_delete(q, "a/p") == NULL);
    CHECK_INT_EQ(serve_queue_count(q, SERVE_QUEUE_IN_FLIGHT), 0);
    /* an unschedulable pod that is updated goes back to active */
    pop_key(q, 1);
    serve_queue_unschedulable(q, "a/q", 1);
    serve_queue_add(q, "a/q", 5, NULL, 2, NULL);
    CHECK_STR_EQ(pop_key(q, 2), "a/q");
    CHECK(serve_queue_done(q, "a/q") == NULL);
    CHECK_INT_EQ(serve_queue_next_ms(q, 2), -1);
    serve_queue_free(q, NULL);
}

static void queue_many_pods_keep_order(void)
{
    struct serve_queue *q = queue_pop_backoff();
    char key[32];
    int i, prev_prio = 1 << 30, ok = 1, n = 0;
    const struct serve_queue_item *it;

    for (i = 0; i < 5000; i++) {
        snprintf(key, sizeof(key), "ns/p%d", i);
        serve_queue_add(q, key, (i * 7919) % 13, NULL, i, NULL);
    }
    for (i = 0; i < 5000; i += 3) {
        snprintf(key, sizeof(key), "ns/p%d", i);
        serve_queue_delete(q, key);
    }
    while ((it = serve_queue_pop(q, 0))) {
        if (it->priority > prev_prio)
            ok = 0;
        prev_prio = it->priority;
        serve_queue_done(q, it->key);
        n++;
    }
    CHECK(ok);
    CHECK_INT_EQ(n, 5000 - 1667);
    serve_queue_free(q, NULL);
}

/* same_when_equal: the data are ints; equal ints are "the same pod" */
static bool same_when_equal(const void *a, const void *b)
{
    return *(const int *)a == *(const int *)b;
}

static void queue_status_only_update_keeps_pod_parked(void)
{
    static int v1 = 1, v1again = 1, v2 = 2;
    struct serve_queue_opts o = {0, 0, 0, same_when_equal, 0, true};
    struct serve_queue *q = serve_queue_new(&o);
    void *old;

    serve_queue_add(q, "a/p", 0, &v1, 0, NULL);
    CHECK_STR_EQ(pop_key(q, 0), "a/p");
    serve_queue_unschedulable(q, "a/p", 10);
    /* our own status write: a new version that changes nothing scheduling looks at */
    serve_queue_add(q, "a/p", 0, &v1again, 20, &old);
    CHECK(old == &v1 && serve_queue_get(q, "a/p")->data == &v1again);
    CHECK_INT_EQ(serve_queue_count(q, SERVE_QUEUE_UNSCHEDULABLE), 1);
    /* a real change moves it back, after its backoff (kube-scheduler's queueAfterBackoff),
     * and as nothing else is active it is popped at once */
    serve_queue_add(q, "a/p", 0, &v2, 30, &old);
    CHECK_INT_EQ(serve_queue_count(q, SERVE_QUEUE_BACKOFF), 1);
    CHECK_STR_EQ(pop_key(q, 30), "a/p");
    serve_queue_free(q, NULL);
}

static void queue_gated_pods_wait_for_an_update(void)
{
    struct serve_queue *q = queue_pop_backoff();
    const struct serve_queue_item *it;

    serve_queue_add(q, "a/g", 0, NULL, 100, NULL);
    it = serve_queue_pop(q, 100);
    CHECK(it && it->first_active_ms == 100);
    serve_queue_gated(q, "a/g");
    CHECK_INT_EQ(serve_queue_count(q, SERVE_QUEUE_GATED), 1);
    CHECK_INT_EQ(serve_queue_get(q, "a/g")->attempts, 0);
    CHECK_INT_EQ(serve_queue_get(q, "a/g")->first_active_ms, -1);
    /* neither cluster events nor the flush move it, and no deadline wakes the loop for it */
    CHECK_INT_EQ(serve_queue_move_all(q, 200), 0);
    CHECK_INT_EQ(serve_queue_flush(q, 10000000), 0);
    CHECK_INT_EQ(serve_queue_next_ms(q, 200), -1);
    /* the update that removes its gates: active, its SLI clock starting now */
    serve_queue_add(q, "a/g", 0, NULL, 500, NULL);
    CHECK_INT_EQ(serve_queue_count(q, SERVE_QUEUE_GATED), 0);
    it = serve_queue_pop(q, 600);
    CHECK(it && it->first_active_ms == 500 && it->added_ms == 100);
    serve_queue_free(q, NULL);
}

static void queue_flush_marks_flushed_pods(void)
{
    struct serve_queue *q = queue_pop_backoff();
    const struct serve_queue_item *it;

    serve_queue_add(q, "a/p", 0, NULL, 0, NULL);
    serve_queue_pop(q, 0);
    serve_queue_unschedulable(q, "a/p", 0);
    CHECK_INT_EQ(serve_queue_flush(q, 300001), 1);
    it = serve_queue_pop(q, 300001);
    CHECK(it && it->flushed);
    serve_queue_unschedulable(q, "a/p", 300000);
    CHECK(!serve_queue_get(q, "a/p")->flushed);
    CHECK_INT_EQ(serve_queue_move_all(q, 400000), 1);
    it = serve_queue_pop(q, 400000);
    CHECK(it && !it->flushed);
    serve_queue_free(q, NULL);
}

static void keymap_put_get_del(void)
{
    struct keymap m = KEYMAP_INIT;
    static char keys[2000][16];
    int i, ok = 1;

    for (i = 0; i < 2000; i++) {
        snprintf(keys[i], sizeof(keys[i]), "k%d", i);
        CHECK_INT_EQ(keymap_put(&m, keys[i], keys[i], NULL), 0);
    }
    for (i = 0; i < 2000; i += 2)
        if (keymap_del(&m, keys[i]) != keys[i])
            ok = 0;
    for (i = 0; i < 2000; i++)
        if (keymap_get(&m, keys[i]) != (i % 2 ? keys[i] : NULL))
            ok = 0;
    CHECK(ok);
    CHECK_INT_EQ(m.len, 1000);
    keymap_release(&m);
}

static const struct test_case cases[] = {
    {"orders by priority then arrival", queue_orders_by_priority_then_arrival},
    {"backoff doubles to 10 s", queue_backoff_doubles_to_cap},
    {"backoff pods wait their time", queue_backoff_waits},
    {"backoff counts errors in a row apart from rejections", queue_backoff_counts_errors_apart},
    {"unschedulable pods move on cluster events", queue_unschedulable_moves_on_event},
    {"equal priorities by when they last came back", queue_equal_priorities_by_last_return},
    {"without PopFromBackoffQ a moved pod waits out its backoff",
     queue_moved_pods_wait_without_pop_backoff},
    {"backoff windows are whole seconds of the wall clock",
     queue_backoff_windows_follow_the_wall_clock},
    {"the backoff heap orders one window by priority",
     queue_backoff_heap_orders_a_window_by_priority},
    {"flush moves pods parked too long", queue_flush_moves_old_pods},
    {"unschedulable list keeps age order", queue_unschedulable_list_keeps_age_order},
    {"move_if moves only the pods the predicate picks", queue_move_if_moves_only_the_chosen},
    {"update and delete", queue_update_and_delete},
    {"5000 pods keep priority order", queue_many_pods_keep_order},
    {"keymap put/get/del", keymap_put_get_del},
    {"a status-only update keeps an unschedulable pod parked",
     queue_status_only_update_keeps_pod_parked},
    {"gated pods wait for an update", queue_gated_pods_wait_for_an_update},
    {"flush marks the pods it moves", queue_flush_marks_flushed_pods},
};

TEST_SUITE(serve_queue, cases)

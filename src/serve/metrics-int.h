/* metrics-int.h - the updates of serve's metrics (metrics.h) that only serve's own files make:
 * a sample into a histogram, a counter or a gauge moved, under the metrics' mutex. */
#ifndef SERVE_METRICS_INT_H
#define SERVE_METRICS_INT_H

#include <stdint.h>

struct serve_histogram;
struct serve_metrics;

/* serve_histogram_observe adds one sample to h; the caller holds the metrics' mutex. */
void serve_histogram_observe(struct serve_histogram *h, double v);

/* serve_metrics_add adds delta to a counter of m, serve_metrics_set sets a gauge of m; each
 * takes the mutex. */
void serve_metrics_add(struct serve_metrics *m, uint64_t *counter, uint64_t delta);
void serve_metrics_set(struct serve_metrics *m, uint64_t *gauge, uint64_t value);

#endif

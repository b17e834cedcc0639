package dev.dedup.consumer;

import io.prometheus.client.CollectorRegistry;
import io.prometheus.client.Counter;
import io.prometheus.client.Gauge;
import io.prometheus.client.Histogram;

/**
 * The library's metrics under their exact names and labels (names/dedup.ts METRIC_NAMES and
 * METRIC_LABELS), each label value at 0 from the start (the contract's zero series), and
 * {@code dedup_handler_info} = 1 describing the handler.
 */
final class Metrics {
  /** As CHECK_DURATION_BUCKETS in names/buckets.ts. */
  static final double[] CHECK_BUCKETS = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5};
  /** As HANDLER_TIME_BUCKETS in names/buckets.ts. */
  static final double[] HANDLER_BUCKETS = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30, 60, 120, 300};
  static final double SLOW_CHECK_SECONDS = 0.05;

  private final Config c;
  final Counter deduplicated;
  final Counter processed;
  final Histogram checkDuration;
  final Counter errors;
  final Counter inProgress;
  final Counter released;
  final Counter leaseLost;
  final Counter poisoned;
  final Counter byCause;
  final Histogram handlerTime;
  final Counter conflicts;
  final Counter unchecked;
  final Gauge lastCheck;
  final Gauge lastError;
  final Gauge lastSlowCheck;
  final Gauge info;
  final HotUuids hot;

  Metrics(Config c, CollectorRegistry r) {
    this.c = c;
    String[] h = {"service", "topic", "handler"};
    deduplicated = counter(r, "messages_deduplicated_total", "Deliveries swallowed as repeats (once per delivery).", h);
    processed = counter(r, "messages_processed_total", "Deliveries by final result (once per delivery).", "service", "topic", "handler", "result");
    checkDuration = Histogram.build().name("deduplication_check_duration_seconds").help("Duration of one claim round trip to Redis.")
        .labelNames("service").buckets(CHECK_BUCKETS).register(r);
    errors = counter(r, "deduplication_errors_total", "Failed store calls by reason.", "service", "reason");
    inProgress = counter(r, "deduplication_in_progress_total", "Attempts that met another consumer's lease.", h);
    released = counter(r, "deduplication_released_total", "Keys released after a failed attempt.", h);
    leaseLost = counter(r, "deduplication_lease_lost_total", "Successes whose lease another consumer had taken over.", h);
    poisoned = counter(r, "messages_poisoned_total", "Messages sent to the DLQ, by error class.", "service", "topic", "handler", "reason_poisoned");
    byCause = counter(r, "messages_duplicates_by_cause_total", "Swallowed copies by cause.", "service", "topic", "handler", "cause");
    handlerTime = Histogram.build().name("handler_execution_time_seconds").help("One handler attempt, the handler alone.")
        .labelNames("service", "handler", "success").buckets(HANDLER_BUCKETS).register(r);
    conflicts = counter(r, "deduplication_payload_conflicts_total", "Copies of a done UUID with another payload.", "service", "handler", "difference");
    unchecked = counter(r, "deduplication_unchecked_total", "Handler runs fail-open let through without a check.", "service", "handler", "reason");
    lastCheck = gauge(r, "deduplication_last_check_timestamp_seconds", "Unix seconds of the last claim round trip.");
    lastError = gauge(r, "deduplication_last_error_timestamp_seconds", "Unix seconds of the last failed store call.");
    lastSlowCheck = gauge(r, "deduplication_last_slow_check_timestamp_seconds", "Unix seconds of the last check slower than 50 ms.");
    info = Gauge.build().name("dedup_handler_info").help("The handler's declared dedup setup (docs/CONTRACT.md); always 1.")
        .labelNames("service", "handler", "topic", "group", "prefix", "ttl_ms", "ttl_class", "lease_ms", "timeout_ms", "marking",
            "failure_mode", "stack", "runtime", "contract", "repository", "heartbeat", "side_effects", "mode")
        .register(r);
    hot = new HotUuids(c).register(r);
    zeroSeries();
  }

  private static Counter counter(CollectorRegistry r, String name, String help, String... labels) {
    return Counter.build().name(name).help(help).labelNames(labels).register(r);
  }

  private static Gauge gauge(CollectorRegistry r, String name, String help) {
    return Gauge.build().name(name).help(help).labelNames("service", "handler").register(r);
  }

  /** Every label value of the handler at 0, so that the first event is an increase from 0. */
  private void zeroSeries() {
    String s = c.service(), t = c.topic(), h = c.handler();
    deduplicated.labels(s, t, h);
    checkDuration.labels(s);
    for (String result : Contract.PROCESSED_RESULTS) processed.labels(s, t, h, result);
    for (String reason : Contract.ERROR_REASONS) {
      errors.labels(s, reason);
      unchecked.labels(s, h, reason);
    }
    inProgress.labels(s, t, h);
    released.labels(s, t, h);
    leaseLost.labels(s, t, h);
    for (String cls : Contract.POISON_CLASSES) poisoned.labels(s, t, h, cls);
    for (String cause : Contract.CAUSES) byCause.labels(s, t, h, cause);
    handlerTime.labels(s, h, "true");
    handlerTime.labels(s, h, "false");
    for (String difference : Contract.DIFFERENCES) conflicts.labels(s, h, difference);
    info.labels(s, h, t, c.group(), c.prefix(), Long.toString(c.ttlMs()), c.ttlClass(), Long.toString(c.leaseMs()),
        Integer.toString(c.timeoutMs()), "lease", c.failureMode(), Contract.STACK, "jvm", Contract.VERSION,
        "redis", Contract.HEARTBEAT, Contract.SIDE_EFFECTS, "redis").set(1);
  }

  /** One claim round trip that Redis answered, started at {@code startNanos}. */
  void checked(long startNanos, long startMillis) {
    double seconds = (System.nanoTime() - startNanos) / 1e9;
    checkDuration.labels(c.service()).observe(seconds);
    lastCheck.labels(c.service(), c.handler()).set(startMillis / 1000.0);
    if (seconds > SLOW_CHECK_SECONDS) lastSlowCheck.labels(c.service(), c.handler()).set(System.currentTimeMillis() / 1000.0);
  }

  /** A failed store call of class {@code reason}. */
  void error(String reason) {
    errors.labels(c.service(), reason).inc();
    lastError.labels(c.service(), c.handler()).set(System.currentTimeMillis() / 1000.0);
  }

  void result(String result) {
    processed.labels(c.service(), c.topic(), c.handler(), result).inc();
  }
}

package dev.dedup.consumer;

import io.prometheus.client.Collector;
import io.prometheus.client.GaugeMetricFamily;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The handler's hot UUIDs as the library exports them (server/dedup/hot-keys.ts, hot-keys-gauge.ts):
 * a space-saving sketch of the swallowed copies per 5-minute window, the current and the previous
 * window merged at scrape; {@code dedup_hot_uuid_copies{service,handler,topic,uuid}} for the top 10
 * and {@code dedup_hot_uuid_error_bound{service,handler}}, so the dashboard adds every process's.
 */
final class HotUuids extends Collector {
  static final int TOP_K = 10;
  static final int CAPACITY = 20;
  static final long WINDOW_MS = 300_000;

  private final Config c;
  private Map<String, long[]> current = new HashMap<>();
  private Map<String, long[]> previous = new HashMap<>();
  private long windowStart = System.currentTimeMillis();

  HotUuids(Config c) {
    this.c = c;
  }

  /** One swallowed copy of {@code uuid}. */
  synchronized void offer(String uuid) {
    rotate();
    long[] e = current.get(uuid);
    if (e != null) {
      e[0]++;
      return;
    }
    if (current.size() < CAPACITY) {
      current.put(uuid, new long[] {1, 0});
      return;
    }
    Map.Entry<String, long[]> min = null;
    for (Map.Entry<String, long[]> x : current.entrySet()) if (min == null || x.getValue()[0] < min.getValue()[0]) min = x;
    long floor = min.getValue()[0];
    current.remove(min.getKey());
    current.put(uuid, new long[] {floor + 1, floor});
  }

  private void rotate() {
    long now = System.currentTimeMillis();
    if (now - windowStart < WINDOW_MS) return;
    previous = now - windowStart < 2 * WINDOW_MS ? current : new HashMap<>();
    current = new HashMap<>();
    windowStart = now - (now - windowStart) % WINDOW_MS;
  }

  @Override
  public synchronized List<MetricFamilySamples> collect() {
    rotate();
    Map<String, long[]> merged = new HashMap<>();
    long total = 0;
    for (Map<String, long[]> w : List.of(previous, current)) {
      for (Map.Entry<String, long[]> x : w.entrySet()) {
        long[] m = merged.computeIfAbsent(x.getKey(), k -> new long[2]);
        m[0] += x.getValue()[0];
        m[1] += x.getValue()[1];
        total += x.getValue()[0];
      }
    }
    List<Map.Entry<String, long[]>> rows = new ArrayList<>(merged.entrySet());
    rows.sort((a, b) -> Long.compare(b.getValue()[0], a.getValue()[0]));
    GaugeMetricFamily copies = new GaugeMetricFamily("dedup_hot_uuid_copies",
        "Swallowed copies of each of a handler's top " + TOP_K + " UUIDs over the current and the previous window (an upper bound)",
        List.of("service", "handler", "topic", "uuid"));
    long bound = 0;
    for (int i = 0; i < rows.size() && i < TOP_K; i++) {
      copies.addMetric(List.of(c.service(), c.handler(), c.topic(), rows.get(i).getKey()), rows.get(i).getValue()[0]);
      bound = Math.max(bound, rows.get(i).getValue()[1]);
    }
    if (rows.size() > TOP_K) bound = Math.max(bound, rows.get(TOP_K).getValue()[0]);
    if (current.size() >= CAPACITY || previous.size() >= CAPACITY) bound = Math.max(bound, (total + CAPACITY - 1) / CAPACITY);
    GaugeMetricFamily errorBound = new GaugeMetricFamily("dedup_hot_uuid_error_bound",
        "How many copies a UUID not listed may have had, and how much a listed count may be over", List.of("service", "handler"));
    errorBound.addMetric(List.of(c.service(), c.handler()), bound);
    return List.of(copies, errorBound);
  }
}

package dev.dedup.consumer;

import io.prometheus.client.CollectorRegistry;
import io.prometheus.client.exporter.HTTPServer;
import io.prometheus.client.hotspot.DefaultExports;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The Java reference consumer of docs/CONTRACT.md: consumes TOPIC as GROUP, dedups each record
 * by its Watermill UUID in Redis (claim, handler, done or release), sends what fails for good to
 * {@code <topic>.dlq} with the poison headers, commits offsets after processing, and serves the
 * contract's metrics with the JVM's own on {@code http://127.0.0.1:METRICS_PORT/metrics}.
 */
public final class Main {
  private Main() {}

  public static void main(String[] args) throws Exception {
    Config c;
    try {
      c = Config.fromEnv(System.getenv());
    } catch (IllegalArgumentException e) {
      System.err.println("[java-consumer] " + e.getMessage());
      System.exit(1);
      return;
    }
    CollectorRegistry registry = new CollectorRegistry(true);
    DefaultExports.register(registry);
    Metrics metrics = new Metrics(c, registry);
    HTTPServer http = new HTTPServer.Builder().withHostname(System.getenv().getOrDefault("METRICS_HOST", "127.0.0.1"))
        .withPort(c.metricsPort()).withRegistry(registry).build();
    try (DedupStore store = new DedupStore(c.redisUrl(), c.timeoutMs());
        KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps(c));
        KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerProps(c))) {
      Processor p = new Processor(c, store, metrics, (rec, reason, cls) -> sendToDlq(producer, c, rec, reason, cls));
      Thread main = Thread.currentThread();
      Runtime.getRuntime().addShutdownHook(new Thread(() -> {
        consumer.wakeup();
        try {
          main.join(10_000);
        } catch (InterruptedException ignored) {
          // exiting anyway
        }
      }));
      System.out.println("[java-consumer] metrics on :" + http.getPort() + ", consuming " + c.topic() + " as " + c.group() + " (" + c.prefix() + ")");
      consumer.subscribe(List.of(c.topic()), new ConsumerRebalanceListener() {
        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> parts) {}

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> parts) {
          System.out.println("[java-consumer] assigned " + parts.size() + " partition(s) of " + c.topic());
        }
      });
      run(consumer, p);
    } catch (WakeupException e) {
      // SIGTERM: the consumer closes (leaves its group) in try-with-resources.
    } finally {
      http.close();
      System.out.println("[java-consumer] stopped");
    }
  }

  /** Polls, processes in order, commits what was settled; a record not settled is read again after a pause. */
  private static void run(KafkaConsumer<byte[], byte[]> consumer, Processor p) throws InterruptedException {
    while (true) {
      Map<TopicPartition, OffsetAndMetadata> settled = new HashMap<>();
      Set<TopicPartition> held = new HashSet<>();
      for (ConsumerRecord<byte[], byte[]> rec : consumer.poll(Duration.ofMillis(200))) {
        TopicPartition tp = new TopicPartition(rec.topic(), rec.partition());
        if (held.contains(tp)) continue;
        if (p.process(rec)) settled.put(tp, new OffsetAndMetadata(rec.offset() + 1));
        else {
          held.add(tp);
          consumer.seek(tp, rec.offset());
        }
      }
      if (!settled.isEmpty()) consumer.commitSync(settled);
      if (!held.isEmpty()) Thread.sleep(500);
    }
  }

  /** The DLQ copy: the record's key, value and headers, plus the poison headers. */
  private static boolean sendToDlq(KafkaProducer<byte[], byte[]> producer, Config c, ConsumerRecord<byte[], byte[]> rec, String reason, String cls) {
    ProducerRecord<byte[], byte[]> out = new ProducerRecord<>(Contract.dlqTopic(rec.topic()), null, rec.key(), rec.value());
    for (Header h : rec.headers()) out.headers().add(h);
    put(out, Contract.REASON_POISONED, reason);
    put(out, Contract.TOPIC_POISONED, rec.topic());
    put(out, Contract.HANDLER_POISONED, c.handler());
    put(out, Contract.SUBSCRIBER_POISONED, c.subscriber());
    put(out, Contract.REASON_CLASS_POISONED, cls);
    try {
      producer.send(out).get();
      return true;
    } catch (Exception e) {
      System.err.println("[java-consumer] could not publish to " + out.topic() + ": " + e.getMessage() + "; the record is read again");
      return false;
    }
  }

  private static void put(ProducerRecord<byte[], byte[]> out, String name, String value) {
    out.headers().remove(name);
    out.headers().add(name, value.getBytes(StandardCharsets.UTF_8));
  }

  private static Properties consumerProps(Config c) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, c.brokers());
    p.put(ConsumerConfig.GROUP_ID_CONFIG, c.group());
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.CLIENT_ID_CONFIG, c.subscriber());
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    return p;
  }

  private static Properties producerProps(Config c) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, c.brokers());
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    return p;
  }
}

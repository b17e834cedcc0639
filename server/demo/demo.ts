/**
 * The live demo: the `notification` service consuming its topic (`DEMO_TOPIC`, default `demo.events`) with its three handlers, a
 * traffic publisher, the four switchable duplicate sources of spec §1 (each the real mechanism),
 * and store faults — what keeps the dashboard alive and lets a presenter provoke each panel.
 * Its parts: the replicas' lifecycle (./demo-lifecycle.ts), the traffic (./demo-traffic.ts) and
 * the store faults (./demo-faults.ts); this class starts and stops them and answers the API.
 */
import type { HandlerSetup } from "@/server/dedup";
import type { DemoFaults, DemoFaultsPatch, DemoSources, DemoSourcesPatch } from "@/lib/api/demo";
import { DEMO_PARTITIONS, demoHandlerSetups } from "@/server/notification/demo-handlers";
import { BackgroundDuplicates } from "./background-duplicates";
import { StoreFaults } from "./demo-faults";
import { DemoLifecycle } from "./demo-lifecycle";
import {
  initialSources,
  resolveDemoOptions,
  type DemoServiceOptions,
  type DemoSourcesState,
  type ResolvedDemoOptions,
} from "./demo-options";
import { DemoTraffic } from "./demo-traffic";

/** The live demo service. */
export class DemoService {
  private readonly o: ResolvedDemoOptions;
  private readonly sources: DemoSourcesState;
  private readonly faults: StoreFaults;
  private readonly replicas: DemoLifecycle;
  private readonly traffic: DemoTraffic;
  private readonly stopCtl = new AbortController();
  private readonly loops: Promise<void>[] = [];
  private running = false;

  constructor(options: DemoServiceOptions) {
    this.o = resolveDemoOptions(options);
    this.sources = initialSources(this.o.ratePerSec);
    this.faults = new StoreFaults(this.o.repository, this.o.redis);
    const bg = options.backgroundDuplicates ?? (options.transport.mode === "embedded" ? {} : false);
    const background = bg === false ? null : new BackgroundDuplicates(bg);
    this.replicas = new DemoLifecycle(this.o, this.faults.repository, this.sources, background, this.stopCtl.signal);
    this.traffic = new DemoTraffic(
      this.o.transport.publisher,
      this.o.topic,
      this.sources,
      background,
      this.stopCtl.signal,
    );
  }

  get mode(): "embedded" | "real" {
    return this.o.transport.mode;
  }

  /** Whether the consumer runs. */
  get isRunning(): boolean {
    return this.running;
  }

  /** The handlers' declared setups right now (extra replicas count; lint input for the dashboard). */
  handlerSetups(): HandlerSetup[] {
    return demoHandlerSetups(this.o.repository.kind, this.replicas.count);
  }

  /** Creates the topics if missing, starts the main replica, the traffic and the source loops. */
  async start(): Promise<void> {
    if (this.running) return;
    await this.o.transport.createTopics([
      { name: this.o.topic, partitions: DEMO_PARTITIONS },
      { name: this.o.dlqTopic, partitions: 1 },
    ]);
    await this.replicas.startMain();
    this.running = true;
    this.loops.push(this.traffic.run(), ...this.replicas.loops());
  }

  /** Graceful stop: loops end, replicas finish in-flight work, commit and leave. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.stopCtl.abort();
    this.traffic.stop();
    this.faults.stop();
    await Promise.allSettled(this.loops);
    await this.replicas.stopAll();
  }

  /** `GET /api/demo/sources`. */
  getSources(): DemoSources {
    return { mode: this.mode, running: this.running, ...structuredClone(this.sources) };
  }

  /** `PUT /api/demo/sources`: merges the patch (already validated). */
  setSources(p: DemoSourcesPatch): DemoSources {
    for (const k of Object.keys(p) as Array<keyof DemoSourcesPatch>) Object.assign(this.sources[k], p[k]);
    return this.getSources();
  }

  /** `GET /api/demo/faults`. */
  getFaults(): DemoFaults {
    return { mode: this.mode, running: this.running, ...this.faults.state() };
  }

  /**
   * `PUT /api/demo/faults`. `redisCutoffMs` > 0 disconnects the consumer's Redis client for that
   * long (real mode only: a RangeError otherwise); 0 reconnects now.
   */
  setFaults(p: DemoFaultsPatch): DemoFaults {
    this.faults.set(p);
    return this.getFaults();
  }
}

/**
 * A TCP proxy in front of the suite's redis-server that delays every reply by `delayMs` (order
 * kept): Redis latency raised without touching the server, switchable while clients stay connected.
 */
import { createServer, connect, type Server, type Socket } from "node:net";
import { closeServer, listenOnFreePort } from "@/server/testing/net";

/** A latency proxy listening on 127.0.0.1:`port`. */
export class LatencyProxy {
  delayMs = 0;
  private readonly sockets = new Set<Socket>();
  private constructor(
    readonly port: number,
    private readonly server: Server,
  ) {}

  /** Starts a proxy to 127.0.0.1:`targetPort`. */
  static async start(targetPort: number): Promise<LatencyProxy> {
    let self!: LatencyProxy;
    const server = createServer((client) => {
      const upstream = connect({ host: "127.0.0.1", port: targetPort });
      self.sockets.add(client);
      self.sockets.add(upstream);
      client.pipe(upstream);
      // Replies: each chunk leaves `delayMs` after it arrived, in arrival order.
      let chain = Promise.resolve();
      upstream.on("data", (chunk: Buffer) => {
        const due = Date.now() + self.delayMs;
        chain = chain.then(async () => {
          const wait = due - Date.now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
          if (!client.destroyed) client.write(chunk);
        });
      });
      const close = () => {
        client.destroy();
        upstream.destroy();
        self.sockets.delete(client);
        self.sockets.delete(upstream);
      };
      client.on("error", close).on("close", close);
      upstream.on("error", close).on("close", close);
    });
    self = new LatencyProxy(await listenOnFreePort(server), server);
    return self;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await closeServer(this.server);
  }
}

/**
 * A client connected on first use and shared by every caller: a caller that asks while the connect
 * runs waits for the same one, and a connect that failed is forgotten, so the next call tries again.
 */
export class SharedConnection<C> {
  private current: Promise<C> | null = null;

  /** `connect` makes a client and resolves with it once it is connected. */
  constructor(private readonly connect: () => Promise<C>) {}

  /** The connected client (connecting it on the first call, or after a failed connect or a `take`). */
  get(): Promise<C> {
    if (!this.current) {
      this.current = this.connect().catch((e: unknown) => {
        this.current = null;
        throw e;
      });
    }
    return this.current;
  }

  /** The client asked for so far (null if none), forgotten: the next `get` connects a new one. */
  take(): Promise<C> | null {
    const c = this.current;
    this.current = null;
    return c;
  }
}

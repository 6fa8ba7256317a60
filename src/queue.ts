/**
 * One Deno KV queue listener for the process (KV allows one), dispatching by message kind.
 * Delivery is at least once and unordered; every handler is idempotent.
 */
export type QueueHandler = (msg: Record<string, unknown>) => Promise<void>;

export class QueueDispatcher {
  readonly #handlers = new Map<string, QueueHandler>();
  readonly #running = new Set<Promise<void>>();
  #listening = false;
  #stopping = false;

  constructor(
    private readonly kv: Deno.Kv,
    private readonly onError: (e: unknown, kind: string) => void,
  ) {}

  on(kind: string, handler: QueueHandler): this {
    this.#handlers.set(kind, handler);
    return this;
  }

  listen(): void {
    if (this.#listening) return;
    this.#listening = true;
    this.kv.listenQueue(async (msg) => {
      const m = msg as Record<string, unknown>;
      const kind = String(m?.kind);
      const handler = this.#handlers.get(kind);
      if (!handler) return;
      // Shutting down: not acknowledged, so KV delivers it again to the next process.
      if (this.#stopping) throw new Error("queue stopping");
      const run = this.#handle(handler, m, kind);
      this.#running.add(run);
      try {
        await run;
      } finally {
        this.#running.delete(run);
      }
    });
  }

  /** Takes no new messages and waits for the ones being handled, so the KV can then close. */
  async stop(): Promise<void> {
    this.#stopping = true;
    await Promise.allSettled([...this.#running]);
  }

  async #handle(handler: QueueHandler, m: Record<string, unknown>, kind: string) {
    try {
      await handler(m);
    } catch (e) {
      this.onError(e, kind);
      // Rethrow so KV redelivers with backoff, and parks it in keysIfUndelivered at the end.
      throw e;
    }
  }
}

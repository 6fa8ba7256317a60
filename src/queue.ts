/**
 * One Deno KV queue listener for the process (KV allows one), dispatching by message kind.
 * Delivery is at least once and unordered; every handler is idempotent.
 *
 * A message delivered while the process stops is put back on the queue for the next process and
 * acknowledged. Throwing instead (to leave it unacknowledged) has Deno print "Exception in queue
 * handler" on every clean stop, and an unsettled handler is only redelivered after KV's 60 s
 * lease.
 */
const HAND_BACK_DELAY_MS = 1_000;

export type QueueHandler = (msg: Record<string, unknown>) => Promise<void>;

export class QueueDispatcher {
  readonly #handlers = new Map<string, QueueHandler>();
  readonly #running = new Set<Promise<void>>();
  #listening = false;
  #stopping = false;

  constructor(
    private readonly kv: Deno.Kv,
    private readonly onError: (e: unknown, kind: string) => void,
    private readonly onHandedBack: (kind: string) => void = () => {},
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
      if (this.#stopping) return this.#handBack(m, kind);
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

  /** Stopping: the message goes back on the queue (stop() waits for that) for the next process. */
  async #handBack(m: Record<string, unknown>, kind: string): Promise<void> {
    // Delayed, so this process (still listening until the KV closes) does not spin on it.
    const put = this.kv.enqueue(m, { delay: HAND_BACK_DELAY_MS }).then(() => true, () => false);
    const tracked = put.then(() => {});
    this.#running.add(tracked);
    const ok = await put;
    this.#running.delete(tracked);
    if (ok) return this.onHandedBack(kind);
    // The KV closed first: left unacknowledged, KV delivers it again once its lease runs out.
    return new Promise(() => {});
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

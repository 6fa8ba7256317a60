/**
 * Takes turns per key inside one process: calls with the same key run one after another, others
 * run freely. Writers of one Deno KV value (the log head, a rate-limit counter) would otherwise
 * collide and redo their work; versionstamp checks still settle races between processes.
 */
export class Turns {
  readonly #tails = new Map<string, Promise<void>>();

  run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const run = (this.#tails.get(key) ?? Promise.resolve()).then(fn);
    const tail = run.then(() => {}, () => {});
    this.#tails.set(key, tail);
    // Forget a key once its last turn is over, so the map holds only keys in use.
    tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return run;
  }

  /** Keys with a turn running or waiting (for tests). */
  get size(): number {
    return this.#tails.size;
  }
}

/**
 * How many vanity grinds may run at once: one per API key and `VANITY_CONCURRENCY` in the
 * process. A grind that runs out of time counts nothing against the day's builds (the issue asks
 * for that), so without this a key could keep the CPU busy with patterns it knows to be hopeless;
 * with it, one key holds at most one grind, and the process never runs more grinds than it has
 * cores to spare. Over either limit: 429 rate_limited, Retry-After 1.
 *
 * Per process (per isolate on Deno Deploy): the grind itself is per process, and so is the CPU it
 * uses.
 */
import { ApiError } from "../kernel/errors.ts";

export class VanityGate {
  #running = 0;
  readonly #keys = new Set<string>();
  constructor(readonly max: number) {}

  get running(): number {
    return this.#running;
  }

  /** Takes a place for `keyId`, or throws 429; the returned function gives it back. */
  enter(keyId: string): () => void {
    if (this.#keys.has(keyId)) {
      throw busy("this API key already has a vanity address being ground; wait for it");
    }
    if (this.#running >= this.max) {
      throw busy(`${this.max} vanity addresses are being ground right now; try again shortly`);
    }
    this.#keys.add(keyId);
    this.#running++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#keys.delete(keyId);
      this.#running--;
    };
  }
}

function busy(why: string): ApiError {
  return new ApiError("rate_limited", `Vanity grinding is busy: ${why}`, { vanity: why }, {
    "Retry-After": "1",
  });
}

const gates = new WeakMap<object, VanityGate>();

/** The gate of one service instance (keyed by its services object). */
export function vanityGateFor(owner: object, max: number): VanityGate {
  let gate = gates.get(owner);
  if (!gate) {
    gate = new VanityGate(max);
    gates.set(owner, gate);
  }
  return gate;
}

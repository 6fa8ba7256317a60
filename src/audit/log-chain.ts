/**
 * The hash chain check of a replay: positions in order, each event linked to the one before and
 * hashed as stored, and nothing past the head.
 */
import { chainHash, eventHashSync, GENESIS_HASH } from "../../events/hash.ts";
import { HEAD, type LogHead } from "../../events/keys.ts";
import { isLegacy, type ReadEvent, readLog, recordsAfter } from "../../events/log.ts";
import type { StoredEvent } from "../../events/types.ts";

export interface ChainProblem {
  position: number;
  problem: string;
}

export interface ChainVerification {
  ok: boolean;
  events: number;
  problems: ChainProblem[];
}

// Only for an event read without its stored body: the others need no copy of every event.
const withoutHash = ({ hash: _, ...rest }: StoredEvent): Omit<StoredEvent, "hash"> => rest;

/** Walks events in order and checks positions, links and hashes. */
export class ChainVerifier {
  #expected = 1;
  #prevHash = GENESIS_HASH;
  readonly problems: ChainProblem[] = [];
  count = 0;

  /** Checks the next event read (`body` null: no stored body, its canonical JSON is hashed). */
  checkRead(r: ReadEvent): void {
    const e = r.event;
    this.count++;
    if (e.position !== this.#expected) {
      this.problems.push({
        position: e.position,
        problem: e.position > this.#expected
          ? `events ${this.#expected}..${e.position - 1} are missing`
          : `position ${e.position} out of order`,
      });
    }
    if (e.prevHash !== this.#prevHash) {
      this.problems.push({
        position: e.position,
        problem: "prevHash does not link to the previous event",
      });
    }
    const hash = e.hash;
    const actual = r.body === null ? eventHashSync(withoutHash(e)) : chainHash(e.prevHash, r.body);
    if (actual !== hash) {
      this.problems.push({
        position: e.position,
        problem: "hash does not match the event's content",
      });
    }
    this.#expected = (typeof e.position === "number" ? e.position : this.#expected) + 1;
    this.#prevHash = hash;
  }

  finish(head: LogHead | null): ChainVerification {
    const h = head ?? { position: 0, hash: GENESIS_HASH };
    if (h.position !== this.#expected - 1 || h.hash !== this.#prevHash) {
      this.problems.push({
        position: h.position,
        problem: `log head (${h.position}) does not match the last event (${this.#expected - 1})`,
      });
    }
    return { ok: this.problems.length === 0, events: this.count, problems: this.problems };
  }
}

export async function verifyChain(kv: Deno.Kv): Promise<ChainVerification> {
  const v = new ChainVerifier();
  const head = (await kv.get<LogHead>(HEAD)).value;
  for await (const batch of readLog(kv, { head })) for (const r of batch) v.checkRead(r);
  const chain = v.finish(head);
  await checkNothingAfter(kv, head, chain);
  return chain;
}

/** Records past a head that has not moved since were put there by something else. */
export async function checkNothingAfter(
  kv: Deno.Kv,
  head: LogHead | null,
  chain: ChainVerification,
): Promise<void> {
  const at = await recordsAfter(kv, head?.position ?? 0, isLegacy(head));
  if (at === null) return;
  const now = (await kv.get<LogHead>(HEAD)).value;
  if ((now?.position ?? 0) === (head?.position ?? 0) && now?.hash === head?.hash) {
    chain.problems.push({
      position: at,
      problem: `events after the log head (${head?.position ?? 0})`,
    });
    chain.ok = false;
  }
}

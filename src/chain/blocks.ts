/**
 * The block model litesvm lacks: a slot clock, one blockhash per slot, block height, the
 * 150-block blockhash validity window and commitment levels derived from slot distance.
 * One block per slot and no skipped slots, so block height == slot.
 */
import { base58Encode, sha256 } from "./codec.ts";

export type Commitment = "processed" | "confirmed" | "finalized";

/** Blocks a blockhash stays usable for (the node's MAX_PROCESSING_AGE). */
export const BLOCKHASH_VALID_BLOCKS = 150;
/** Slots between landing and finality (the depth of a rooted block in our model). */
export const FINALIZATION_DEPTH = 32;
/** Slots of blockhash and status history kept, like the node's 300-entry recent blockhash queue. */
const RECENT_SLOTS = 300;
export const SLOTS_PER_EPOCH = 432_000;

export interface SlotInfo {
  slot: number;
  blockhash: string;
  /**
   * Unix seconds: when the slot started, moved forward while it is the current slot to the time
   * its latest transaction landed (a real block's time is when it was produced, after what it
   * holds arrived). Never earlier than the slot before.
   */
  blockTime: number;
  parentBlockhash: string;
}

export class Blocks {
  #slot = 0;
  #seed: Uint8Array;
  readonly genesisHash: string;
  /** Recent slots by number (pruned to RECENT_SLOTS), and blockhash -> slot. */
  #bySlot = new Map<number, SlotInfo>();
  #byHash = new Map<string, number>();
  #listeners: ((s: SlotInfo) => void)[] = [];

  constructor(seed: Uint8Array, now: () => number) {
    this.#seed = seed;
    this.genesisHash = base58Encode(sha256(seed, "genesis"));
    this.#record(0, now());
  }

  get slot(): number {
    return this.#slot;
  }

  get blockHeight(): number {
    return this.#slot;
  }

  get current(): SlotInfo {
    return this.#bySlot.get(this.#slot)!;
  }

  onSlot(fn: (s: SlotInfo) => void): void {
    this.#listeners.push(fn);
  }

  /** The current block is still being produced at `nowMs`: its time is at least that. */
  touch(nowMs: number): void {
    const cur = this.current;
    const t = Math.floor(nowMs / 1000);
    if (t > cur.blockTime) cur.blockTime = t;
  }

  advance(n: number, now: number): void {
    for (let i = 0; i < n; i++) {
      this.#record(this.#slot + 1, now);
      for (const fn of this.#listeners) fn(this.current);
    }
  }

  /** Blockhash of any slot so far (derived, so it survives pruning). */
  blockhashOf(slot: number): string {
    return this.#bySlot.get(slot)?.blockhash ?? base58Encode(sha256(this.#seed, "slot" + slot));
  }

  #record(slot: number, nowMs: number): void {
    const blockhash = this.blockhashOf(slot);
    const parent = this.#bySlot.get(slot - 1)?.blockhash ?? this.genesisHash;
    this.#slot = slot;
    // Monotonic: a clock stepping back never makes a block older than its parent.
    const blockTime = Math.max(
      Math.floor(nowMs / 1000),
      this.#bySlot.get(slot - 1)?.blockTime ?? 0,
    );
    const info = { slot, blockhash, blockTime, parentBlockhash: parent };
    this.#bySlot.set(slot, info);
    this.#byHash.set(blockhash, slot);
    const old = this.#bySlot.get(slot - RECENT_SLOTS);
    if (old) {
      this.#bySlot.delete(old.slot);
      this.#byHash.delete(old.blockhash);
    }
  }

  info(slot: number): SlotInfo | undefined {
    return this.#bySlot.get(slot);
  }

  /** Highest slot at the given commitment. */
  slotAt(c: Commitment): number {
    if (c === "processed") return this.#slot;
    if (c === "confirmed") return Math.max(0, this.#slot - 1);
    return Math.max(0, this.#slot - FINALIZATION_DEPTH);
  }

  /** Slot a recent blockhash belongs to, or undefined when unknown or pruned. */
  slotOfBlockhash(hash: string): number | undefined {
    return this.#byHash.get(hash);
  }

  lastValidBlockHeight(hash: string): number | undefined {
    const s = this.#byHash.get(hash);
    return s === undefined ? undefined : s + BLOCKHASH_VALID_BLOCKS;
  }

  isBlockhashValid(hash: string): boolean {
    const last = this.lastValidBlockHeight(hash);
    return last !== undefined && this.blockHeight <= last;
  }

  /** Commitment reached by something that landed in `slot`. */
  commitmentOf(slot: number): Commitment {
    if (this.#slot - slot >= FINALIZATION_DEPTH) return "finalized";
    if (this.#slot > slot) return "confirmed";
    return "processed";
  }

  reaches(slot: number, c: Commitment): boolean {
    return commitmentRank(this.commitmentOf(slot)) >= commitmentRank(c);
  }
}

export function commitmentRank(c: Commitment): number {
  return c === "processed" ? 0 : c === "confirmed" ? 1 : 2;
}

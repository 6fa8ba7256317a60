/**
 * Landed transactions and the indexes the RPC reads them through: signature -> record,
 * address -> records (in landing order), the recent status cache used for duplicate detection,
 * and per-slot prioritization fee statistics. Memory is bounded by evicting the oldest records.
 */
import type { InnerIxGroup } from "./executor.ts";
import type { ResolvedTransaction } from "./message.ts";
import type { TokenBalance } from "./spl-token.ts";
import type { TxErrorJson } from "../solana/tx-error.ts";

export interface TxRecord {
  seq: number;
  signature: string;
  slot: number;
  blockTime: number;
  tx: ResolvedTransaction;
  err: TxErrorJson | null;
  fee: bigint;
  preBalances: bigint[];
  postBalances: bigint[];
  preTokenBalances: TokenBalance[];
  postTokenBalances: TokenBalance[];
  logs: string[];
  unitsConsumed: number;
  innerInstructions: InnerIxGroup[];
  returnData: { programId: string; data: Uint8Array } | null;
  memo: string | null;
  /** Micro-lamports per CU the transaction paid. */
  unitPrice: bigint;
  /** Keys the transaction write-locked. */
  writable: string[];
}

/** Deque of records in landing order; old entries fall off the front. */
class RecordList {
  items: TxRecord[] = [];
  head = 0;
  push(r: TxRecord): void {
    this.items.push(r);
  }
  dropOlderThan(seq: number): void {
    while (this.head < this.items.length && this.items[this.head].seq < seq) this.head++;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
  }
  get size(): number {
    return this.items.length - this.head;
  }
  /** Position of the record with this seq, or -1. */
  indexOf(seq: number): number {
    let lo = this.head;
    let hi = this.items.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const s = this.items[mid].seq;
      if (s === seq) return mid;
      if (s < seq) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }
}

interface SlotFees {
  min: bigint | null;
  byAccount: Map<string, bigint>;
}

export interface SignatureQuery {
  before?: string;
  until?: string;
  limit: number;
  /** Only records that landed at or below this slot. */
  maxSlot: number;
}

export class History {
  #seq = 0;
  #all = new RecordList();
  #bySignature = new Map<string, TxRecord>();
  #byAddress = new Map<string, RecordList>();
  /** Recent signatures by landing slot order, kept even if the record itself was evicted. */
  #statusCache = new Map<string, TxRecord>();
  #fees = new Map<number, SlotFees>();
  #bySlot = new Map<number, TxRecord[]>();
  #count = 0;

  constructor(readonly limit: number) {}

  nextSeq(): number {
    return ++this.#seq;
  }

  get transactionCount(): number {
    return this.#count;
  }

  add(r: TxRecord): void {
    this.#count++;
    this.#all.push(r);
    const inSlot = this.#bySlot.get(r.slot);
    if (inSlot) inSlot.push(r);
    else this.#bySlot.set(r.slot, [r]);
    this.#bySignature.set(r.signature, r);
    this.#statusCache.set(r.signature, r);
    for (const k of new Set(r.tx.keyStrings)) {
      let list = this.#byAddress.get(k);
      if (!list) this.#byAddress.set(k, list = new RecordList());
      list.push(r);
    }
    let fees = this.#fees.get(r.slot);
    if (!fees) this.#fees.set(r.slot, fees = { min: null, byAccount: new Map() });
    if (fees.min === null || r.unitPrice < fees.min) fees.min = r.unitPrice;
    for (const k of r.writable) {
      const cur = fees.byAccount.get(k);
      if (cur === undefined || r.unitPrice < cur) fees.byAccount.set(k, r.unitPrice);
    }
    if (this.#all.size > this.limit) this.#evict();
  }

  #evict(): void {
    const excess = this.#all.size - this.limit;
    const cutoff = this.#all.items[this.#all.head + excess].seq;
    for (let i = this.#all.head; i < this.#all.head + excess; i++) {
      const old = this.#all.items[i];
      this.#bySignature.delete(old.signature);
      const slotList = this.#bySlot.get(old.slot)?.filter((r) => r.seq >= cutoff);
      if (slotList?.length) this.#bySlot.set(old.slot, slotList);
      else this.#bySlot.delete(old.slot);
      for (const k of new Set(old.tx.keyStrings)) {
        const list = this.#byAddress.get(k);
        if (!list) continue;
        list.dropOlderThan(cutoff);
        if (list.size === 0) this.#byAddress.delete(k);
      }
    }
    this.#all.dropOlderThan(cutoff);
  }

  /** Drops status-cache entries and fee stats of slots older than `minSlot`. */
  pruneRecent(minSlot: number, minFeeSlot: number): void {
    for (const [sig, r] of this.#statusCache) {
      if (r.slot >= minSlot) break;
      this.#statusCache.delete(sig);
    }
    for (const slot of this.#fees.keys()) {
      if (slot >= minFeeSlot) break;
      this.#fees.delete(slot);
    }
  }

  /** Transactions of a slot in block order (empty if none, or if evicted). */
  inSlot(slot: number): TxRecord[] {
    return this.#bySlot.get(slot) ?? [];
  }

  get(signature: string): TxRecord | undefined {
    return this.#bySignature.get(signature);
  }

  recent(signature: string): TxRecord | undefined {
    return this.#statusCache.get(signature);
  }

  get oldestSlot(): number | null {
    const r = this.#all.items[this.#all.head];
    return r ? r.slot : null;
  }

  forAddress(address: string, q: SignatureQuery): TxRecord[] {
    const list = this.#byAddress.get(address);
    if (!list) return [];
    let start = list.items.length - 1;
    if (q.before) {
      const b = this.#bySignature.get(q.before);
      if (!b) return [];
      const pos = list.indexOf(b.seq);
      start = pos >= 0 ? pos - 1 : lastBelow(list, b.seq);
    }
    const untilSeq = q.until ? this.#bySignature.get(q.until)?.seq ?? -1 : -1;
    const out: TxRecord[] = [];
    for (let i = start; i >= list.head && out.length < q.limit; i--) {
      const r = list.items[i];
      if (r.seq <= untilSeq) break;
      if (r.slot > q.maxSlot) continue;
      out.push(r);
    }
    return out;
  }

  /**
   * Per slot in [fromSlot, toSlot]: the lowest unit price paid in the slot, raised to the
   * lowest price paid by transactions write-locking each given account (the node's rule).
   */
  prioritizationFees(
    accounts: string[],
    fromSlot: number,
    toSlot: number,
  ): { slot: number; prioritizationFee: bigint }[] {
    const out: { slot: number; prioritizationFee: bigint }[] = [];
    for (let slot = Math.max(0, fromSlot); slot <= toSlot; slot++) {
      const f = this.#fees.get(slot);
      let fee = f?.min ?? 0n;
      for (const a of accounts) {
        const v = f?.byAccount.get(a);
        if (v !== undefined && v > fee) fee = v;
      }
      out.push({ slot, prioritizationFee: fee });
    }
    return out;
  }
}

function lastBelow(list: RecordList, seq: number): number {
  let i = list.items.length - 1;
  while (i >= list.head && list.items[i].seq >= seq) i--;
  return i;
}

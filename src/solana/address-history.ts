/**
 * An address's transaction history, paged back with getSignaturesForAddress's `before` cursor.
 * The first page alone is a blind spot: anyone can land hundreds of transactions that mention an
 * address (a reference key is public once its payment lands), pushing the one that matters off
 * it. The walk is bounded (pages, and optionally an `until` signature or a block time to stop
 * at), and says when a bound cut it short so the caller can log it.
 */
import type { ConfirmedSignatureInfo, Connection, PublicKey } from "@solana/web3.js";

export interface HistoryWalk {
  /** Oldest first. */
  signatures: ConfirmedSignatureInfo[];
  /** False when `maxPages` stopped the walk before the end of what was asked for. */
  complete: boolean;
  pages: number;
}

export interface HistoryOptions {
  /** The RPC's largest page (1,000 on mainnet nodes). */
  pageSize?: number;
  maxPages?: number;
  /** Start below this signature, exclusive (getSignaturesForAddress's `before`). */
  before?: string;
  /** Stop at this signature, exclusive (getSignaturesForAddress's `until`). */
  until?: string;
  /** Stop once a page reaches transactions older than this (Unix seconds). */
  since?: number;
}

export const PAGE_SIZE = 1000;
export const MAX_PAGES = 10;

export async function addressHistory(
  connection: Connection,
  address: PublicKey,
  opts: HistoryOptions = {},
): Promise<HistoryWalk> {
  const pageSize = opts.pageSize ?? PAGE_SIZE;
  const maxPages = opts.maxPages ?? MAX_PAGES;
  const newestFirst: ConfirmedSignatureInfo[] = [];
  let before = opts.before;
  for (let pages = 1;; pages++) {
    const page = await connection.getSignaturesForAddress(
      address,
      { limit: pageSize, before, until: opts.until },
      "confirmed",
    );
    let reachedSince = false;
    for (const s of page) {
      // Block times are missing only on nodes without them; such an entry is kept.
      if (opts.since !== undefined && s.blockTime != null && s.blockTime < opts.since) {
        reachedSince = true;
        break;
      }
      newestFirst.push(s);
    }
    if (reachedSince || page.length < pageSize) {
      return { signatures: newestFirst.reverse(), complete: true, pages };
    }
    if (pages >= maxPages) return { signatures: newestFirst.reverse(), complete: false, pages };
    before = page[page.length - 1].signature;
  }
}

/**
 * The price GET /v1/pricing shows. That endpoint needs no key and has no rate limit, so reading
 * the price source on every request let anyone spend our RPC budget (one getAccountInfo a request,
 * at user priority): enough anonymous requests and every keyed build, relay and verification got
 * 503 rpc_busy, and background work (the watcher) never ran. One read's outcome, a price or the
 * reason there is none, is reused for `keepMs`, and concurrent requests share the read, so the
 * endpoint costs at most one read per `keepMs` per instance whatever the feed's state. A build
 * still reads its own price (price-source.ts); only the display is shared.
 */
import type { Clock } from "../clock.ts";
import type { PriceSource, SolPrice } from "./price-source.ts";

export const DISPLAY_PRICE_KEEP_MS = 5_000;

export function sharedPrice(
  source: PriceSource,
  clock: Clock,
  keepMs = DISPLAY_PRICE_KEEP_MS,
): () => Promise<SolPrice> {
  let last: { read: Promise<SolPrice>; at: number } | null = null;
  return () => {
    const now = clock();
    // A clock set back (tests do) is not trusted to keep a reading either.
    if (last && now - last.at >= 0 && now - last.at <= keepMs) return last.read;
    const read = source.solUsd();
    last = { read, at: now };
    return read;
  };
}

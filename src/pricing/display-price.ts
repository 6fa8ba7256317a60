/**
 * The price GET /v1/pricing shows. That endpoint needs no key and has no rate limit, so reading
 * the price source on every request let anyone spend our RPC budget (one getAccountInfo a request,
 * at user priority): enough anonymous requests and every keyed build, relay and verification got
 * 503 rpc_busy, and background work (the watcher) never ran. A reading is reused for `keepMs` and
 * concurrent requests share one read, so the endpoint costs at most one read per `keepMs` per
 * instance. A build still reads its own price (price-source.ts); only the display is shared.
 */
import type { Clock } from "../clock.ts";
import type { PriceSource, SolPrice } from "./price-source.ts";

export const DISPLAY_PRICE_KEEP_MS = 5_000;

export function sharedPrice(
  source: PriceSource,
  clock: Clock,
  keepMs = DISPLAY_PRICE_KEEP_MS,
): () => Promise<SolPrice> {
  let last: { price: SolPrice; at: number } | null = null;
  let inFlight: Promise<SolPrice> | null = null;
  return () => {
    const now = clock();
    if (last && now - last.at >= 0 && now - last.at <= keepMs) {
      return Promise.resolve(last.price);
    }
    inFlight ??= source.solUsd().then((price) => {
      last = { price, at: clock() };
      return price;
    }).finally(() => {
      inFlight = null;
    });
    return inFlight;
  };
}

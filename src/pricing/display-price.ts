/**
 * The price GET /v1/pricing shows. That endpoint needs no key and has no rate limit, so reading
 * the price source on every request let anyone spend our RPC budget (one getAccountInfo a request,
 * at user priority): enough anonymous requests and every keyed build, relay and verification got
 * 503 rpc_busy, and background work (the watcher) never ran. A reading the source still holds as
 * current (the Pyth source: one under a second old, as builds use it) is shown without a read,
 * and concurrent requests share one read, so a flood costs about one read a second per instance.
 */
import type { PriceSource, SolPrice } from "./price-source.ts";

export function sharedPrice(source: PriceSource): () => Promise<SolPrice> {
  let inFlight: Promise<SolPrice> | null = null;
  return () => {
    const held = source.current?.();
    if (held) return Promise.resolve(held);
    inFlight ??= source.solUsd().finally(() => {
      inFlight = null;
    });
    return inFlight;
  };
}

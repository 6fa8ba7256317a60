import { ApiError } from "../kernel/errors.ts";
import { type PriceSource, PriceUnavailable, type SolPrice } from "./price-source.ts";

/**
 * A price or the seed's 503 `price_unavailable`; any other failure stays a server error. The body
 * says why in a few words; what the RPC said goes to `log` only.
 */
export async function solPriceOr503(
  source: PriceSource,
  log?: (detail: Record<string, unknown>) => void,
): Promise<SolPrice> {
  try {
    return await source.solUsd();
  } catch (e) {
    if (e instanceof PriceUnavailable) {
      log?.({ reason: e.message, detail: e.detail });
      throw new ApiError(
        "price_unavailable",
        "The SOL price feed is temporarily unavailable; retry",
        {
          price: e.message,
        },
        { "Retry-After": "5" },
      );
    }
    throw e;
  }
}

import { Hono } from "hono";
import type { AppEnv } from "../http/env.ts";
import { sharedPrice } from "../pricing/display-price.ts";
import { pricingLimits } from "../pricing/published-limits.ts";
import { publishedTokenFee } from "../pricing/token-fee.ts";
import { publishedUpdateFee } from "../pricing/update-fee.ts";
import { solPriceOr503 } from "../pricing/quote.ts";
import type { Services } from "../services.ts";
import { clusterRent } from "../tokens/build-inputs.ts";
import { type NetworkCosts, networkCosts } from "../tokens/network-costs.ts";

/** Rent never changes on a cluster: the figures are worked out once per connection. */
const networkCache = new WeakMap<object, NetworkCosts>();

export function pricingRoutes(s: Services) {
  // Public and unlimited: a held reading or one shared read, whoever asks (display-price.ts).
  const source = { solUsd: sharedPrice(s.price) };
  return new Hono<AppEnv>().get("/v1/pricing", async (c) => {
    const price = await solPriceOr503(source, (d) => s.logger.log("warn", "price unavailable", d));
    const { limits, fees } = s.config;
    // What the network takes per token besides our fee, for each program, from the cluster's
    // rent (network-costs.ts). Left out if the rent can't be read.
    let network = networkCache.get(s.connection);
    if (!network) {
      network = await clusterRent(s)
        .then((rent) =>
          networkCosts(
            rent,
            async (n) => BigInt(await s.connection.getMinimumBalanceForRentExemption(n)),
          )
        )
        .catch(() => undefined);
      if (network) networkCache.set(s.connection, network);
    }
    return c.json({
      network: s.config.network,
      access: { usd: fees.accessUsd },
      token: {
        ...publishedTokenFee(fees, price.usd),
        ...(network
          ? {
            networkLamports: network.splToken.toString(),
            token2022NetworkLamports: network.token2022.toString(),
          }
          : {}),
      },
      update: publishedUpdateFee(fees, price.usd),
      limits: pricingLimits(limits),
    });
  });
}

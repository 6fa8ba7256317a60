import { Hono } from "hono";
import type { AppEnv } from "../http/env.ts";
import { sharedPrice } from "../pricing/display-price.ts";
import { usdToLamports } from "../pricing/price-source.ts";
import { solPriceOr503 } from "../pricing/quote.ts";
import type { Services } from "../services.ts";
import { clusterRent } from "../tokens/build-token.ts";
import { costBreakdown, spend } from "../tokens/costs.ts";

export function pricingRoutes(s: Services) {
  // Public and unlimited: a held reading or one shared read, whoever asks (display-price.ts).
  const source = { solUsd: sharedPrice(s.price) };
  return new Hono<AppEnv>().get("/v1/pricing", async (c) => {
    const price = await solPriceOr503(source, (d) => s.logger.log("warn", "price unavailable", d));
    const { limits, fees } = s.config;
    // What the network takes per token besides our fee, from the cluster's rent (no priority
    // fee: that depends on the market when a build is made). Left out if the rent can't be read.
    const networkLamports = await clusterRent(s)
      .then((rent) => spend(costBreakdown(0n, rent, 0n)).toString())
      .catch(() => undefined);
    return c.json({
      network: s.config.network,
      access: { usd: fees.accessUsd },
      token: {
        usd: fees.tokenUsd,
        lamports: usdToLamports(fees.tokenUsd, price.usd).toString(),
        solUsd: price.usd,
        ...(networkLamports ? { networkLamports } : {}),
      },
      limits: {
        requestsPerHour: limits.requestsPerHour,
        tokensPerDay: limits.tokensPerDay,
        metadataPerDay: limits.metadataPerDay,
        imageBytes: limits.imageBytes,
        imageMaxWidth: limits.imageMaxWidth,
        imageMaxHeight: limits.imageMaxHeight,
        hostedItemsPerKey: limits.hostedItemsPerKey,
      },
    });
  });
}

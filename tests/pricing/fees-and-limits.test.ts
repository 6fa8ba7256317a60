/**
 * The per-token fee, the daily token limit and the metadata limits each have one module: the formula or check, the
 * published shape and the reference's words. These pin each module's own answers, and that
 * GET /v1/pricing, GET /v1/me and the OpenAPI document take theirs from it.
 */
import { assert, assertEquals } from "../support/assert.ts";
import { publishedTokenFee, tokenFeeLamports, tokenFeeText } from "../../src/pricing/token-fee.ts";
import {
  KeyLimits,
  keyLimits,
  PricingLimits,
  pricingLimits,
} from "../../src/pricing/published-limits.ts";
import { tokensPerDay } from "../../src/tokens/tokens-per-day.ts";
import { hostedItemsPerKey, metadataPerDay } from "../../src/metadata/metadata-limits.ts";
import { DEFAULT_DOCUMENT_CONFIG, openApiDocument } from "../../src/openapi/document.ts";
import { type Limits, loadConfig } from "../../src/config.ts";
import {
  publishedUpdateFee,
  updateCharged,
  updateFeeLamports,
  updateFeeText,
} from "../../src/pricing/update-fee.ts";

const NOON = Date.UTC(2026, 0, 2, 12, 0, 0);

Deno.test("token fee: that many USD in lamports at the SOL price, rounded up", () => {
  assertEquals(tokenFeeLamports({ tokenUsd: 2.99 }, 150), 19_933_334n);
  assertEquals(tokenFeeLamports({ tokenUsd: 1.5 }, 150), 10_000_000n);
  assertEquals(publishedTokenFee({ tokenUsd: 2.99 }, 150), {
    usd: 2.99,
    lamports: "19933334",
    solUsd: 150,
  });
});

Deno.test("token fee: the API reference says it in the module's words", () => {
  const fees = { accessUsd: 7, tokenUsd: 4.25, updateUsd: 0 };
  const config = { ...DEFAULT_DOCUMENT_CONFIG, fees };
  const text = JSON.stringify(openApiDocument({ serverUrl: "https://x.test", config }));
  for (const said of [tokenFeeText.perToken, tokenFeeText.formula, tokenFeeText.inBuild]) {
    assert(text.includes(said(fees)), said(fees));
  }
});

Deno.test("tokens per day: given builds left, no refusal; at the limit, 429 with the reset", () => {
  const l = { tokensPerDay: 3 };
  assertEquals(tokensPerDay.refusal(l, 2, NOON), null);
  assertEquals(tokensPerDay.rejection(l, 2, NOON), null);
  const fields = { tokensPerDay: 3, usedToday: 3, resetsInSeconds: 12 * 3600 };
  assertEquals(tokensPerDay.rejection(l, 3, NOON)?.fields, fields);
  const e = tokensPerDay.refusal(l, 3, NOON)!;
  assertEquals([e.status, e.code, e.fields, e.headers], [429, "daily_limit", fields, {
    "Retry-After": "43200",
  }]);
  assertEquals(tokensPerDay.used(null), 0);
  assertEquals(tokensPerDay.used({ tokens: 2 }), 2);
});

Deno.test("published limits: the responses and their schemas are made from one table", () => {
  const l: Limits = {
    requestsPerHour: 1,
    portalRequestsPerHour: 2,
    tokensPerDay: 3,
    actionsBuildsPerWalletPerDay: 9,
    actionsRequestsPerIpPerHour: 10,
    metadataPerDay: 4,
    imageBytes: 5,
    imageMaxWidth: 6,
    imageMaxHeight: 7,
    hostedItemsPerKey: 8,
  };
  assertEquals(Object.keys(pricingLimits(l)), Object.keys(PricingLimits.shape));
  assertEquals(Object.keys(keyLimits(l)), Object.keys(KeyLimits.shape));
  assertEquals(keyLimits(l), { tokensPerDay: 3, metadataPerDay: 4, requestsPerHour: 1 });
  // The portal's own limit is not a caller's to plan against.
  assertEquals("portalRequestsPerHour" in pricingLimits(l), false);
  PricingLimits.strict().parse(pricingLimits(l));
  KeyLimits.strict().parse(keyLimits(l));
});

Deno.test("metadata limits: the daily one resets at 00:00 UTC, the hosted items one never", () => {
  const l = { metadataPerDay: 2, hostedItemsPerKey: 5 };
  assertEquals(metadataPerDay.reached(l, null), false);
  assertEquals(metadataPerDay.reached(l, { metadata: 1 }), false);
  assertEquals(metadataPerDay.reached(l, { metadata: 2 }), true);
  assertEquals(metadataPerDay.rejection(l, NOON).retryAfterS, 12 * 3600);
  assertEquals(hostedItemsPerKey.reached(l, 4), false);
  assertEquals(hostedItemsPerKey.reached(l, 5), true);
  assertEquals("retryAfterS" in hostedItemsPerKey.rejection(l), false);
  const text = JSON.stringify(openApiDocument({
    serverUrl: "https://x.test",
    config: { ...DEFAULT_DOCUMENT_CONFIG, limits: { ...DEFAULT_DOCUMENT_CONFIG.limits, ...l } },
  }));
  const count = (n: number) => n.toLocaleString("en-US");
  assert(text.includes(metadataPerDay.text(l, count)));
  assert(text.includes(hostedItemsPerKey.text(l, count)));
});

Deno.test("update fee: 0 by default and then no transfer; else USD in lamports rounded up, as published", () => {
  assertEquals(loadConfig({}).fees.updateUsd, 0);
  assertEquals(updateFeeLamports({ updateUsd: 0 }, 150), 0n);
  assertEquals(updateCharged({ updateUsd: 0 }), false);
  assertEquals(updateFeeLamports({ updateUsd: 0.5 }, 150), 3_333_334n);
  assertEquals(publishedUpdateFee({ updateUsd: 0.5 }, 150), { usd: 0.5, lamports: "3333334" });
  const fees = { accessUsd: 7, tokenUsd: 4.25, updateUsd: 0.5 };
  const config = { ...DEFAULT_DOCUMENT_CONFIG, fees };
  const text = JSON.stringify(openApiDocument({ serverUrl: "https://x.test", config }));
  assert(text.includes(updateFeeText.inUpdate(fees)), updateFeeText.inUpdate(fees));
});

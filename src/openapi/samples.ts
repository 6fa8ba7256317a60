/**
 * What the reference at /docs shows beside each operation's schema: a request sample in curl and
 * in TypeScript (OpenAPI's `x-codeSamples`, which renderers show as written) and an example of
 * the success body. Error examples are on the shared responses in ./document.ts.
 * tests/openapi/openapi.test.ts parses every success example with the response's zod schema.
 */
import type { Config } from "../config.ts";
import { publishedUpdateFee } from "../pricing/update-fee.ts";
import { publishedTokenFee, tokenFeeLamports } from "../pricing/token-fee.ts";
import { keyLimits, pricingLimits } from "../pricing/published-limits.ts";

type Json = Record<string, unknown>;

const MINT = "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU";
const PAYER = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin";
const SIGNATURE =
  "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW";

/**
 * A real signed legacy transaction, as a client sends one: a 1-lamport transfer of a throwaway key
 * (ed25519 seed: SHA-256 of "token-creation API: example relay transaction") to itself under the
 * build example's blockhash, signed by that key. It decodes and its signature verifies, so it
 * reaches the relay's own check, which refuses it as a build of no key (400 naming transaction).
 */
export const RELAY_EXAMPLE_TRANSACTION =
  "AddU2D4nfzEAF14CiKFbfgXhk3RB2YgX36dldtGF96jmRySnetRELQ0vQSeTCj5eLzniL6e6dXxvSG3KvR2KHQYBAAEC" +
  "YN0Hk1Hye5LKe4Atb1OH0iNHBqZERWmBcPg4huUF+PMAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAMxJDpKM" +
  "0uOHO7ND/JXaMxecpg9Nv0bCw26RKZ1V1Oa5AQECAAAMAgAAAAEAAAAAAAAA";

/** One build as both token endpoints show it (src/tokens/build-record.ts). */
const TOKEN = {
  mint: MINT,
  name: "Example Token",
  symbol: "EXT",
  status: "confirmed",
  signature: SIGNATURE,
  feeVerified: true,
  createdAt: 1764028800,
  confirmedAt: 1764028806,
};
const UPDATE_ID = "3b9f2c7e1a4d6f8b0c2e4a6d8f0b1c3e";
const UPDATE_BEFORE = {
  name: "Example Token",
  symbol: "EXT",
  uri: "https://api.example.com/m/ae16d68708974b4bc7fc83b16c142bc2.json",
  updateAuthority: PAYER,
  isMutable: true,
  mintAuthority: PAYER,
  freezeAuthority: null,
};
const UPDATE_AFTER = {
  ...UPDATE_BEFORE,
  name: "Example Token v2",
  uri: "https://api.example.com/m/0c5b1f0e6d2a4c3b9e8f7a6d5c4b3a21.json",
  mintAuthority: null,
};
const WEBHOOK = {
  id: "we_3f6c1d2b8a9e4f70",
  url: "https://hooks.example.com/tcb",
  events: ["token.confirmed", "token.failed"],
  description: null,
  status: "enabled",
  failingSince: null,
  createdAt: "2025-11-25T00:00:00.000Z",
  disabledAt: null,
};

const DELIVERY = {
  id: "dlv_5c2d9e0f1a3b4c68",
  messageId: "msg_2b7f0c9e4d1a8e35",
  type: "token.confirmed",
  buildId: 42,
  status: "delivered",
  replayOf: null,
  createdAt: "2025-11-25T00:00:07.000Z",
  nextAttemptAt: null,
  failureReason: null,
  attempts: [{
    attempt: 1,
    at: "2025-11-25T00:00:07.000Z",
    ok: true,
    httpStatus: 200,
    error: null,
    durationMs: 84,
  }],
  payload: {
    type: "token.confirmed",
    timestamp: "2025-11-25T00:00:06.000Z",
    data: { buildId: 42, mint: MINT, status: "confirmed", signature: SIGNATURE },
  },
};

export interface OperationSamples {
  /** The request body used in both samples, when the operation has one. */
  body?: unknown;
  /** The success response's body. */
  success: unknown;
}

/** Keyed by "METHOD /path" as in the document. */
export const SAMPLES: Record<string, OperationSamples> = {
  "GET /v1/pricing": {
    success: {
      network: "mainnet-beta",
      access: { usd: 10 },
      token: {
        usd: 2.99,
        lamports: "19933334",
        solUsd: 150,
        networkLamports: "18621480",
        token2022NetworkLamports: "7730600",
      },
      update: { usd: 0, lamports: "0" },
      limits: {
        requestsPerHour: 600,
        tokensPerDay: 25,
        metadataPerDay: 100,
        imageBytes: 1048576,
        imageMaxWidth: 4096,
        imageMaxHeight: 4096,
        hostedItemsPerKey: 5000,
      },
    },
  },
  "GET /v1/me": {
    success: {
      keyId: "607def1c94e5a286",
      wallet: PAYER,
      usageToday: { requests: 12, tokens: 1, metadata: 1 },
      limits: { tokensPerDay: 25, metadataPerDay: 100, requestsPerHour: 600 },
      conduct: {
        recent: { window: 100, landings: 1, unverified: 0, payers: 0 },
        byKeyWallet: 0,
        unverifiedLandings: [],
        policy: {
          refusePayerAfter: 1,
          suspendAfterByKeyWallet: 3,
          suspendShare: 0.5,
          suspendMinPayers: 10,
        },
      },
    },
  },
  "POST /v1/metadata": {
    body: {
      name: "Example Token",
      symbol: "EXT",
      description: "An example",
      // A real 1 x 1 PNG: the body works as sent, where an imageUrl would need a fetchable host.
      imageBase64:
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4XmP4PlnqPwAGzQKkHBC0ZQAAAABJRU5ErkJggg==",
      website: "https://example.com",
      twitter: "https://x.com/example",
      telegram: "https://t.me/example",
      discord: "https://discord.gg/example",
      attributes: [{ trait_type: "Tier", value: "Gold" }],
    },
    success: {
      metadataUri: "https://api.example.com/m/ae16d68708974b4bc7fc83b16c142bc2.json",
      imageUri:
        "https://api.example.com/i/0f5b1a593519b19ccbbd63c7cf2c1228eecd8f8ddad936852733415ab3708234.png",
      id: "ae16d68708974b4bc7fc83b16c142bc2",
    },
  },
  "POST /v1/metadata/check": {
    body: {
      metadataUri: "https://example.com/token.json",
      name: "Example Token",
      symbol: "EXT",
    },
    success: {
      metadataUri: "https://example.com/token.json",
      checkedAt: "2025-11-25T00:00:00.000Z",
      hosted: false,
      ok: false,
      document: {
        name: "Example Token",
        symbol: "EXT",
        description: "An example",
        image: "https://example.com/logo.svg",
      },
      image: {
        uri: "https://example.com/logo.svg",
        type: null,
        bytes: 2048,
        width: null,
        height: null,
      },
      problems: [
        {
          code: "no_cors",
          message: "The document is served without Access-Control-Allow-Origin: browser " +
            "explorers cannot read it and show the token without its name or logo.",
        },
        {
          code: "image_unsupported",
          message: "The image is an SVG, not PNG, JPEG, WebP or GIF: many wallets do not show it.",
        },
      ],
    },
  },
  "POST /v1/tokens": {
    body: {
      payer: PAYER,
      name: "Example Token",
      symbol: "EXT",
      metadataUri: "https://api.example.com/m/ae16d68708974b4bc7fc83b16c142bc2.json",
      supply: "1000000",
      decimals: 6,
      revokeMint: true,
    },
    success: {
      buildId: 42,
      mint: MINT,
      metadataAccount: "8ZAa12H5kmduNJpUS8vJ7wtkgwCEXPwXWC84WejdHnoJ",
      recipientTokenAccount: "Aa2bBV7kmwMRSdDGiVWifSy7raahTWnrXeFpYAExnWkm",
      transaction: "AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA…",
      transactionEncoding: "base64",
      format: "legacy-unsigned",
      requiredSigner: PAYER,
      recentBlockhash: "EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N",
      lastValidBlockHeight: 287654321,
      expiresInSeconds: 60,
      fee: {
        usd: 2.99,
        lamports: "19933334",
        treasury: "7c3hvvQt9TKVt9nB3aUT1ugxL5Zhk9vkvLEiV3cd91tq",
      },
      // Mainnet's rent: 82-byte mint, 165-byte token account, 607-byte metadata account.
      costs: {
        networkFeeLamports: "5000",
        priorityFeeLamports: "10000",
        mintRentLamports: "1461600",
        tokenAccountRentLamports: "2039280",
        metadataRentLamports: "5115600",
        metadataProtocolFeeLamports: "10000000",
        serviceFeeLamports: "19933334",
        totalLamports: "38564814",
      },
    },
  },
  "GET /v1/tokens/{mint}": { success: TOKEN },
  "POST /v1/tokens/{mint}/refresh": { success: {} },
  "POST /v1/tokens/{mint}/update": {
    body: {
      authority: PAYER,
      metadataUri: "https://api.example.com/m/0c5b1f0e6d2a4c3b9e8f7a6d5c4b3a21.json",
      mintAuthority: null,
    },
    success: {
      updateId: UPDATE_ID,
      mint: MINT,
      transaction: "AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA…",
      transactionEncoding: "base64",
      format: "legacy-unsigned",
      requiredSigner: PAYER,
      recentBlockhash: "EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N",
      lastValidBlockHeight: 287654321,
      expiresInSeconds: 60,
      messageHash: "5f1c7e0d9b2a4c6e8f0a1b3c5d7e9f1a2b4c6d8e0f1a3b5c7d9e1f2a4b6c8d0e",
      fee: {
        usd: 0,
        lamports: "0",
        treasury: "7c3hvvQt9TKVt9nB3aUT1ugxL5Zhk9vkvLEiV3cd91tq",
        reference: null,
      },
      costs: {
        networkFeeLamports: "5000",
        priorityFeeLamports: "4000",
        rentTopUpLamports: "0",
        serviceFeeLamports: "0",
        totalLamports: "9000",
      },
      changes: ["metadataUri", "mintAuthority"],
      before: UPDATE_BEFORE,
      after: UPDATE_AFTER,
    },
  },
  "GET /v1/tokens/{mint}/updates/{updateId}": {
    success: {
      updateId: UPDATE_ID,
      mint: MINT,
      status: "landed",
      signature: SIGNATURE,
      authority: PAYER,
      changes: ["metadataUri", "mintAuthority"],
      before: UPDATE_BEFORE,
      after: UPDATE_AFTER,
      feeLamports: "0",
      feeLamportsSeen: "0",
      totalLamports: "9000",
      reason: null,
      createdAt: 1764115200,
      landedAt: 1764115206,
    },
  },
  "POST /v1/transactions": {
    body: { transaction: RELAY_EXAMPLE_TRANSACTION },
    success: { signature: SIGNATURE, mint: MINT, status: "submitted" },
  },
  "GET /v1/transactions/{signature}": {
    success: {
      signature: SIGNATURE,
      status: "confirmed",
      mint: MINT,
      supplyRaw: "1000000000000",
      decimals: 6,
      recipient: PAYER,
      feeVerified: true,
      fee: { amount: "19933334", currency: "SOL" },
    },
  },
  "GET /v1/tokens": {
    success: {
      items: [{ buildId: 42, ...TOKEN }],
      nextCursor: "42",
    },
  },
  "POST /v1/webhooks": {
    body: { url: "https://hooks.example.com/tcb", events: ["token.confirmed", "token.failed"] },
    success: {
      ...WEBHOOK,
      secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    },
  },
  "GET /v1/webhooks": { success: { items: [WEBHOOK] } },
  "GET /v1/webhooks/{id}": { success: WEBHOOK },
  "DELETE /v1/webhooks/{id}": { success: null },
  "GET /v1/webhooks/{id}/deliveries": { success: { items: [DELIVERY], nextCursor: null } },
  "POST /v1/webhooks/{id}/deliveries/{deliveryId}/replay": {
    success: {
      ...DELIVERY,
      id: "dlv_7b0e4c2a9f1d3e58",
      status: "pending",
      replayOf: DELIVERY.id,
      createdAt: "2025-11-25T00:10:00.000Z",
      nextAttemptAt: "2025-11-25T00:10:00.000Z",
      attempts: [],
    },
  },
  "GET /v1/health": {
    success: {
      status: "ready",
      checks: { kv: { ok: true, ms: 1 }, rpc: { ok: true, ms: 12, slot: 287654000 } },
    },
  },
};

const PATH_EXAMPLES: Record<string, string> = {
  mint: MINT,
  signature: SIGNATURE,
  id: WEBHOOK.id,
  deliveryId: DELIVERY.id,
  updateId: UPDATE_ID,
};

/** The example of a path parameter, the one the samples' URLs use; none is an error. */
export function pathExample(name: string): string {
  const example = PATH_EXAMPLES[name];
  if (example === undefined) throw new Error(`path parameter {${name}} has no example`);
  return example;
}
const concrete = (path: string) => path.replace(/\{([a-z]+)\}/gi, (_, name) => pathExample(name));

function curl(method: string, url: string, keyed: boolean, body: unknown): string {
  const lines = [`curl${method === "GET" ? "" : ` -X ${method}`} '${url}'`];
  if (keyed) lines.push(`-H "Authorization: Bearer $TCB_API_KEY"`);
  if (body !== undefined) {
    lines.push(`-H 'Content-Type: application/json'`);
    lines.push(`-H "Idempotency-Key: $(uuidgen)"`);
    lines.push(`-d '${JSON.stringify(body, null, 2).replaceAll("\n", "\n  ")}'`);
  }
  return lines.join(" \\\n  ");
}

function typescript(method: string, url: string, keyed: boolean, body: unknown): string {
  const headers: string[] = [];
  if (keyed) headers.push('Authorization: `Bearer ${Deno.env.get("TCB_API_KEY")}`');
  if (body !== undefined) {
    headers.push('"Content-Type": "application/json"');
    headers.push('"Idempotency-Key": crypto.randomUUID()');
  }
  const init = [
    ...(method === "GET" ? [] : [`  method: "${method}",`]),
    ...(headers.length
      ? [`  headers: {\n${headers.map((h) => `    ${h},`).join("\n")}\n  },`]
      : []),
    ...(body === undefined
      ? []
      : [`  body: JSON.stringify(${JSON.stringify(body, null, 2).replaceAll("\n", "\n  ")}),`]),
  ];
  return [
    `const res = await fetch("${url}"${init.length ? `, {\n${init.join("\n")}\n}` : ""});`,
    "const body = await res.json();",
    "if (!res.ok) throw new Error(`${body.error.code}: ${body.error.message}`);",
    "console.log(body);",
  ].join("\n");
}

/** The SOL price the examples are priced at, in USD. */
const SAMPLE_SOL_USD = 150;

/**
 * SAMPLES with the service's own fees and limits where an example states them: the pricing and
 * key examples, and the fee in a build's costs (its total follows) and in a verification.
 */
function samplesFor({ limits, fees }: Pick<Config, "limits" | "fees">) {
  const at = (key: string) => SAMPLES[key].success as Json;
  const feeLamports = tokenFeeLamports(fees, SAMPLE_SOL_USD);
  const pricing = at("GET /v1/pricing");
  const built = at("POST /v1/tokens");
  const costs = built.costs as Record<string, string>;
  const networkCosts = Object.entries(costs)
    .filter(([k]) => k !== "serviceFeeLamports" && k !== "totalLamports")
    .reduce((sum, [, v]) => sum + BigInt(v), 0n);
  const verified = at("GET /v1/transactions/{signature}");
  const replace = (key: string, success: Json) => ({ ...SAMPLES[key], success });
  const builtSample = {
    ...built,
    fee: { ...(built.fee as Json), usd: fees.tokenUsd, lamports: String(feeLamports) },
    costs: {
      ...costs,
      serviceFeeLamports: String(feeLamports),
      totalLamports: String(networkCosts + feeLamports),
    },
  };
  return {
    ...SAMPLES,
    "GET /v1/pricing": replace("GET /v1/pricing", {
      ...pricing,
      access: { usd: fees.accessUsd },
      token: { ...(pricing.token as Json), ...publishedTokenFee(fees, SAMPLE_SOL_USD) },
      update: publishedUpdateFee(fees, SAMPLE_SOL_USD),
      limits: pricingLimits(limits),
    }),
    "GET /v1/me": replace("GET /v1/me", {
      ...at("GET /v1/me"),
      limits: keyLimits(limits),
    }),
    "POST /v1/tokens": replace("POST /v1/tokens", builtSample),
    // The build re-issued: a fresh blockhash, the quoted fee, the same costs.
    "POST /v1/tokens/{mint}/refresh": replace("POST /v1/tokens/{mint}/refresh", {
      ...builtSample,
      recentBlockhash: "3HxNDVB7k1ZtbTq2YRRPP9nZyJQ4AfiuRDgTWmsZqRVG",
      lastValidBlockHeight: 287654777,
      feeQuote: "quoted",
      refreshes: 1,
    }),
    "GET /v1/transactions/{signature}": replace("GET /v1/transactions/{signature}", {
      ...verified,
      fee: { ...(verified.fee as Json), amount: String(feeLamports) },
    }),
  } as Record<string, OperationSamples>;
}

/**
 * Adds x-codeSamples to every operation with a SAMPLES entry, and the success example to its 2xx
 * JSON response. Returns new objects; `paths` is not changed.
 */
export function withSamples(
  paths: Record<string, Json>,
  serverUrl: string,
  config: Pick<Config, "limits" | "fees">,
): Record<string, Json> {
  const out: Record<string, Json> = {};
  const examples = samplesFor(config);
  for (const [path, item] of Object.entries(paths)) {
    const ops: Json = {};
    for (const [method, opValue] of Object.entries(item)) {
      const op = opValue as Json;
      const samples = examples[`${method.toUpperCase()} ${path}`];
      if (!samples) {
        ops[method] = op;
        continue;
      }
      const url = serverUrl.replace(/\/+$/, "") + concrete(path);
      const keyed = !(Array.isArray(op.security) && op.security.length === 0);
      const M = method.toUpperCase();
      const responses = { ...(op.responses as Record<string, Json>) };
      for (const [status, response] of Object.entries(responses)) {
        if (!/^2\d\d$/.test(status)) continue;
        const content = response.content as Record<string, Json> | undefined;
        if (!content?.["application/json"]) continue;
        responses[status] = {
          ...response,
          content: {
            "application/json": { ...content["application/json"], example: samples.success },
          },
        };
      }
      let requestBody = op.requestBody as Json | undefined;
      const media = (requestBody?.content as Record<string, Json> | undefined)
        ?.["application/json"];
      if (requestBody && media && media.example === undefined && samples.body !== undefined) {
        requestBody = {
          ...requestBody,
          content: { "application/json": { ...media, example: samples.body } },
        };
      }
      ops[method] = {
        ...op,
        ...(requestBody ? { requestBody } : {}),
        responses,
        "x-codeSamples": [
          { lang: "Shell", label: "curl", source: curl(M, url, keyed, samples.body) },
          {
            lang: "TypeScript",
            label: "TypeScript",
            source: typescript(M, url, keyed, samples.body),
          },
        ],
      };
    }
    out[path] = ops;
  }
  return out;
}

/**
 * The build record's one schema shapes what GET /v1/tokens/{mint} and GET /v1/tokens serve: the
 * documented fields in the documented order, nothing of the record's internals, and the
 * Token-2022 fields only when the mint has them.
 */
import { assert, assertEquals } from "../support/assert.ts";
import { KEPT, SERVED, TokenBuiltData } from "../../events/token-built.ts";
import { openApiDocument } from "../../src/openapi/document.ts";
import { type BuildDoc, buildsProjection } from "../../projections/builds.ts";
import { buildListItem, BuildRecord, buildRecord } from "../../src/tokens/build-record.ts";
import { event, given } from "../projections/support/events.ts";

const MINT = "So11111111111111111111111111111111111111112";
const PAYER = "11111111111111111111111111111111";

const record = (patch: Parameters<typeof event<"TokenBuilt">>[1] = {}) =>
  given(buildsProjection, []).when(event("TokenBuilt", { mint: MINT, ...patch })).doc([
    7,
  ]) as BuildDoc;

Deno.test("build record: given a classic build, then the eight documented fields in order, no internals", () => {
  const doc = record();
  assertEquals(Object.keys(buildRecord(doc)), [
    "mint",
    "name",
    "symbol",
    "status",
    "signature",
    "feeVerified",
    "createdAt",
    "confirmedAt",
  ]);
  assertEquals(buildRecord(doc).mint, MINT);
  // The list item: the build's id first, then the same record.
  assertEquals(Object.keys(buildListItem(doc)), ["buildId", ...Object.keys(buildRecord(doc))]);
  assertEquals(buildListItem(doc).buildId, 7);
  for (const internal of ["keyId", "purchaseId", "payer", "reference", "messageHash", "seed"]) {
    assertEquals(internal in buildRecord(doc), false, internal);
  }
});

Deno.test("build record: given a Token-2022 build with a transfer fee, then both endpoints show them", () => {
  const transferFee = { basisPoints: 50, maximum: "1000", authority: PAYER };
  const doc = record({ tokenProgram: "token-2022", transferFee });
  for (const view of [buildRecord(doc), buildListItem(doc)]) {
    assertEquals([view.tokenProgram, view.transferFee], ["token-2022", transferFee]);
  }
  assertEquals(Object.keys(buildRecord(doc)).slice(-2), ["tokenProgram", "transferFee"]);
});

Deno.test("one shape: every field the event's schema serves is kept, served in order and documented", () => {
  const served = [...SERVED.head, ...SERVED.tail];
  // Kept: the record holds every served field (and KEPT lists them in the record's order).
  for (const k of served) assert((KEPT as readonly string[]).includes(k), k);
  // Served: the record's build fields are exactly those, around the lifecycle.
  const recordKeys = Object.keys(BuildRecord.shape);
  assertEquals(recordKeys.slice(0, SERVED.head.length), [...SERVED.head]);
  assertEquals(recordKeys.slice(-SERVED.tail.length), [...SERVED.tail]);
  const lifecycle = recordKeys.slice(SERVED.head.length, -SERVED.tail.length);
  for (const k of lifecycle) assertEquals(k in TokenBuiltData.shape, false, k);
  // Documented: the OpenAPI schema has each, with the event schema's own description.
  const api = openApiDocument({ serverUrl: "https://api.example.test" }) as unknown as {
    components: {
      schemas: Record<string, { properties: Record<string, { description?: string }> }>;
    };
  };
  const documented = api.components.schemas.BuildRecord.properties;
  for (const k of served) {
    assert(k in documented, k);
    assertEquals(documented[k].description, TokenBuiltData.shape[k].description, k);
  }
  // And the fold keeps each one as the event carries it.
  const doc = record({
    tokenProgram: "token-2022",
    transferFee: { basisPoints: 1, maximum: "2", authority: null },
    mintAuthority: "Mint1Authority111",
    freezeAuthority: "Freeze1Authority111",
    updateAuthority: "Update1Authority111",
    nonceAccount: "Nonce1Account111",
  }) as unknown as Record<string, unknown>;
  for (const k of served) assert(doc[k] !== undefined, k);
});

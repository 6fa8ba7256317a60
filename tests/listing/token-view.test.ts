/**
 * The build record's one schema shapes what GET /v1/tokens/{mint} and GET /v1/tokens serve: the
 * documented fields in the documented order, nothing of the record's internals, and the
 * Token-2022 fields only when the mint has them.
 */
import { assertEquals } from "../support/assert.ts";
import { type BuildDoc, buildsProjection } from "../../projections/builds.ts";
import { buildListItem, buildRecord } from "../../src/listing/token-view.ts";
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

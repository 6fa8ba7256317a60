import { assertEquals } from "../support/assert.ts";
import {
  buildByMessageProjection,
  buildByMintProjection,
  buildByReferenceProjection,
  buildBySignatureProjection,
  type BuildDoc,
  buildsProjection,
  openBuildsProjection,
} from "../../projections/builds.ts";
import { event, given } from "./support/events.ts";

const built = event("TokenBuilt");
const doc = (history: ReturnType<typeof event>[], next: ReturnType<typeof event>) =>
  given(buildsProjection, history).when(next).doc([7]) as BuildDoc | null;

Deno.test("build: given nothing, when TokenBuilt, then a built record in unix seconds", () => {
  const d = doc([], built);
  assertEquals([d?.status, d?.mint, d?.signature, d?.createdAt], [
    "built",
    "Mint111",
    null,
    Math.floor(built.at / 1000),
  ]);
  assertEquals(d?.tokenProgram, undefined);
});

Deno.test("build: given a built record, when submitted, then submitted with its signature", () => {
  const d = doc([built], event("TransactionSubmitted", {}, 3_000));
  assertEquals([d?.status, d?.signature, d?.submittedAt], [
    "submitted",
    "sigT",
    Math.floor(built.at / 1000) + 3,
  ]);
});

Deno.test("build: given a submitted record, when confirmed, then confirmed with what the chain showed", () => {
  const d = doc([built, event("TransactionSubmitted")], event("CreationConfirmed"));
  assertEquals(
    [d?.status, d?.feeVerified, d?.supplyRawSeen, d?.decimalsSeen, d?.confirmedAt, d?.slot],
    ["confirmed", true, "1000000", 6, 1_700_000_100, 42],
  );
});

Deno.test("build: given a confirmed record, when a late submission arrives, then it stays confirmed", () => {
  const d = doc(
    [built, event("CreationConfirmed")],
    event("TransactionSubmitted", { signature: "other" }),
  );
  assertEquals([d?.status, d?.signature], ["confirmed", "sigT"]);
});

Deno.test("build: given a built record, when unverified with the fee paid, then unverified and fee verified", () => {
  const d = doc([built], event("CreationUnverified", {}, 1_000));
  assertEquals([d?.status, d?.feeVerified, d?.problems, d?.confirmedAt], [
    "unverified",
    true,
    ["supply short"],
    Math.floor((built.at + 1_000) / 1000),
  ]);
  const short = doc([built], event("CreationUnverified", { feeLamportsSeen: "4999" }));
  assertEquals(short?.feeVerified, false);
});

Deno.test("build: given a built record, when failed or expired, then that final status", () => {
  assertEquals(doc([built], event("CreationFailed"))?.problems, ["custom program error"]);
  assertEquals(doc([built], event("BuildExpired"))?.status, "expired");
});

Deno.test("build: given no record, when an outcome arrives, then no record", () => {
  assertEquals(doc([], event("CreationConfirmed")), null);
});

Deno.test("lookup indexes: when built and submitted, then mint, message, reference and signature lead to the build", () => {
  assertEquals(given(buildByMintProjection, []).when(built).doc(["Mint111"]), 7);
  assertEquals(given(buildByMessageProjection, []).when(built).doc(["ab".repeat(32)]), 7);
  assertEquals(given(buildByReferenceProjection, []).when(built).doc(["Ref111"]), 7);
  assertEquals(
    given(buildBySignatureProjection, [built]).when(event("TransactionSubmitted")).doc(["sigT"]),
    7,
  );
  // A failure before any signature names none.
  assertEquals(
    given(buildBySignatureProjection, [built]).when(event("CreationFailed", { signature: null }))
      .docs.size,
    0,
  );
});

Deno.test("open_build: given a built record, when submitted it stays open; when an outcome lands it closes", () => {
  const open = given(openBuildsProjection, [built]).when(event("TransactionSubmitted"));
  assertEquals(open.doc([7]), {
    buildId: 7,
    reference: "Ref111",
    mint: "Mint111",
    lastValidBlockHeight: 900,
    createdAt: Math.floor(built.at / 1000),
  });
  for (
    const outcome of [
      "CreationConfirmed",
      "CreationFailed",
      "CreationUnverified",
      "BuildExpired",
    ] as const
  ) {
    assertEquals(given(openBuildsProjection, [built]).when(event(outcome)).doc([7]), null, outcome);
  }
});

Deno.test("build: given a built record, when a version of it failed, then still open with the attempt noted; a later success wins", () => {
  const failed = doc([built], event("TransactionFailed"));
  assertEquals([failed?.status, failed?.failedAttempt, failed?.problems], [
    "built",
    { signature: "sigF", reason: "custom program error" },
    ["custom program error"],
  ]);
  const after = doc([built, event("TransactionFailed")], event("CreationConfirmed"));
  assertEquals(after?.status, "confirmed");
  // The failed version's signature leads to the build too.
  assertEquals(
    given(buildBySignatureProjection, [built]).when(event("TransactionFailed")).doc(["sigF"]),
    7,
  );
  // And the watcher keeps the build open.
  assertEquals(
    given(openBuildsProjection, [built]).when(event("TransactionFailed")).doc([7]) !== null,
    true,
  );
});

Deno.test("build: given a built record, when refreshed at a lower fee, then the new message's validity and fee, the floor the lower", () => {
  const fee = BigInt(doc([], built)!.feeLamports);
  const lower = (fee - 1n).toString();
  const d = doc([built], event("BuildRefreshed", { feeLamports: lower }, 5_000));
  assertEquals(
    [d?.status, d?.blockhash, d?.lastValidBlockHeight, d?.messageHash, d?.feeLamports],
    ["built", "Hash222", 2000, "msg222", lower],
  );
  assertEquals([d?.feeFloorLamports, d?.refreshes, d?.refreshedAt], [
    lower,
    1,
    Math.floor((built.at + 5_000) / 1000),
  ]);
  // Re-priced higher afterwards: the floor stays the lowest fee issued.
  const higher = (fee + 5n).toString();
  const again = doc(
    [built, event("BuildRefreshed", { feeLamports: lower })],
    event("BuildRefreshed", { feeLamports: higher }),
  );
  assertEquals([again?.feeLamports, again?.feeFloorLamports, again?.refreshes], [
    higher,
    lower,
    2,
  ]);
});

Deno.test("build: given an expired record, when refreshed, then built again; a landed one does not move", () => {
  assertEquals(doc([built, event("BuildExpired")], event("BuildRefreshed"))?.status, "built");
  const confirmed = doc([built, event("CreationConfirmed")], event("BuildRefreshed"));
  assertEquals([confirmed?.status, confirmed?.refreshes], ["confirmed", undefined]);
});

Deno.test("build_by_message and open_build: a refresh indexes its message and moves the expiry on", () => {
  const refreshed = event("BuildRefreshed");
  const byMessage = given(buildByMessageProjection, [built]).when(refreshed);
  assertEquals([byMessage.doc(["msg222"]), byMessage.doc(["ab".repeat(32)])], [7, 7]);
  const open = given(openBuildsProjection, [built]).when(refreshed).doc([7]) as {
    lastValidBlockHeight: number;
    createdAt: number;
  };
  assertEquals([open.lastValidBlockHeight, open.createdAt], [2000, Math.floor(built.at / 1000)]);
  // Expired (no longer open), then refreshed: open again.
  const reopened = given(openBuildsProjection, [built, event("BuildExpired")]).when(refreshed)
    .doc([7]) as { lastValidBlockHeight: number } | null;
  assertEquals(reopened?.lastValidBlockHeight, 2000);
});

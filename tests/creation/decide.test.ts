/** Given a build record, when an observation arrives, then these events (and only these). */
import { assertEquals } from "../support/assert.ts";
import { decideLifecycle, type LifecycleCommand } from "../../src/creation/decide.ts";
import type { BuildDoc } from "../../projections/builds.ts";
import type { KeyDoc } from "../../projections/keys.ts";
import type { Assessment } from "../../src/creation/assess.ts";

const build = (over: Partial<BuildDoc> = {}): BuildDoc => ({
  buildId: 7,
  keyId: "k1",
  purchaseId: "p1",
  mint: "Mint",
  name: "N",
  symbol: "S",
  uri: "https://x/m.json",
  payer: "Payer",
  recipient: "Payer",
  recipientTokenAccount: "Ata",
  metadataAccount: "Meta",
  reference: "Ref",
  decimals: 9,
  supplyRaw: "1000",
  feeLamports: "500",
  treasury: "T",
  blockhash: "bh",
  lastValidBlockHeight: 100,
  messageHash: "h",
  status: "built",
  signature: null,
  feeVerified: false,
  feeLamportsSeen: null,
  supplyRawSeen: null,
  problems: [],
  createdAt: 1,
  submittedAt: null,
  confirmedAt: null,
  slot: null,
  ...over,
});

const key = (over: Partial<KeyDoc> = {}): KeyDoc => ({
  keyId: "k1",
  purchaseId: "p1",
  wallet: "W",
  secretMac: "m",
  createdAt: 0,
  rotatedAt: null,
  deleted: false,
  banned: null,
  suspended: null,
  unverifiedCount: 0,
  ...over,
});

const given = (b: BuildDoc, k: KeyDoc | null = key(), threshold = 3) => ({
  when: (cmd: LifecycleCommand) =>
    decideLifecycle(cmd, { build: b, key: k, suspendAfterUnverified: threshold }),
});

const landing = (assessment: Assessment) => ({
  type: "RecordLanding" as const,
  signature: "Sig",
  slot: 9,
  blockTime: 1000,
  assessment,
});

Deno.test("a relayed build is submitted once; the same signature again changes nothing", () => {
  const cmd = { type: "RecordSubmission", signature: "Sig", via: "relay" } as const;
  assertEquals(given(build()).when(cmd).map((e) => e.type), ["TransactionSubmitted"]);
  assertEquals(given(build({ status: "submitted", signature: "Sig" })).when(cmd), []);
});

Deno.test("a clean landing confirms, recording the fee and supply seen", () => {
  const events = given(build({ status: "submitted", signature: "Sig" })).when(
    landing({ status: "confirmed", feeLamportsSeen: 500n, supplyRawSeen: 1000n, problems: [] }),
  );
  assertEquals(events, [{
    type: "CreationConfirmed",
    v: 1,
    data: {
      buildId: 7,
      mint: "Mint",
      signature: "Sig",
      slot: 9,
      blockTime: 1000,
      feeLamportsSeen: "500",
      supplyRaw: "1000",
    },
  }]);
});

Deno.test("a landing seen only by the watcher records the submission first", () => {
  const events = given(build()).when(
    landing({ status: "confirmed", feeLamportsSeen: 500n, supplyRawSeen: 1000n, problems: [] }),
  );
  assertEquals(events.map((e) => e.type), ["TransactionSubmitted", "CreationConfirmed"]);
});

Deno.test("a landing with an error is a fact, not yet the outcome: another version may still succeed", () => {
  const failed = landing({ status: "failed", reason: "landed with an error" });
  const b = build({ status: "submitted", signature: "Sig" });
  assertEquals(given(b).when(failed).map((e) => e.type), ["TransactionFailed"]);
  // Seen again: nothing twice.
  const noted = { ...b, failedAttempt: { signature: "Sig", reason: "landed with an error" } };
  assertEquals(given(noted).when(failed), []);
  // Another version succeeds: the success is the outcome.
  const ok = landing({
    status: "confirmed",
    feeLamportsSeen: 500n,
    supplyRawSeen: 1000n,
    problems: [],
  });
  assertEquals(given(noted).when({ ...ok, signature: "Other" }).map((e) => e.type), [
    "TransactionSubmitted",
    "CreationConfirmed",
  ]);
});

Deno.test("a landing with an error fails the build once its blockhash has expired", () => {
  const events = given(build({ status: "submitted", signature: "Sig" })).when(
    { ...landing({ status: "failed", reason: "landed with an error" }), blockHeight: 101 },
  );
  assertEquals(events.map((e) => e.type), ["CreationFailed"]);
  // At expiry, a failure seen before is the outcome, under its signature.
  const noted = build({ failedAttempt: { signature: "Bad", reason: "custom error" } });
  const expiry = given(noted).when({ type: "RecordExpiry", blockHeight: 101 });
  assertEquals(expiry.map((e) => e.type), ["TransactionSubmitted", "CreationFailed"]);
  assertEquals(expiry[1].data, {
    buildId: noted.buildId,
    mint: noted.mint,
    signature: "Bad",
    reason: "custom error",
  });
  assertEquals(given(noted).when({ type: "RecordExpiry", blockHeight: 100 }), []);
});

const feeless = landing({
  status: "unverified",
  feeLamportsSeen: 0n,
  supplyRawSeen: 1000n,
  problems: ["no fee"],
});

Deno.test("a fee-less landing is unverified, and the one past the threshold suspends the key", () => {
  const b = build({ status: "submitted", signature: "Sig" });
  assertEquals(given(b, key({ unverifiedCount: 2 })).when(feeless).map((e) => e.type), [
    "CreationUnverified",
  ]);
  assertEquals(given(b, key({ unverifiedCount: 3 })).when(feeless).map((e) => e.type), [
    "CreationUnverified",
    "KeySuspended",
  ]);
  assertEquals(
    given(b, key({ unverifiedCount: 5, suspended: "x" })).when(feeless).map((e) => e.type),
    [
      "CreationUnverified",
    ],
  );
});

Deno.test("fee-less landings count per purchase: a fresh key inherits what deleted keys left", () => {
  const b = build({ status: "submitted", signature: "Sig", keyId: "old" });
  const fresh = key({ keyId: "new", unverifiedCount: 0 });
  const state = (recordedUnverified: number) => ({
    build: b,
    key: fresh,
    suspendAfterUnverified: 3,
    recordedUnverified,
  });
  assertEquals(decideLifecycle(feeless, state(2)).map((e) => e.type), ["CreationUnverified"]);
  const events = decideLifecycle(feeless, state(3));
  assertEquals(events.map((e) => e.type), ["CreationUnverified", "KeySuspended"]);
  // The verdict falls on the key in use, not on the deleted key that made the build.
  assertEquals((events[1].data as { keyId: string }).keyId, "new");
});

Deno.test("expiry happens only past lastValidBlockHeight, and final records never move", () => {
  assertEquals(given(build()).when({ type: "RecordExpiry", blockHeight: 100 }), []);
  assertEquals(given(build()).when({ type: "RecordExpiry", blockHeight: 101 }).map((e) => e.type), [
    "BuildExpired",
  ]);
  for (const status of ["confirmed", "failed", "unverified", "expired"] as const) {
    const b = build({ status, signature: "Sig" });
    assertEquals(given(b).when({ type: "RecordExpiry", blockHeight: 500 }), []);
    assertEquals(given(b).when(landing({ status: "failed", reason: "x" })), []);
    assertEquals(given(b).when({ type: "RecordSubmission", signature: "Other", via: "relay" }), []);
  }
});

/** Given a build record, when an observation arrives, then these events (and only these). */
import { assertEquals } from "../support/assert.ts";
import { decideLifecycle, type LifecycleCommand } from "../../src/creation/decide.ts";
import type { BuildDoc } from "../../projections/builds.ts";
import type { KeyDoc } from "../../projections/keys.ts";
import type { Assessment } from "../../src/creation/assess.ts";
import type { ConductPolicy } from "../../src/config.ts";
import {
  EMPTY_CONDUCT,
  type Landing,
  type PurchaseConductDoc,
  RECENT_LANDINGS,
} from "../../projections/conduct.ts";

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

const policy: ConductPolicy = {
  refusePayerAfter: 1,
  keyWalletTolerated: 3,
  share: 0.5,
  minPayers: 10,
};

/** A purchase's conduct: `n` landings of the given kind, from payers named by `payer(i)`. */
const conductOf = (
  n: number,
  over: Partial<Landing> = {},
  payer = (i: number) => `Payer${i}`,
): PurchaseConductDoc => ({
  byKeyWallet: 0,
  recent: Array.from({ length: n }, (_, i) => ({
    ok: false,
    payer: payer(i),
    mint: `M${i}`,
    signature: `S${i}`,
    at: i,
    ...over,
  })),
});

const given = (
  b: BuildDoc,
  k: KeyDoc | null = key(),
  conduct: PurchaseConductDoc = EMPTY_CONDUCT,
  purchaseWallet = "W",
) => ({
  when: (cmd: LifecycleCommand) =>
    decideLifecycle(cmd, { build: b, key: k, conduct, purchaseWallet, policy }),
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
      keyId: "k1",
      purchaseId: "p1",
      payer: "Payer",
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

Deno.test("an end user's fee-less landings are the payer's: the key stays, however many it lands", () => {
  const b = build({ status: "submitted", signature: "Sig", payer: "Stranger" });
  for (const n of [0, 3, 9, 49]) {
    const before = conductOf(n, {}, () => "Stranger");
    const events = given(b, key(), before).when(feeless);
    assertEquals(events.map((e) => e.type), ["CreationUnverified"]);
    assertEquals(events[0].data, {
      ...events[0].data,
      payer: "Stranger",
      purchaseId: "p1",
      byKeyWallet: false,
    });
  }
});

Deno.test("the key's own wallet landing fee-less creations past the threshold suspends the key", () => {
  const b = build({ status: "submitted", signature: "Sig", payer: "W" });
  const own = (n: number) => ({
    ...conductOf(n, { byKeyWallet: true }, () => "W"),
    byKeyWallet: n,
  });
  assertEquals(given(b, key(), own(2)).when(feeless).map((e) => e.type), ["CreationUnverified"]);
  const events = given(b, key(), own(3)).when(feeless);
  assertEquals(events.map((e) => e.type), ["CreationUnverified", "KeySuspended"]);
  assertEquals(
    (events[1].data as { reason: string }).reason,
    "4 creations paid by the key's own wallet landed unverified (the fee, the supply or the mint was wrong)",
  );
  // Already suspended: no second verdict.
  assertEquals(
    given(b, key({ suspended: "x" }), own(5)).when(feeless).map((e) => e.type),
    ["CreationUnverified"],
  );
});

Deno.test("a share of recent landings unverified suspends the key only from enough distinct payers", () => {
  const b = build({ status: "submitted", signature: "Sig", payer: "Payer9" });
  // Nine payers, each landing many: never enough, whatever the share.
  const nine = conductOf(60, {}, (i) => `Payer${i % 9}`);
  const b0 = build({ status: "submitted", signature: "Sig", payer: "Payer0" });
  assertEquals(given(b0, key(), nine).when(feeless).map((e) => e.type), ["CreationUnverified"]);
  // A tenth payer, with the unverified more than half of the window: suspended.
  const ten = conductOf(9, {}, (i) => `Payer${i}`);
  const events = given(b, key(), ten).when(feeless);
  assertEquals(events.map((e) => e.type), ["CreationUnverified", "KeySuspended"]);
  assertEquals(
    (events[1].data as { reason: string }).reason,
    "10 of the last 10 creations landed unverified, paid by 10 different wallets",
  );
  // Beside nine verified landings, the tenth payer's makes 10 unverified of 19: past half.
  const mixed: PurchaseConductDoc = {
    byKeyWallet: 0,
    recent: [...conductOf(9, { ok: true }).recent, ...ten.recent],
  };
  assertEquals(given(b, key(), mixed).when(feeless).map((e) => e.type), [
    "CreationUnverified",
    "KeySuspended",
  ]);
  // Beside ten verified: 10 of 20, not past half.
  const moreVerified: PurchaseConductDoc = {
    byKeyWallet: 0,
    recent: [...conductOf(10, { ok: true }).recent, ...ten.recent],
  };
  assertEquals(given(b, key(), moreVerified).when(feeless).map((e) => e.type), [
    "CreationUnverified",
  ]);
  // Only the latest RECENT_LANDINGS count: old verified landings scroll out of the window.
  const old: PurchaseConductDoc = {
    byKeyWallet: 0,
    recent: [...conductOf(RECENT_LANDINGS, { ok: true }).recent, ...conductOf(51).recent]
      .slice(-RECENT_LANDINGS),
  };
  assertEquals(given(b, key(), old).when(feeless).map((e) => e.type), [
    "CreationUnverified",
    "KeySuspended",
  ]);
});

Deno.test("a confirmed landing names its key, purchase and payer for the conduct folds", () => {
  const b = build({ status: "submitted", signature: "Sig" });
  const [e] = given(b).when(
    landing({ status: "confirmed", feeLamportsSeen: 500n, supplyRawSeen: 1000n, problems: [] }),
  );
  assertEquals(e.type, "CreationConfirmed");
  const d = e.data as { keyId: string; purchaseId: string; payer: string };
  assertEquals([d.keyId, d.purchaseId, d.payer], ["k1", "p1", "Payer"]);
});

Deno.test("own-wallet landings count per purchase: a fresh key inherits what deleted keys left", () => {
  const b = build({ status: "submitted", signature: "Sig", keyId: "old", payer: "W" });
  const fresh = key({ keyId: "new", unverifiedCount: 0 });
  const state = (byKeyWallet: number) => ({
    build: b,
    key: fresh,
    conduct: { ...EMPTY_CONDUCT, byKeyWallet },
    purchaseWallet: "W",
    policy,
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

Deno.test("a durable nonce build: no height expires it; its nonce moving on does, with the reason", () => {
  const nonceBuild = build({ lastValidBlockHeight: null, nonceAccount: "Nonce", blockhash: "N1" });
  // Any height, nonce unmoved: still open.
  assertEquals(given(nonceBuild).when({ type: "RecordExpiry", blockHeight: 10 ** 9 }), []);
  const moved = { type: "RecordExpiry", blockHeight: 5, nonceMoved: { now: "N2" } } as const;
  assertEquals(given(nonceBuild).when(moved), [{
    type: "BuildExpired",
    v: 1,
    data: {
      buildId: 7,
      mint: "Mint",
      blockHeight: 5,
      reason: "the nonce account's nonce moved on (now N2) without this build's transaction " +
        "landing: it can no longer land; build again",
    },
  }]);
  const gone = given(nonceBuild).when({ ...moved, nonceMoved: { now: null } });
  assertEquals(gone.map((e) => e.type), ["BuildExpired"]);
  // A failed version seen before is the outcome instead.
  const failedBefore = build({
    lastValidBlockHeight: null,
    nonceAccount: "Nonce",
    failedAttempt: { signature: "F", reason: "landed with an error" },
  });
  assertEquals(given(failedBefore).when(moved).map((e) => e.type), [
    "TransactionSubmitted",
    "CreationFailed",
  ]);
  // A failure found: final once the nonce moved on (the failed one moved it), not before.
  const failed = landing({ status: "failed", reason: "landed with an error" });
  assertEquals(given(nonceBuild).when({ ...failed, blockHeight: 10 ** 9 }).map((e) => e.type), [
    "TransactionFailed",
  ]);
  assertEquals(given(nonceBuild).when({ ...failed, nonceMoved: true }).map((e) => e.type), [
    "TransactionSubmitted",
    "CreationFailed",
  ]);
});

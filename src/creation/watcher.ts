/**
 * Learns outcomes of builds that were submitted anywhere, relay or the caller's own RPC, at an
 * RPC cost that does not grow with the number of open builds:
 *
 * - every sweep (2 s), one getSignaturesForAddress(treasury, { until: the last one seen }) lists
 *   every new transaction that pays us; each is read once (getTransaction) and matched to open
 *   builds by the reference keys and mints it carries. Only a transaction the build's payer
 *   signed settles it; anyone else's is noted as foreign and ignored;
 * - every full sweep (10 s), the open builds' mints are read in batches of 100
 *   (getMultipleAccounts): a creation can land without paying us, and then only its mint shows
 *   it. A durable nonce build's nonce account is read in the same batches (no call of its own):
 *   it does not expire by height but when its nonce moves on. A build whose mint exists, whose
 *   blockhash has expired or whose nonce moved on is looked up by its mint or reference (paged,
 *   payer-signed only) once, to record it, fail it, or expire it.
 *
 * With no open build a sweep makes no call at all. The open-build set is a projection and the
 * treasury cursor a KV entry, so a restart simply walks on. Relayed transactions are re-broadcast
 * until the cluster has seen them or they expire, as Solana's guidance on retrying transactions
 * recommends.
 */
import { type AccountInfo, PublicKey, SystemProgram } from "@solana/web3.js";
import { base64Decode } from "../kernel/encoding.ts";
import { toHex } from "../kernel/hashing.ts";
import {
  buildByMintProjection,
  buildByReferenceProjection,
  type OpenBuildDoc,
  openBuildsProjection,
} from "../../projections/builds.ts";
import { kvReads, readList, readMany } from "../commands/read.ts";
import type { Services } from "../services.ts";
import type { QueueDispatcher } from "../queue.ts";
import { addressHistory } from "../solana/address-history.ts";
import { noteForeign } from "../solana/foreign-transactions.ts";
import { assessCreation } from "./assess.ts";
import { buildById } from "./build-records.ts";
import {
  clusterHasSeen,
  findPayerTransaction,
  type LookupLimits,
  readLanded,
  signedByPayer,
  type SignedLanding,
  speaksFor,
} from "./chain-reader.ts";
import { recordLifecycle } from "./handle.ts";
import { storedNonce } from "../solana/nonce-account.ts";
import { FOLLOW_MS, type FollowMessage, followUpdate } from "./update-follow.ts";

export const REBROADCAST_MS = 2_000;
export const SWEEP_MS = 2_000;
/** Mints and expiry are checked this often; a fee-less landing is seen within this time. */
export const FULL_SWEEP_MS = 10_000;
/** Re-broadcasts of one transaction, at most, whatever the block height says. */
const MAX_REBROADCASTS = 90;
/** getMultipleAccounts takes at most 100 accounts. */
const ACCOUNTS_PER_CALL = 100;
/**
 * Treasury transactions read per sweep; the rest wait for the next one. Anyone can send the
 * treasury a lamport: a flood of them delays landings by sweeps, and cannot cost more than this.
 */
const SCAN_READS = 50;
const SCAN_PAGES = 5;
/**
 * The first scan (no cursor) goes back to the oldest open build, less this margin between our
 * clock and the cluster's block times. A landing it misses is still found by its mint.
 */
const FIRST_SCAN_SLACK_S = 120;
/** Sweeps a listed but unreadable treasury transaction may hold the cursor before it is passed. */
const MAX_STUCK_SWEEPS = 30;
/** KV's getMany limit. */
const GET_MANY = 10;
/**
 * Blocks past its blockhash's validity after which a build whose mint was never created expires
 * even if its lookup is uncertain. The lookup pages back from the newest transaction, so anyone
 * who lands more transactions carrying the reference than it pages through keeps it uncertain
 * for good, and the build open, each full sweep paying the whole page bound again. With no mint
 * no creation ran, and by now every node has the payer's transaction, if any, to read.
 */
const UNCERTAIN_EXPIRY_BLOCKS = 150;

/**
 * The treasury scan's cursor belongs to one treasury on one cluster: after a change of
 * `TREASURY_ADDRESS` or `SOLANA_RPC_URL` on the same KV, another's cursor would name a signature
 * the new listing never reaches. The RPC URL is hashed (a paid one carries its key).
 */
async function cursorKey(s: Services): Promise<Deno.KvKey> {
  const url = new TextEncoder().encode(s.connection.rpcEndpoint);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", url));
  return ["watcher", "treasury_cursor", s.treasury.toBase58(), toHex(digest).slice(0, 32)];
}
const HEIGHT = ["watcher", "block_height"];

interface TreasuryCursor {
  signature: string | null;
  /** A listed transaction that could not be read yet, and for how many sweeps. */
  stuck?: { signature: string; sweeps: number };
}

/** The block height the last full sweep read, and when (ms). */
interface HeightReading {
  height: number;
  at: number;
}

export interface SweepResult {
  open: number;
  /** Treasury transactions read and matched. */
  scanned: number;
  /** Open builds looked up one by one (mint exists or blockhash expired). */
  settled: number;
}

function openBuilds(s: Services): Promise<OpenBuildDoc[]> {
  return readList(s.kv, openBuildsProjection, []);
}

/**
 * One pass. `full` (the default, as the deploy cron and tests call it) also checks mints and
 * expiry. Safe to run concurrently with itself and with the relay: every outcome is decided
 * from the build's current record, so a landing seen twice is recorded once.
 */
export async function sweepOpenBuilds(
  s: Services,
  opts: { full?: boolean; lookup?: LookupLimits } = {},
): Promise<SweepResult> {
  const open = await openBuilds(s);
  if (open.length === 0) return { open: 0, scanned: 0, settled: 0 };
  const scanned = await scanTreasury(s, open);
  const settled = opts.full === false ? 0 : await checkOpenBuilds(s, opts.lookup);
  return { open: open.length, scanned, settled };
}

/** Reads the treasury's new transactions, oldest first, and records the builds they settle. */
async function scanTreasury(s: Services, open: OpenBuildDoc[]): Promise<number> {
  const cursorAt = await cursorKey(s);
  const cursor = (await s.kv.get<TreasuryCursor>(cursorAt)).value;
  // A document from before `createdAt` was kept: builds stay open minutes, not an hour.
  const hourAgo = Math.floor(s.clock() / 1000) - 3600;
  const oldest = Math.min(...open.map((o) => o.createdAt ?? hourAgo));
  const walk = await addressHistory(s.connection, s.treasury, {
    until: cursor?.signature ?? undefined,
    since: cursor?.signature ? undefined : oldest - FIRST_SCAN_SLACK_S,
    maxPages: SCAN_PAGES,
  });
  if (!walk.complete) {
    // Older ones are left to the full sweep, which finds any landed build by its mint.
    s.logger.log("warn", "watcher: treasury scan stopped at its page bound", {
      pages: walk.pages,
      listed: walk.signatures.length,
    });
  }
  // The last transaction handled: the next sweep lists only newer ones.
  let done = cursor?.signature ?? null;
  let read = 0;
  for (const sig of walk.signatures) {
    if (read >= SCAN_READS) break;
    read++;
    const tx = await readLanded(s.connection, sig.signature);
    if (!tx) {
      // Listed but not readable yet (a node behind another): the cursor stays before it, so the
      // next sweep reads it, unless it has held the cursor for long.
      const sweeps = cursor?.stuck?.signature === sig.signature ? cursor.stuck.sweeps + 1 : 1;
      if (sweeps < MAX_STUCK_SWEEPS) {
        await s.kv.set(cursorAt, { signature: done, stuck: { signature: sig.signature, sweeps } });
        return read;
      }
      s.logger.log("warn", "watcher: passed a treasury transaction that stayed unreadable", {
        signature: sig.signature,
        sweeps,
      });
    } else {
      await settleWith(s, tx);
    }
    done = sig.signature;
  }
  if (done !== (cursor?.signature ?? null) || cursor?.stuck) {
    await s.kv.set(cursorAt, { signature: done } satisfies TreasuryCursor);
  }
  return read;
}

/** The open builds a landed transaction carries (by reference or mint), each settled once. */
async function settleWith(s: Services, tx: SignedLanding): Promise<void> {
  const keys = [...new Set(tx.accountKeys)];
  const lookups = keys.flatMap((k) => [
    [buildByReferenceProjection, [k]] as const,
    [buildByMintProjection, [k]] as const,
  ]);
  const ids = new Set<number>();
  for (let i = 0; i < lookups.length; i += GET_MANY) {
    for (const id of await readMany(kvReads(s.kv), lookups.slice(i, i + GET_MANY))) {
      if (typeof id === "number") ids.add(id);
    }
  }
  for (const id of ids) {
    const build = await buildById(s.kv, id);
    if (!build) continue;
    // Noted even when the build is settled already: someone is sending our references around.
    if (!signedByPayer(tx, build.payer)) {
      await noteForeign(s.kv, s.logger, {
        signature: tx.signature,
        address: build.reference,
        buildId: id,
        signers: tx.signers,
      });
      continue;
    }
    // The payer's, but it created nothing (speaksFor): not this build's landing.
    if (!speaksFor(tx, build)) continue;
    if (build.status !== "built" && build.status !== "submitted") continue;
    await recordLifecycle(s, id, {
      type: "RecordLanding",
      signature: tx.signature,
      slot: tx.slot,
      blockTime: tx.blockTime,
      assessment: assessCreation(build, tx),
    });
  }
}

/**
 * The slower pass: mints, and the nonce accounts of durable nonce builds, in batches of 100
 * accounts; and the block height. A build is looked up on its own only when its mint exists (it
 * landed, perhaps without paying us), its blockhash expired or its nonce moved on.
 */
async function checkOpenBuilds(s: Services, limits?: LookupLimits): Promise<number> {
  const open = await openBuilds(s);
  if (open.length === 0) return 0;
  const height = await s.connection.getBlockHeight("confirmed");
  await s.kv.set(HEIGHT, { height, at: s.clock() } satisfies HeightReading);
  const keys = open.flatMap((o) => o.nonce ? [o.mint, o.nonce.account] : [o.mint]);
  const infos: (AccountInfo<Uint8Array> | null)[] = [];
  for (let i = 0; i < keys.length; i += ACCOUNTS_PER_CALL) {
    const chunk = keys.slice(i, i + ACCOUNTS_PER_CALL).map((k) => new PublicKey(k));
    infos.push(...await s.connection.getMultipleAccountsInfo(chunk, "confirmed"));
  }
  let settled = 0;
  let at = 0;
  for (const o of open) {
    const created = isCreated(infos[at++]);
    const moved = o.nonce ? nonceMoved(o.nonce, infos[at++]) : undefined;
    const expired = o.lastValidBlockHeight === null
      ? moved !== undefined
      : height > o.lastValidBlockHeight;
    if (!created && !expired) continue;
    settled++;
    try {
      await settleOne(s, o, created, height, limits, moved);
    } catch (err) {
      // One build's RPC trouble must not stop the others; it stays open for the next pass.
      s.logger.log("warn", "watcher: build check failed", {
        buildId: o.buildId,
        error: String(err),
      });
    }
  }
  return settled;
}

/**
 * Whether a durable nonce build's message can no longer land: undefined while the account still
 * holds the nonce its message uses under the payer's authority; else what it holds now (null: no
 * nonce any more, e.g. withdrawn) and, when the nonce stayed but was handed to another authority
 * (the payer's signature no longer advances it), that authority.
 */
function nonceMoved(
  nonce: { value: string; authority: string },
  info: AccountInfo<Uint8Array> | null,
): { now: string | null; authority?: string } | undefined {
  const stored = storedNonce(info);
  if (!stored) return { now: null };
  const authority = stored.authority.toBase58();
  if (stored.nonce !== nonce.value) return { now: stored.nonce };
  return authority === nonce.authority ? undefined : { now: stored.nonce, authority };
}

/**
 * Only the payer can create an account at an address derived from its own key and a seed, so a
 * mint owned by a program means the creation ran. Lamports sent to the address by anyone leave
 * it owned by the System program: not created.
 */
function isCreated(info: AccountInfo<Uint8Array> | null): boolean {
  return info !== null && !info.owner.equals(SystemProgram.programId);
}

async function settleOne(
  s: Services,
  open: OpenBuildDoc,
  created: boolean,
  height: number,
  limits?: LookupLimits,
  nonceMoved?: { now: string | null; authority?: string },
) {
  const build = await buildById(s.kv, open.buildId);
  if (!build) return;
  const about = { buildId: open.buildId };
  let lookup = created
    ? await findPayerTransaction(s, build.mint, build, about, limits)
    : { found: null, uncertain: false };
  if (!lookup.found && !lookup.uncertain) {
    lookup = await findPayerTransaction(s, build.reference, build, about, limits);
  }
  // The mint exists, so the payer signed what created it, in a way not recognised above (through
  // another program): the payer's oldest transaction that carries the mint stands for it.
  if (created && !lookup.found && !lookup.uncertain) {
    lookup = await findPayerTransaction(s, build.mint, build.payer, about, limits);
  }
  const { found, uncertain } = lookup;
  if (found) {
    await recordLifecycle(s, open.buildId, {
      type: "RecordLanding",
      signature: found.signature,
      slot: found.slot,
      blockTime: found.blockTime,
      assessment: assessCreation(build, found),
      // The lookup prefers a success: past the blockhash, a failure found is the outcome.
      blockHeight: height,
      nonceMoved: nonceMoved !== undefined,
    });
    return;
  }
  // Listed but not readable yet, or a bound cut the lookup short: it may be the payer's
  // landing, so the build must not expire yet; the next full sweep looks again.
  if (created) return;
  if (open.lastValidBlockHeight === null) {
    // A durable nonce that moved on, and no mint: its message can never land now, so even an
    // uncertain lookup leaves nothing to wait for. A failed version the treasury scan saw is the
    // outcome (decide.ts).
    if (nonceMoved) {
      await recordLifecycle(s, open.buildId, {
        type: "RecordExpiry",
        blockHeight: height,
        nonceMoved,
      });
    }
    return;
  }
  if (uncertain && height <= open.lastValidBlockHeight + UNCERTAIN_EXPIRY_BLOCKS) return;
  if (height > open.lastValidBlockHeight) {
    await recordLifecycle(s, open.buildId, { type: "RecordExpiry", blockHeight: height });
  }
}

/**
 * One re-broadcast of a relayed transaction; false when there is nothing more to do: the record
 * moved on, the cluster has seen it (processed or later: sending again only costs a call, and
 * the watcher records its outcome), or its blockhash expired.
 */
export async function rebroadcast(
  s: Services,
  msg: { buildId: number; transaction: string; signature: string; attempt?: number },
) {
  const build = await buildById(s.kv, msg.buildId);
  if (!build || build.status !== "submitted" || build.signature !== msg.signature) return false;
  if ((msg.attempt ?? 0) >= MAX_REBROADCASTS) return false;
  if (await clusterHasSeen(s.connection, msg.signature)) return false;
  // A durable nonce build has no height to pass: MAX_REBROADCASTS bounds it, and a spent nonce
  // makes the cluster drop the send.
  if (build.lastValidBlockHeight === null) return await resend(s, msg.transaction);
  // The full sweep's reading when it is recent (at worst a few sends too many); else ask.
  const reading = (await s.kv.get<HeightReading>(HEIGHT)).value;
  const height = reading && s.clock() - reading.at <= 2 * FULL_SWEEP_MS
    ? reading.height
    : await s.connection.getBlockHeight("confirmed");
  if (height > build.lastValidBlockHeight) return false;
  return await resend(s, msg.transaction);
}

async function resend(s: Services, transaction: string): Promise<true> {
  try {
    await s.connection.sendRawTransaction(base64Decode(transaction), {
      skipPreflight: true,
      maxRetries: 0,
    });
  } catch {
    // Temporarily refused: the next attempt tries again.
  }
  return true;
}

/**
 * Schedules both jobs on the KV queue. Each sweep message enqueues the next one, once, whether the
 * sweep worked or not; a generation key makes loops from an earlier start of the process die out
 * instead of multiplying.
 */
export async function startWatcher(
  s: Services,
  queue: QueueDispatcher,
  opts: { sweepMs?: number; fullSweepMs?: number } = {},
) {
  const sweepMs = opts.sweepMs ?? SWEEP_MS;
  const fullSweepMs = opts.fullSweepMs ?? FULL_SWEEP_MS;
  const generation = crypto.randomUUID();
  let lastFull = -Infinity;
  await s.kv.set(["watcher", "generation"], generation);
  queue.on("sweep", async (m) => {
    const current = (await s.kv.get<string>(["watcher", "generation"])).value;
    if (m.generation !== current) return;
    try {
      const full = s.clock() - lastFull >= fullSweepMs;
      await sweepOpenBuilds(s, { full });
      if (full) lastFull = s.clock();
    } catch (err) {
      // Logged, not rethrown: a rethrow has KV deliver this message again, and that delivery would
      // schedule a second next sweep, so every failed sweep (an RPC outage) would add a loop.
      s.logger.log("warn", "watcher: sweep failed", { error: String(err) });
    }
    await s.kv.enqueue({ kind: "sweep", generation }, { delay: sweepMs });
  });
  queue.on("rebroadcast", async (m) => {
    const msg = m as unknown as {
      buildId: number;
      transaction: string;
      signature: string;
      attempt: number;
    };
    if (await rebroadcast(s, msg)) {
      await s.kv.enqueue({ ...msg, attempt: msg.attempt + 1 }, { delay: REBROADCAST_MS });
    }
  });
  // A relayed update's follow-up (update-follow.ts) runs on the same queue and connection.
  queue.on("update-follow", async (m) => {
    const msg = m as unknown as FollowMessage;
    if (await followUpdate(s, msg)) {
      await s.kv.enqueue({ ...msg, attempt: msg.attempt + 1 }, { delay: FOLLOW_MS });
    }
  });
  queue.listen();
  await s.kv.enqueue({ kind: "sweep", generation }, {
    keysIfUndelivered: [["undelivered", "sweep", generation]],
  });
}

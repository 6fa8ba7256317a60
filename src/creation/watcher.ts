/**
 * Learns outcomes of builds that were submitted anywhere, relay or the caller's own RPC: each
 * open build's reference key is looked up with getSignaturesForAddress until its transaction
 * lands (verified and recorded) or its blockhash expires (BuildExpired). The open-build set is a
 * projection, so a restart simply walks it again. Also re-broadcasts relayed transactions until
 * they land or expire, as Solana's guidance on retrying transactions recommends.
 */
import { projectionKey } from "../../events/keys.ts";
import { buildById } from "./build-records.ts";
import type { OpenBuildDoc } from "../../projections/builds.ts";
import type { Services } from "../services.ts";
import type { QueueDispatcher } from "../queue.ts";
import { assessCreation } from "./assess.ts";
import { findPayerTransaction } from "./chain-reader.ts";
import { recordLifecycle } from "./handle.ts";

export const REBROADCAST_MS = 2_000;
const SWEEP_MS = 2_000;

/** Looks at one open build once; returns its status afterwards. */
export async function checkOpenBuild(s: Services, open: OpenBuildDoc, blockHeight: number) {
  const build = await buildById(s.kv, open.buildId);
  if (!build) return null;
  const { found, uncertain } = await findPayerTransaction(
    s,
    open.reference,
    build.payer,
    { buildId: open.buildId },
  );
  if (found) {
    const { build: after } = await recordLifecycle(s, open.buildId, {
      type: "RecordLanding",
      signature: found.signature,
      slot: found.slot,
      blockTime: found.blockTime,
      assessment: assessCreation(build, found),
    });
    return after?.status ?? null;
  }
  // Listed but not readable yet (a node behind another, or still indexing): it may be the
  // payer's landing, so the build must not expire; the next sweep reads it.
  if (uncertain) return "open";
  if (blockHeight > open.lastValidBlockHeight) {
    const { build } = await recordLifecycle(s, open.buildId, { type: "RecordExpiry", blockHeight });
    return build?.status ?? null;
  }
  return "open";
}

/** One pass over every open build. Safe to run concurrently with itself and with the relay. */
export async function sweepOpenBuilds(s: Services): Promise<{ checked: number }> {
  const blockHeight = await s.connection.getBlockHeight("confirmed");
  let checked = 0;
  for await (const e of s.kv.list<OpenBuildDoc>({ prefix: projectionKey("open_build", []) })) {
    checked++;
    try {
      await checkOpenBuild(s, e.value, blockHeight);
    } catch (err) {
      // One build's RPC trouble must not stop the others; it stays open for the next pass.
      s.logger.log("warn", "watcher: build check failed", {
        buildId: e.value.buildId,
        error: String(err),
      });
    }
  }
  return { checked };
}

export async function rebroadcast(
  s: Services,
  msg: { buildId: number; transaction: string; signature: string },
) {
  const build = await buildById(s.kv, msg.buildId);
  if (!build || build.status !== "submitted" || build.signature !== msg.signature) return false;
  const height = await s.connection.getBlockHeight("confirmed");
  if (height > build.lastValidBlockHeight) return false;
  const bytes = Uint8Array.from(atob(msg.transaction), (c) => c.charCodeAt(0));
  try {
    await s.connection.sendRawTransaction(bytes, { skipPreflight: true, maxRetries: 0 });
  } catch {
    // Already landed or temporarily refused: the watcher decides, we just keep trying.
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
  opts: { sweepMs?: number } = {},
) {
  const sweepMs = opts.sweepMs ?? SWEEP_MS;
  const generation = crypto.randomUUID();
  await s.kv.set(["watcher", "generation"], generation);
  queue.on("sweep", async (m) => {
    const current = (await s.kv.get<string>(["watcher", "generation"])).value;
    if (m.generation !== current) return;
    try {
      await sweepOpenBuilds(s);
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
  queue.listen();
  await s.kv.enqueue({ kind: "sweep", generation }, {
    keysIfUndelivered: [["undelivered", "sweep", generation]],
  });
}

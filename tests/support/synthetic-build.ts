/**
 * A TokenBuilt event for a build nobody will send: random addresses, a last valid block height
 * of the caller's choosing. The watcher cannot tell it from a real build not sent yet, so tests
 * and the benchmark can hold hundreds of builds open without hundreds of API calls. Its day is
 * read from `at` (the caller's clock, in ms), never from the wall clock.
 */
import { Keypair } from "@solana/web3.js";
import type { DomainEvent } from "../../events/types.ts";
import { utcDay } from "../../src/kernel/time.ts";

export function syntheticBuild(
  buildId: number,
  k: { keyId: string; purchaseId: string },
  treasury: string,
  lastValidBlockHeight: number,
  at: number,
): DomainEvent {
  const addr = () => Keypair.generate().publicKey.toBase58();
  const payer = addr();
  return {
    type: "TokenBuilt",
    v: 1,
    data: {
      buildId,
      keyId: k.keyId,
      purchaseId: k.purchaseId,
      day: utcDay(at),
      mint: addr(),
      seed: "bench",
      reference: addr(),
      payer,
      recipient: payer,
      recipientTokenAccount: addr(),
      metadataAccount: addr(),
      name: `Open ${buildId}`,
      symbol: "OPEN",
      uri: "https://example.com/m/open.json",
      decimals: 9,
      supplyRaw: "1000000000",
      revokeMint: false,
      revokeFreeze: true,
      immutableMetadata: false,
      feeLamports: "19933334",
      feeUsd: 2.99,
      solUsd: 150,
      treasury,
      blockhash: "11111111111111111111111111111111",
      lastValidBlockHeight,
      messageHash: `bench-${buildId}`,
    },
  };
}

/** Appends `n` such builds, 50 to a commit, with ids from `firstId` on. */
export async function appendOpenBuilds(
  store: {
    append(a: { stream: string; expectedVersion: number; events: DomainEvent[] }[]): unknown;
  },
  n: number,
  o: {
    firstId: number;
    key: { keyId: string; purchaseId: string };
    treasury: string;
    lastValidBlockHeight: number;
    /** The clock reading (ms) the builds are stamped with: their `day`. */
    at: number;
  },
): Promise<void> {
  for (let i = 0; i < n; i += 50) {
    const batch = [];
    for (let j = i; j < Math.min(n, i + 50); j++) {
      const id = o.firstId + j;
      batch.push({
        stream: `build-${id}`,
        expectedVersion: 0,
        events: [syntheticBuild(id, o.key, o.treasury, o.lastValidBlockHeight, o.at)],
      });
    }
    await store.append(batch);
  }
}

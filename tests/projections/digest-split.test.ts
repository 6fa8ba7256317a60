/**
 * The audit's digest fold split between two threads by projection (replay.ts `foldSplit`): each
 * side folds its own projections with its own last touches, and the two digests add up to the
 * digest of the whole fold on one thread.
 */
import { assert, assertEquals } from "../support/assert.ts";
import { EventStore } from "../../events/store.ts";
import { readEvents } from "../../events/log.ts";
import type { StoredEvent } from "../../events/types.ts";
import { allProjections } from "../../projections/index.ts";
import { DigestFolder, LastTouch, splitByWork } from "../../projections/digest-fold.ts";
import { ProjectionDigest } from "../../projections/doc-digest.ts";
import { built, confirmed, DAY1, purchaseWithKey, unverified } from "../audit/fixtures.ts";

async function history(): Promise<StoredEvent[]> {
  const kv = await Deno.openKv(":memory:");
  try {
    const store = new EventStore(kv, { projections: allProjections, now: () => DAY1 });
    await purchaseWithKey(store, "p1", "k1", "WalletA");
    for (let i = 1; i <= 30; i++) {
      const events = [built(i, "k1", "p1", "2026-11-22")];
      if (i % 5 === 0) events.push(unverified(i, "k1", "0"));
      else if (i % 4 !== 0) events.push(confirmed(i));
      await store.append([{ stream: `build-${i}`, expectedVersion: 0, events }]);
    }
    return await Array.fromAsync(readEvents(kv));
  } finally {
    kv.close();
  }
}

function fold(events: StoredEvent[], names: string[], lastTouch: LastTouch, salt: string) {
  const folder = new DigestFolder(
    allProjections.filter((p) => names.includes(p.name)),
    lastTouch,
    salt,
  );
  for (const e of events) assert(folder.apply(e));
  return folder.finish();
}

Deno.test("given a history, when its fold is split by projection, then the digests add up to one thread's", async () => {
  const events = await history();
  const salt = "salt";
  const names = allProjections.map((p) => p.name);
  const one = new LastTouch(allProjections);
  for (const e of events) one.record(e);
  const whole = fold(events, names, one, salt);

  const lastTouch = new LastTouch(allProjections);
  for (const e of events) lastTouch.record(e);
  // Each document is counted once, at its first touch (those that end empty too).
  for (const p of allProjections) {
    const keys = new Set(events.flatMap((e) => p.keysOf(e).map((k) => JSON.stringify(k))));
    assertEquals(lastTouch.documents.get(p.name), keys.size, p.name);
  }
  const work = lastTouch.work;
  for (const [name, n] of work) {
    assertEquals(n, lastTouch.touches.get(name)! + 4 * lastTouch.documents.get(name)!, name);
  }
  const { here, there } = splitByWork(work, 0.4);
  assert(here.length > 0 && there.length > 0, "both sides get projections");
  assertEquals([...here, ...there].sort(), [...names].sort());
  const total = [...work.values()].reduce((a, b) => a + b, 0);
  const away = there.reduce((n, name) => n + work.get(name)!, 0);
  assert(
    away > 0 && away <= 0.4 * total,
    `the other side gets at most its share (${away}/${total})`,
  );

  // The other thread gets the last touches as a structured clone, the way postMessage sends them.
  const parts = structuredClone(lastTouch.take(there));
  const elsewhere = new LastTouch(allProjections.filter((p) => there.includes(p.name)), parts);
  const mine = fold(events, here, lastTouch, salt);
  const theirs = fold(events, there, elsewhere, salt);
  assertEquals(mine.count + theirs.count, whole.count);
  assert(mine.plus(theirs).equals(whole));
  assert(!mine.equals(whole), "one side alone is not the whole");
});

Deno.test("digests made with different salts do not add up", () => {
  let thrown = false;
  try {
    new ProjectionDigest("a").plus(new ProjectionDigest("b"));
  } catch {
    thrown = true;
  }
  assert(thrown);
});

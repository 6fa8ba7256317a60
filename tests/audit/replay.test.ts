/**
 * The audit's replay (src/audit/replay.ts) must reach the same verdict as the in-memory replay on
 * every history: equal when nothing was touched, and the very same mismatches, each named, when
 * the live projections were edited in any way, whether the edit is older than the audit's head
 * (found by the digests, then named document by document) or newer (settled against the log).
 */
import fc from "fast-check";
import { PROJECTIONS } from "../../events/keys.ts";
import { allProjections } from "../../projections/index.ts";
import { replayAndCompare } from "../../src/audit/replay-memory.ts";
import { runAudit } from "../../src/audit/audit.ts";
import { MemorySink } from "../../src/audit/sink.ts";
import { digestKey, Digests } from "../../src/audit/digest.ts";
import { idHash, LastTouches, type Touch } from "../../src/audit/fold.ts";
import { built, workload } from "./fixtures.ts";
import { assert, assertEquals } from "../support/assert.ts";
import { withKvs } from "../support/kv.ts";

async function entries(kv: Deno.Kv, prefix: Deno.KvKey = PROJECTIONS) {
  const out: [Deno.KvKey, unknown][] = [];
  for await (const e of kv.list({ prefix })) out.push([e.key, e.value]);
  return out;
}

/** Ways to edit the live projections behind the log's back. */
const edits = ["field", "delete", "add", "stray", "reorder"] as const;
type Edit = typeof edits[number];

async function edit(kv: Deno.Kv, how: Edit, pick: number): Promise<void> {
  const live = await entries(kv);
  const [key, doc] = live[pick % live.length];
  if (how === "field") {
    await kv.set(key, typeof doc === "object" ? { ...doc, edited: true } : `${doc}!`);
  } else if (how === "delete") {
    await kv.delete(key);
  } else if (how === "add") {
    await kv.set([...key.slice(0, 2), `invented-${pick}`], { invented: true });
  } else if (how === "stray") {
    await kv.set([...PROJECTIONS, "no_such_projection", pick], 1);
  } else if (typeof doc === "object" && doc !== null) {
    // Same document, properties stored in another order: equal as canonical JSON.
    await kv.set(key, Object.fromEntries(Object.entries(doc).reverse()));
  }
}

Deno.test("given edited live projections, the audit names the same mismatches as the in-memory replay", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.tuple(fc.constantFrom(...edits), fc.nat()), { maxLength: 3 }),
      fc.boolean(),
      async (changes, appendAfter) => {
        await withKvs(async (kv, scratch) => {
          const store = await workload(kv);
          for (const [how, pick] of changes) await edit(kv, how, pick);
          // An append after the edits puts them before the audit's head (the digest path).
          if (appendAfter) {
            await store.append([{
              stream: "build-500",
              expectedVersion: 0,
              events: [built(500, "k1", "p1", "2026-11-23")],
            }]);
          }
          const reference = await replayAndCompare(kv, allProjections);
          const sink = new MemorySink();
          const summary = await runAudit({ kv, scratch, sink });
          const named = sink.rows("exceptions").filter((r) => r.kind === "projection_mismatch")
            .map((r) => String(r.detail).slice(0, String(r.detail).indexOf("]: ") + 1));
          assertEquals(named.sort(), reference.mismatches.map((m) => m.key).sort());
          assertEquals(summary.projections.mismatches, reference.mismatches.length);
          if (changes.length === 0) assertEquals(summary.projections.compared, "digest");
          if (appendAfter && reference.mismatches.length) {
            assertEquals(summary.projections.compared, "documents");
          }
        });
      },
    ),
    { numRuns: 30 },
  );
});

Deno.test("digests: the same documents in any order add up the same; one changed line differs, by projection", () => {
  const key = digestKey();
  const docs: [string, string, unknown][] = Array.from(
    { length: 50 },
    (_, i) => [i % 2 ? "build" : "key", `["p","x",${i}]`, { n: i, s: "é🚀".repeat(i) }],
  );
  const a = new Digests(key);
  const b = new Digests(key);
  for (const [f, id, d] of docs) a.add(f, id, d);
  for (const [f, id, d] of [...docs].reverse()) b.add(f, id, d);
  assertEquals(a.differing(b), []);
  b.add("key", "extra", null); // a null document is no document
  assertEquals(a.differing(b), []);
  const c = new Digests(key);
  for (const [f, id, d] of docs) c.add(f, id, id === `["p","x",7]` ? { n: 8 } : d);
  assertEquals(a.differing(c), ["build"]);
  // Another audit's key: nothing carries over from one audit to the next.
  const other = new Digests(digestKey());
  for (const [f, id, d] of docs) other.add(f, id, d);
  assert(a.differing(other).length > 0);
});

Deno.test("last touches: the last position of each of many documents, across the table's growth", () => {
  const last = new LastTouches();
  const touch = (n: number) => ({ id: `["p","d",${n}]` }) as Touch;
  // 300,000 documents, each touched at positions n and n + 7.
  for (let p = 1; p <= 300_007; p++) {
    const ts = [p <= 300_000 ? touch(p) : null, p > 7 ? touch(p - 7) : null];
    last.note(ts.filter((t): t is Touch => t !== null), p);
  }
  for (const n of [1, 2, 65_536, 150_000, 300_000]) {
    // Two ids that share a hash keep the later of their last touches: never an earlier one.
    assert(last.isLast(touch(n), n + 7) || idHashShared(n), `document ${n}`);
    assert(!last.isLast(touch(n), n));
  }
  assert(!last.isLast(touch(400_000), 400_000), "a document never touched has no last touch");
});

/** Whether document `n`'s id shares its 30-bit hash with another of the test's (then it may close later). */
const idHashShared = (n: number) => {
  const h = idHash(`["p","d",${n}]`);
  for (let m = 1; m <= 300_000; m++) if (m !== n && idHash(`["p","d",${m}]`) === h) return true;
  return false;
};

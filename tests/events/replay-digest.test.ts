/**
 * The replay that compares digests instead of documents (projections/replay.ts
 * replayIntoAndCompare) must reach the same verdict as the in-memory replay on every history:
 * equal when nothing was touched, and the very same mismatches, named one by one, when the live
 * projections were edited in any way.
 */
import fc from "fast-check";
import { PROJECTIONS } from "../../events/keys.ts";
import { allProjections } from "../../projections/index.ts";
import { replayAndCompare } from "../../projections/replay-memory.ts";
import { replayIntoAndCompare } from "../../projections/replay.ts";
import { workload } from "../audit/fixtures.ts";
import { assert, assertEquals } from "../support/assert.ts";
import { withKvs } from "../support/kv.ts";

async function entries(kv: Deno.Kv, prefix: Deno.KvKey = PROJECTIONS) {
  const out: [Deno.KvKey, unknown][] = [];
  for await (const e of kv.list({ prefix })) out.push([e.key, e.value]);
  return out;
}

Deno.test("given an untouched history, the replay compares digests and writes nothing", async () => {
  await withKvs(async (kv, scratch) => {
    await workload(kv);
    const reference = await replayAndCompare(kv, allProjections);
    const report = await replayIntoAndCompare(kv, scratch, allProjections);
    assertEquals(report.compared, "digest");
    assert(report.equal);
    assertEquals(report.documents, reference.documents);
    assertEquals(report.mismatchCount, 0);
    assertEquals(await entries(scratch), []);
    assertEquals(Object.keys(report.passesMs), ["chain", "live", "fold", "settle"]);
    assert(Object.values(report.passesMs).every((ms) => ms >= 0));
  });
});

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

Deno.test("given edited live projections, it names the same mismatches as the in-memory replay", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.tuple(fc.constantFrom(...edits), fc.nat()), { maxLength: 3 }),
      async (changes) => {
        await withKvs(async (kv, scratch) => {
          await workload(kv);
          for (const [how, pick] of changes) await edit(kv, how, pick);
          const reference = await replayAndCompare(kv, allProjections);
          const report = await replayIntoAndCompare(kv, scratch, allProjections);
          assertEquals(report.equal, reference.equal);
          assertEquals(
            report.mismatches.map((m) => m.key).sort(),
            reference.mismatches.map((m) => m.key).sort(),
          );
          // The digest settles it only when nothing changed; otherwise documents are compared.
          const untouched = (await entries(kv)).length > 0 && changes.length === 0;
          if (untouched) assertEquals(report.compared, "digest");
          if (!reference.equal) assertEquals(report.compared, "documents");
        });
      },
    ),
    { numRuns: 30 },
  );
});

Deno.test("given more open documents than maxOpen, it compares documents instead", async () => {
  await withKvs(async (kv, scratch) => {
    await workload(kv);
    const report = await replayIntoAndCompare(kv, scratch, allProjections, { maxOpen: 1 });
    assertEquals(report.compared, "documents");
    assert(report.equal);
    // The abandoned digest fold is timed as its own pass; no live digest was taken.
    assertEquals(Object.keys(report.passesMs), ["chain", "live", "fold", "documents"]);
  });
});

Deno.test("projections named in keepInScratch are rebuilt there, and only those", async () => {
  await withKvs(async (kv, scratch) => {
    await workload(kv);
    const report = await replayIntoAndCompare(kv, scratch, allProjections, {
      keepInScratch: ["key", "purchase"],
    });
    assertEquals(report.compared, "digest");
    assertEquals(
      await entries(scratch, [...PROJECTIONS, "key"]),
      await entries(kv, [...PROJECTIONS, "key"]),
    );
    assertEquals(
      await entries(scratch, [...PROJECTIONS, "purchase"]),
      await entries(kv, [...PROJECTIONS, "purchase"]),
    );
    const names = new Set((await entries(scratch)).map(([key]) => key[1]));
    assertEquals([...names].sort(), ["key", "purchase"]);
  });
});

Deno.test("a kept projection edited live is still a named mismatch", async () => {
  await withKvs(async (kv, scratch) => {
    await workload(kv);
    const [key, doc] = (await entries(kv, [...PROJECTIONS, "key"]))[0];
    await kv.set(key, { ...(doc as object), status: "forged" });
    const report = await replayIntoAndCompare(kv, scratch, allProjections, {
      keepInScratch: ["key"],
    });
    assertEquals(report.compared, "documents");
    assertEquals(report.mismatches.map((m) => m.key), [JSON.stringify(key)]);
    assertEquals(Object.keys(report.passesMs), ["chain", "live", "fold", "documents"]);
  });
});

import { assert, assertEquals } from "../support/assert.ts";
import { isRejection } from "../../src/kernel/rejection.ts";
import {
  checkLimits,
  decideHostMetadata,
  decideUnfetchableImage,
  type HostMetadataCommand,
} from "../../src/metadata/decide.ts";

const NOW = Date.UTC(2026, 0, 15, 23, 59, 0);
const cmd: HostMetadataCommand = {
  id: "ab".repeat(16),
  keyId: "k1",
  purchaseId: "p1",
  now: NOW,
  day: "2026-01-15",
  image: { imageId: "cd".repeat(32), ext: "png", mime: "image/png", bytes: 67, chunks: 1 },
  json: "{}",
  limits: { metadataPerDay: 100, hostedItemsPerKey: 5000 },
};
const fresh = { usage: null, hostedCount: null, image: null };

Deno.test("decide: the 100th item of the day is hosted, the 101st is 429 daily_limit until midnight UTC", () => {
  const e = decideHostMetadata(cmd, { ...fresh, usage: { tokens: 25, metadata: 99 } });
  assert(!isRejection(e));
  assertEquals(e.type, "MetadataHosted");
  assertEquals(e.data.day, "2026-01-15");
  assertEquals(e.data.purchaseId, "p1");

  const r = decideHostMetadata(cmd, { ...fresh, usage: { tokens: 0, metadata: 100 } });
  assert(isRejection(r));
  assertEquals(r.rejected, "daily_limit");
  assertEquals(r.retryAfterS, 60);
});

Deno.test("decide: the hosted-items cap (5000 per key) is daily_limit without Retry-After", () => {
  assert(!isRejection(decideHostMetadata(cmd, { ...fresh, hostedCount: 4999 })));
  const r = decideHostMetadata(cmd, { ...fresh, hostedCount: 5000 });
  assert(isRejection(r));
  assertEquals(r.rejected, "daily_limit");
  assertEquals(r.retryAfterS, undefined);
  assert(r.message.includes("does not reset"));
});

Deno.test("decide: newImage only when no manifest exists yet; limits come from the command", () => {
  const first = decideHostMetadata(cmd, fresh);
  const again = decideHostMetadata(cmd, {
    ...fresh,
    image: { imageId: cmd.image.imageId, ext: "png", mime: "image/png", bytes: 67, chunks: 1 },
  });
  assert(!isRejection(first) && !isRejection(again));
  assertEquals([first.data.newImage, again.data.newImage], [true, false]);
  const tight = { ...cmd, limits: { metadataPerDay: 3, hostedItemsPerKey: 5000 } };
  assert(checkLimits(tight, { usage: { tokens: 0, metadata: 3 }, hostedCount: 3 }) !== null);
  assertEquals(checkLimits(tight, { usage: { tokens: 0, metadata: 2 }, hostedCount: 2 }), null);
});

Deno.test("decide: an unfetchable image counts for the day, unless the day's limit was reached meanwhile", () => {
  const under = decideUnfetchableImage(cmd, { usage: { tokens: 0, metadata: 99 } }, "timed out");
  assertEquals(under, [{
    type: "MetadataImageUnfetchable",
    v: 1,
    data: { id: cmd.id, keyId: "k1", purchaseId: "p1", day: "2026-01-15", reason: "timed out" },
  }]);
  assertEquals(decideUnfetchableImage(cmd, { usage: null }, "x").length, 1);
  // Others filled the day while this one was fetching: counting it would pass the limit.
  assertEquals(decideUnfetchableImage(cmd, { usage: { tokens: 0, metadata: 100 } }, "x"), []);
});

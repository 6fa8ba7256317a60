import { assertEquals } from "../support/assert.ts";
import { hostedCountProjection, usageProjection } from "../../projections/usage.ts";
import { hostedImageProjection, hostedMetadataProjection } from "../../projections/hosted.ts";
import { buildsByKeyProjection } from "../../projections/build-list.ts";
import { event, given } from "./support/events.ts";

const day = ["pur1", "2023-11-14"];

Deno.test("usage: given a build and a hosted item, when an unfetchable image is recorded, then metadata counts 2", () => {
  const after = given(usageProjection, [event("TokenBuilt"), event("MetadataHosted")])
    .when(event("MetadataImageUnfetchable"));
  assertEquals(after.doc(day), { tokens: 1, metadata: 2 });
});

Deno.test("usage: given a day's use, when a build lands on another day, then each day counts apart", () => {
  const after = given(usageProjection, [event("TokenBuilt")])
    .when(event("TokenBuilt", { day: "2023-11-15", buildId: 8 }));
  assertEquals(after.doc(day), { tokens: 1, metadata: 0 });
  assertEquals(after.doc(["pur1", "2023-11-15"]), { tokens: 1, metadata: 0 });
});

Deno.test("hosted_count: given one hosted item, when another is hosted, then 2 (unfetchable ones do not count)", () => {
  const after = given(hostedCountProjection, [
    event("MetadataHosted"),
    event("MetadataImageUnfetchable"),
  ])
    .when(event("MetadataHosted", { id: "meta3" }));
  assertEquals(after.doc(["pur1"]), 2);
});

Deno.test("metadata and image: when hosted, then the document and the image manifest", () => {
  const hosted = event("MetadataHosted");
  assertEquals(given(hostedMetadataProjection, []).when(hosted).doc(["meta1"]), {
    id: "meta1",
    keyId: "key1",
    json: '{"name":"Name"}',
    imageId: "img1",
    imageExt: "png",
  });
  assertEquals(given(hostedImageProjection, []).when(hosted).doc(["img1"]), {
    imageId: "img1",
    ext: "png",
    mime: "image/png",
    bytes: 1234,
    chunks: 1,
  });
});

Deno.test("image: given a hosted image, when the same image is hosted again, then the first manifest stays", () => {
  const after = given(hostedImageProjection, [event("MetadataHosted")])
    .when(event("MetadataHosted", { id: "meta9", imageBytes: 1, imageChunks: 9 }));
  assertEquals(after.doc(["img1"]), {
    imageId: "img1",
    ext: "png",
    mime: "image/png",
    bytes: 1234,
    chunks: 1,
  });
});

Deno.test("build_by_key: when a build lands, then the key's row points at it", () => {
  assertEquals(given(buildsByKeyProjection, []).when(event("TokenBuilt")).doc(["key1", 7]), 7);
});

import { assert, assertEquals, assertRejects } from "../support/assert.ts";
import { sha256Hex } from "../../src/kernel/hashing.ts";
import {
  blobKey,
  CHUNK_BYTES,
  chunkCount,
  CorruptImageError,
  readImage,
  writeImageChunks,
} from "../../src/metadata/blobs.ts";
import { makePng } from "./image/fixtures.ts";

async function stored(bytes: Uint8Array) {
  const kv = await Deno.openKv(":memory:");
  const imageId = await sha256Hex(bytes);
  await writeImageChunks(kv, imageId, bytes);
  const manifest = {
    imageId,
    ext: "png",
    mime: "image/png",
    bytes: bytes.length,
    chunks: chunkCount(bytes.length),
  };
  return { kv, imageId, manifest };
}

Deno.test("blobs: a 1 MiB image is 18 chunks, each under the 64 KiB value limit, and reads back whole", async () => {
  const png = makePng(64, 64, 1_048_576);
  const { kv, imageId, manifest } = await stored(png);
  try {
    assertEquals(manifest.chunks, 18);
    let n = 0;
    for await (const e of kv.list<Uint8Array>({ prefix: ["blob", imageId] })) {
      assert(e.value.length <= CHUNK_BYTES && CHUNK_BYTES < 65_536);
      n++;
    }
    assertEquals(n, 18);
    assertEquals(await readImage(kv, manifest), png);
  } finally {
    kv.close();
  }
});

Deno.test("blobs: a missing chunk or a wrong byte is refused, never served", async () => {
  const png = makePng(8, 8, 200_000);
  const a = await stored(png);
  try {
    await a.kv.delete(blobKey(a.imageId, 2));
    await assertRejects(() => readImage(a.kv, a.manifest), CorruptImageError, "chunk 2 missing");
  } finally {
    a.kv.close();
  }
  const b = await stored(png);
  try {
    const chunk = (await b.kv.get<Uint8Array>(blobKey(b.imageId, 1))).value!;
    const evil = chunk.slice();
    evil[10] ^= 1;
    await b.kv.set(blobKey(b.imageId, 1), evil);
    await assertRejects(() => readImage(b.kv, b.manifest), CorruptImageError, "hash mismatch");
    await assertRejects(
      () => readImage(b.kv, { ...b.manifest, bytes: png.length - 1 }),
      CorruptImageError,
    );
  } finally {
    b.kv.close();
  }
});

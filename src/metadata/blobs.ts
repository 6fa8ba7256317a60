/**
 * Image bytes in Deno KV, content addressed: `["blob", imageId, i]` holds chunk i, imageId being
 * the hex SHA-256 of the whole image.
 *
 * A KV value is at most 64 KiB and an atomic commit at most 800 KiB, so a 1 MiB image can ride
 * neither in one value nor in the commit of its event. The chunks are therefore written first, in
 * a few commits of their own, and only then is the `MetadataHosted` event committed; its inline
 * projection creates the manifest (`["p","image",imageId]`) that makes the image servable. Chunks
 * without a manifest (a crash or a refusal between the two steps) are never served, and since they
 * are content addressed, the next upload of the same image simply writes them again.
 */
import { sha256Hex } from "../kernel/hashing.ts";
import type { HostedImageDoc } from "../../projections/hosted.ts";

/** Below the 64 KiB value limit with room for KV's own overhead. */
export const CHUNK_BYTES = 60 * 1024;
/** 10 x 60 KiB = 600 KiB per commit, below the 800 KiB limit on every KV backend. */
const CHUNKS_PER_COMMIT = 10;

export const BLOB = "blob";
export const blobKey = (imageId: string, i: number): Deno.KvKey => [BLOB, imageId, i];

export const chunkCount = (bytes: number) => Math.ceil(bytes / CHUNK_BYTES);

export async function writeImageChunks(kv: Deno.Kv, imageId: string, bytes: Uint8Array) {
  const n = chunkCount(bytes.length);
  const commits: Promise<Deno.KvCommitResult | Deno.KvCommitError>[] = [];
  for (let first = 0; first < n; first += CHUNKS_PER_COMMIT) {
    const atomic = kv.atomic();
    for (let i = first; i < Math.min(n, first + CHUNKS_PER_COMMIT); i++) {
      atomic.set(blobKey(imageId, i), bytes.subarray(i * CHUNK_BYTES, (i + 1) * CHUNK_BYTES));
    }
    commits.push(atomic.commit());
  }
  // No checks in these commits, so only a KV failure (which throws) can stop them.
  for (const r of await Promise.all(commits)) {
    if (!r.ok) throw new Error(`writing image ${imageId} failed`);
  }
}

export class CorruptImageError extends Error {
  constructor(imageId: string, why: string) {
    super(`stored image ${imageId} is unusable: ${why}`);
  }
}

/** Images whose stored chunks were hashed once in this process, per KV; immutable after that. */
const verifiedByKv = new WeakMap<Deno.Kv, Set<string>>();
const VERIFIED_MAX = 100_000;

/**
 * Reads the image the manifest describes and checks it is whole: every chunk present, the byte
 * count right and, the first time in this process, the SHA-256 equal to the id.
 */
export async function readImage(kv: Deno.Kv, m: HostedImageDoc): Promise<Uint8Array> {
  const keys = Array.from({ length: m.chunks }, (_, i) => blobKey(m.imageId, i));
  const batches: Promise<Deno.KvEntryMaybe<Uint8Array>[]>[] = [];
  for (let i = 0; i < keys.length; i += 10) {
    batches.push(kv.getMany<Uint8Array[]>(keys.slice(i, i + 10)));
  }
  const entries = (await Promise.all(batches)).flat();
  const out = new Uint8Array(m.bytes);
  let offset = 0;
  for (const [i, e] of entries.entries()) {
    if (!(e.value instanceof Uint8Array)) {
      throw new CorruptImageError(m.imageId, `chunk ${i} missing`);
    }
    if (offset + e.value.length > m.bytes) throw new CorruptImageError(m.imageId, "too many bytes");
    out.set(e.value, offset);
    offset += e.value.length;
  }
  if (offset !== m.bytes) throw new CorruptImageError(m.imageId, `${offset} of ${m.bytes} bytes`);
  let verified = verifiedByKv.get(kv);
  if (!verified) verifiedByKv.set(kv, verified = new Set());
  if (!verified.has(m.imageId)) {
    if (await sha256Hex(out) !== m.imageId) throw new CorruptImageError(m.imageId, "hash mismatch");
    if (verified.size >= VERIFIED_MAX) verified.clear();
    verified.add(m.imageId);
  }
  return out;
}

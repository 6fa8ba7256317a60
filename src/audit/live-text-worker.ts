/**
 * The incremental audit's live documents, read on the machine's other core from the audited KV
 * file (kv-file.ts) in one snapshot with the log head, each as the JSON text the full audit
 * digests (v8-json.ts). Through `Deno.Kv` the same reads were the largest wait of an incremental
 * audit: 22,000 documents at 10,000 events, nine to a `getMany`, each decoded on this thread and
 * turned into canonical JSON here, while this thread had nothing else to do.
 *
 * The worker opens the audited KV file itself and only reads it. What it cannot turn into text
 * the fast way it leaves out (null), and the caller settles those documents through `Deno.Kv`.
 */
import { spawnWorker } from "./worker.ts";

export interface LiveTextRequest {
  path: string;
  keys: Deno.KvKey[];
}

/**
 * The live documents of a snapshot: `at` is the log head's position in it (0: none), and document
 * i (the key asked for at that index) is `bytes[starts[i]..ends[i])`, the UTF-8 of its
 * `JSON.stringify`: empty when there is no document there (absent or null), and `starts[i]` -1
 * when the worker did not read it (a key part or a value its fast path does not take). One buffer,
 * handed over without a copy, instead of a string per document.
 */
export interface LiveTexts {
  at: number;
  bytes: Uint8Array;
  starts: Int32Array;
  ends: Int32Array;
}

/** Document i's text in `t`, or null when the worker did not read it. */
export const liveText = (t: LiveTexts, i: number): Uint8Array | null =>
  t.starts[i] < 0 ? null : t.bytes.subarray(t.starts[i], t.ends[i]);

type FromWorker =
  | ({ type: "done" } & LiveTexts)
  | { type: "not-a-file" }
  | { type: "error"; message: string };

/**
 * A worker started now (its modules load while the caller reads the log) that reads the
 * documents of one `read` call; `end` stops it, read or not. `read` answers null when the path is
 * not a KV file the worker reads.
 */
export function liveTextsInWorker(path: string): {
  read(keys: Deno.KvKey[]): Promise<LiveTexts | null>;
  end(): void;
} {
  const w = spawnWorker<FromWorker>(
    new URL("./live-text-worker-main.ts", import.meta.url),
    "live text worker",
  );
  return {
    async read(keys) {
      const answer = w.next();
      w.post({ path, keys } satisfies LiveTextRequest);
      try {
        const msg = await answer;
        if (msg.type === "not-a-file") return null;
        if (msg.type !== "done") throw new Error(`live text worker answered ${msg.type}`);
        return { at: msg.at, bytes: msg.bytes, starts: msg.starts, ends: msg.ends };
      } finally {
        w.end();
      }
    },
    end: w.end,
  };
}

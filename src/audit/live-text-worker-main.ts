/// <reference no-default-lib="true" />
/// <reference lib="deno.worker" />
/**
 * The worker side of live-text-worker.ts: one snapshot read, then it answers and is terminated.
 */
import { KvFile, logHeadPosition, V8 } from "../../events/kv-file.ts";
import { encodableKey, encodeKvKey } from "../../events/kv-key-codec.ts";
import { isNullText, v8ToJson } from "../../projections/v8-json.ts";
import { ByteSink } from "../kernel/json-bytes.ts";
import type { LiveTextRequest } from "./live-text-worker.ts";
import { announceReady } from "./worker.ts";

function run(req: LiveTextRequest): void {
  const file = KvFile.open(req.path);
  if (!file) {
    self.postMessage({ type: "not-a-file" });
    return;
  }
  try {
    const n = req.keys.length;
    const sink = new ByteSink();
    const starts = new Int32Array(n).fill(-1);
    const ends = new Int32Array(n);
    const at = file.inSnapshot(() => {
      for (let i = 0; i < n; i++) {
        const key = req.keys[i];
        // A key with other parts than strings and numbers is left to the caller.
        if (!encodableKey(key)) continue;
        const row = file.get(encodeKvKey(key));
        const start = sink.length;
        if (row && (row.encoding !== V8 || !v8ToJson(row.value, sink))) continue;
        // No document: absent, or null (as the digest and `Deno.Kv` readers take it).
        if (sink.length - start === 4 && isNullText(sink.buf, start)) sink.length = start;
        starts[i] = start;
        ends[i] = sink.length;
      }
      return logHeadPosition(file);
    });
    const bytes = sink.bytes().slice();
    self.postMessage({ type: "done", at, bytes, starts, ends }, [
      bytes.buffer,
      starts.buffer,
      ends.buffer,
    ]);
  } finally {
    file.close();
  }
}

self.onmessage = (m: MessageEvent<LiveTextRequest>) => {
  try {
    run(m.data);
  } catch (e) {
    self.postMessage({ type: "error", message: String((e as Error)?.stack ?? e) });
  }
};
announceReady();

/// <reference no-default-lib="true" />
/// <reference lib="deno.worker" />
/**
 * A worker whose module awaits at top level before it sets its handler (as the audit's workers do
 * while the digest's WebAssembly hasher loads): it echoes each message it gets.
 */
import { announceReady } from "../../../src/audit/worker.ts";

await new Promise((resolve) => setTimeout(resolve, 200));

self.onmessage = (m: MessageEvent<{ n: number }>) => {
  self.postMessage({ type: "echo", n: m.data.n });
};
announceReady();

/**
 * A second process appending to a KV file: `append-writer.ts <kv path> <stream prefix> <n>`.
 * Prints how many appends went through and the first error, as one JSON line.
 */
import { EventStore } from "../../../events/store.ts";
import { openExistingKv } from "../../../src/cli/kv.ts";
import { allProjections } from "../../../projections/index.ts";

const [path, prefix, count] = Deno.args;
// As `deno task admin --kv` opens the service's file.
const kv = await openExistingKv(path);
const store = new EventStore(kv, { projections: allProjections });
let ok = 0;
let firstError: string | null = null;
for (let i = 0; i < Number(count); i++) {
  try {
    await store.append([{
      stream: `${prefix}-${i}`,
      expectedVersion: 0,
      events: [{ type: "KeyBanLifted", v: 1, data: { keyId: `${prefix}${i}` } }],
    }]);
    ok++;
  } catch (e) {
    firstError ??= String(e);
  }
}
kv.close();
console.log(JSON.stringify({ ok, firstError }));

/**
 * `deno task chain`: runs the embedded chain on its own (CHAIN_PORT, default 8899) until
 * interrupted, printing one line with its URL once it accepts requests.
 */
import { describeTokenMetadataProgram } from "./metadata-program-info.ts";
import { startChain } from "./mod.ts";
import { PortInUse } from "../kernel/port-in-use.ts";

const port = Number(Deno.env.get("CHAIN_PORT") ?? "8899");
const chain = await startChain({ port, quiet: true }).catch((e) => {
  if (!(e instanceof PortInUse)) throw e;
  console.error(e.message);
  Deno.exit(2);
});

// `deno task` under a process-group kill delivers the signal twice: the second one must not start
// a second close of a chain that is already closing (that close throws, and the exit code is 1).
let stopping: Promise<void> | null = null;
const stop = () => {
  stopping ??= chain.close().then(() => Deno.exit(0));
};
Deno.addSignalListener("SIGINT", stop);
Deno.addSignalListener("SIGTERM", stop);

// Only once a signal stops it cleanly: whoever waits for this line may signal at once.
console.log(describeTokenMetadataProgram(chain.tokenMetadataProgram));
console.log(`embedded chain ready at ${chain.url} (ws ${chain.wsUrl})`);

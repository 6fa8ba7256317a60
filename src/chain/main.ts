/**
 * `deno task chain`: runs the embedded chain on its own (CHAIN_PORT, default 8899) until
 * interrupted, printing one line with its URL once it accepts requests.
 */
import { describeTokenMetadataProgram, startChain } from "./mod.ts";

const port = Number(Deno.env.get("CHAIN_PORT") ?? "8899");
const chain = await startChain({ port, quiet: true });
console.log(describeTokenMetadataProgram(chain.tokenMetadataProgram));
console.log(`embedded chain ready at ${chain.url} (ws ${chain.wsUrl})`);

const stop = async () => {
  await chain.close();
  Deno.exit(0);
};
Deno.addSignalListener("SIGINT", stop);
Deno.addSignalListener("SIGTERM", stop);

/** `deno task start`: the service on the embedded defaults, or on whatever the env configures. */
import { bootstrap } from "./bootstrap.ts";
import { ConfigError, loadConfig } from "./config.ts";
import { listenOn, PortInUse } from "./kernel/port-in-use.ts";
import { sweepOpenBuilds } from "./creation/watcher.ts";
import { describeTokenMetadataProgram } from "./chain/metadata-program-info.ts";

// Deno Deploy picks up only crons registered at the module's top level, before anything is
// awaited: a safety net there, where isolates come and go and queue loops with them, so open
// builds are swept at least once a minute. It does nothing until deploy mode hands it a sweep.
let sweepOnCron: (() => Promise<unknown>) | null = null;
Deno.cron("sweep open builds", "* * * * *", async () => {
  await sweepOnCron?.();
});

let config;
try {
  config = loadConfig(Deno.env.toObject());
} catch (e) {
  if (e instanceof ConfigError) {
    console.error(e.message);
    Deno.exit(2);
  }
  throw e;
}

const booted = await bootstrap(config, { watch: true }).catch((e) => {
  // Facts read from the chain at start (the stablecoin mint) can refuse the configuration too,
  // and the embedded chain's ports can be taken.
  if (!(e instanceof ConfigError) && !(e instanceof PortInUse)) throw e;
  console.error(e.message);
  Deno.exit(2);
});
const { services } = booted;
if (config.deployMode) {
  sweepOnCron = () => sweepOpenBuilds({ ...services, connection: services.backgroundConnection });
}
// One shutdown however many signals arrive: `deno task` and a process-group kill both deliver one.
// Listened for before the server says it is ready: whoever waits for that line may signal at once.
let server: Deno.HttpServer | null = null;
let stopping: Promise<void> | null = null;
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  Deno.addSignalListener(sig, () => {
    stopping ??= (async () => {
      services.logger.log("info", "shutting down", { signal: sig });
      await server?.shutdown();
      await booted.close();
      Deno.exit(0);
    })();
  });
}
try {
  server = listenOn("PORT", config.port, "The service", () =>
    Deno.serve({
      port: config.port,
      hostname: config.hostname,
      onListen: ({ hostname, port }) => {
        const chain = booted.chain ? ` (embedded chain ${booted.chain.url})` : "";
        if (booted.chain) {
          console.log(describeTokenMetadataProgram(booted.chain.tokenMetadataProgram));
        }
        console.log(`token-creation service ready on http://${hostname}:${port}${chain}`);
      },
    }, booted.app.fetch));
} catch (e) {
  if (!(e instanceof PortInUse)) throw e;
  console.error(e.message);
  await booted.close();
  Deno.exit(2);
}

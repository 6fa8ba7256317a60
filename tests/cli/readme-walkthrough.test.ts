/**
 * The README's curl walk-through, run as written: the shell block is read from README.md (so the
 * test fails when the README drifts) and run by bash against `src/main.ts` on the embedded chain,
 * started as `task start` starts it. Only the address and the Deno command are swapped: the
 * service listens on a free port instead of 8000, and `npx -y deno@2.9.6` is this Deno.
 * It needs curl and jq (.ci/run installs jq); without them it is skipped with one line saying so.
 */
import { assert, assertEquals } from "../support/assert.ts";
import { startServiceProcess } from "../support/service-process.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const README = new URL("../../README.md", import.meta.url);

/** The Quick start's shell block that begins with dev:key and ends with the verification. */
export function walkThrough(readme: string): string {
  const quickStart = readme.slice(readme.indexOf("## Quick start"));
  const blocks = [...quickStart.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);
  const block = blocks.find((b) => b.includes("task dev:key") && b.includes("task sign"));
  assert(block, "README's Quick start has no shell block running dev:key and sign");
  return block;
}

const has = (tool: string) =>
  new Deno.Command("sh", { args: ["-c", `command -v ${tool}`], stdout: "null", stderr: "null" })
    .outputSync().success;
const missing = ["bash", "curl", "jq", "base64"].filter((t) => !has(t));
if (missing.length) {
  console.log(`README walk-through test skipped: ${missing.join(", ")} not installed`);
}

Deno.test({
  name:
    "README quick start: dev:key, metadata with examples/logo.png, build, sign, submit, verified",
  ignore: missing.length > 0,
  async fn() {
    const script = walkThrough(await Deno.readTextFile(README));
    for (const step of ["jq -er .apiKey", "examples/logo.png", "/v1/tokens", "/v1/transactions"]) {
      assert(script.includes(step), `the walk-through lost "${step}"`);
    }
    const dataDir = await Deno.makeTempDir({ prefix: "tcb-readme-" });
    const service = await startServiceProcess({ dataDir, env: { CHAIN_PORT: "0" } });
    try {
      assert(service.chainUrl, "the service runs the embedded chain");
      const port = new URL(service.url).port;
      const asRun = script
        .replaceAll("http://127.0.0.1:8000", service.url)
        .replaceAll("npx -y deno@2.9.6", `'${Deno.execPath()}'`);
      assert(!asRun.includes(":8000"), "every address in the block is the service's");
      const out = await new Deno.Command("bash", {
        args: ["-euo", "pipefail", "-c", asRun],
        cwd: ROOT,
        env: {
          NO_COLOR: "1",
          // dev:key finds the service and its chain as README's "Ports" says: the same PORT,
          // CHAIN_PORT and DATA_DIR as the service.
          PORT: port,
          CHAIN_PORT: new URL(service.chainUrl).port,
          DATA_DIR: dataDir,
        },
        stdout: "piped",
        stderr: "piped",
      }).output();
      const stdout = new TextDecoder().decode(out.stdout);
      const stderr = new TextDecoder().decode(out.stderr);
      assertEquals(out.code, 0, `${stdout}\n${stderr}`);
      const verification = JSON.parse(stdout);
      assertEquals(verification.status, "confirmed", stdout);
      assertEquals(verification.feeVerified, true, stdout);
      assertEquals(verification.supplyRaw, "1000000000000", stdout);
      // The signing step showed what it signed before signing it.
      assert(stderr.includes('TokenMetadata: create metadata name "Demo Token"'), stderr);
      assert(stderr.includes("within about 60 s"), stderr);
    } finally {
      await service.stop();
      await Deno.remove(dataDir, { recursive: true });
    }
  },
});

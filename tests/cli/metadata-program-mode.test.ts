/**
 * The start log names the Token Metadata program the embedded chain runs: "emulated", or the
 * loaded binary's path and sha256.
 */
import { assert, assertEquals, assertMatch } from "../support/assert.ts";
import { METAPLEX_SO, needsMetaplexSo } from "../support/metaplex-fixture.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/** Runs until `ready` shows on stdout, then stops it; returns what it printed. */
async function startLines(args: string[], env: Record<string, string>, ready: RegExp) {
  const child = new Deno.Command(Deno.execPath(), {
    args,
    cwd: ROOT,
    env: { NO_COLOR: "1", ...env },
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  const deadline = Date.now() + 120_000;
  try {
    while (Date.now() < deadline && !ready.test(out)) {
      const { value, done } = await reader.read();
      if (done) break;
      out += value;
    }
  } finally {
    child.kill("SIGTERM");
    await reader.cancel().catch(() => {});
    await child.status;
  }
  assertMatch(out, ready);
  return out;
}

Deno.test("deno task chain names the emulated Token Metadata program at start", async () => {
  const out = await startLines(
    ["task", "-q", "chain"],
    { CHAIN_PORT: "0", TOKEN_METADATA_PROGRAM_SO: "" },
    /embedded chain ready at/,
  );
  assertMatch(out, /^Token Metadata program: emulated \(set TOKEN_METADATA_PROGRAM_SO/m);
});

Deno.test({
  name: "the service names the loaded Token Metadata program at start: path and sha256",
  ...needsMetaplexSo(),
  fn: async () => {
    const dataDir = await Deno.makeTempDir({ prefix: "tcb-mode-" });
    try {
      const out = await startLines(
        ["run", "-A", "--unstable-kv", "--unstable-cron", "src/main.ts"],
        {
          DATA_DIR: dataDir,
          PORT: "0",
          CHAIN_PORT: "0",
          LOG_LEVEL: "warn",
          TOKEN_METADATA_PROGRAM_SO: METAPLEX_SO!,
        },
        /service ready on/,
      );
      const sha = Array.from(
        new Uint8Array(await crypto.subtle.digest("SHA-256", await Deno.readFile(METAPLEX_SO!))),
        (b) => b.toString(16).padStart(2, "0"),
      ).join("");
      const line = out.split("\n").find((l) => l.startsWith("Token Metadata program:"));
      assert(line, out);
      assertEquals(line, `Token Metadata program: loaded from ${METAPLEX_SO} (sha256 ${sha})`);
    } finally {
      await Deno.remove(dataDir, { recursive: true });
    }
  },
});

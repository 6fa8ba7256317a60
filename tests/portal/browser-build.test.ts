/**
 * The portal's browser code is checked JavaScript (`// @ts-check` in every module of
 * src/portal/browser/), and the page loads its bundle: the sources must type-check, and the
 * committed src/portal/page/app.js must be exactly what `deno task portal:build` makes of them.
 */
import { bundlePortal, PORTAL_BUNDLE, PORTAL_ENTRY } from "../../src/cli/portal-build.ts";
import { assert, assertEquals } from "../support/assert.ts";

const BROWSER_DIR = new URL("../../src/portal/browser/", import.meta.url);

Deno.test("every module of the portal's browser code is checked (// @ts-check)", async () => {
  const names: string[] = [];
  for await (const f of Deno.readDir(BROWSER_DIR)) {
    if (!f.name.endsWith(".js")) continue;
    names.push(f.name);
    const text = await Deno.readTextFile(new URL(f.name, BROWSER_DIR));
    assert(text.startsWith("// @ts-check\n"), `${f.name} starts with // @ts-check`);
  }
  assert(names.includes("app.js") && names.length > 5, names.join(", "));
});

Deno.test("the portal's browser code type-checks against the DOM", async () => {
  const { code, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["check", "--quiet", PORTAL_ENTRY.pathname],
    stdout: "null",
    stderr: "piped",
  }).output();
  assertEquals(code, 0, new TextDecoder().decode(stderr));
});

Deno.test("the served app.js is the bundle of src/portal/browser/ (deno task portal:build)", async () => {
  const committed = await Deno.readTextFile(PORTAL_BUNDLE);
  const fresh = await bundlePortal();
  assert(committed === fresh, "src/portal/page/app.js is stale: run `deno task portal:build`");
});

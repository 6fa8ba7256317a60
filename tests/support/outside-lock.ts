/**
 * Packages only a generator or a data test reads (the Unicode data, the token registry) are kept
 * out of deno.json and deno.lock: a start installs every package the lockfile names, and these
 * two are a fifth of that. A test that needs one runs its script here, in a child Deno with
 * `--no-lock`, and takes what it prints.
 */
const ROOT = new URL("../../", import.meta.url);

export async function outsideLock(args: string[]): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-lock", "--quiet", ...args],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder();
  if (!out.success) throw new Error(`deno run ${args.join(" ")}: ${text.decode(out.stderr)}`);
  return text.decode(out.stdout);
}

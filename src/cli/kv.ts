/**
 * Where the operator tools find the service's KV: `--kv <path|url>`, else DATA_DIR/kv.sqlite3
 * (the file `deno task start` uses). A KV Connect URL (Deno Deploy's database) works too, with
 * DENO_KV_ACCESS_TOKEN in the environment.
 */
import { isKvBusy } from "../../events/commit.ts";

export class CliError extends Error {}

/**
 * The RPC the operator tools talk to: SOLANA_RPC_URL, else the embedded chain `deno task start`
 * runs on CHAIN_PORT (8899).
 */
export function defaultRpcUrl(env: Record<string, string | undefined> = Deno.env.toObject()) {
  return env.SOLANA_RPC_URL || `http://127.0.0.1:${env.CHAIN_PORT || 8899}`;
}

/** The service's data directory: DATA_DIR, else .data (git ignores it). */
export function dataDir(env: Record<string, string | undefined> = Deno.env.toObject()) {
  return (env.DATA_DIR || ".data").replace(/\/+$/, "");
}

export function defaultKvPath(env: Record<string, string | undefined> = Deno.env.toObject()) {
  return `${dataDir(env)}/kv.sqlite3`;
}

/**
 * Where an audit writes without --out: a new directory under DATA_DIR/audits named by the moment
 * it started, beside the data it audits rather than in whatever directory the operator stood in.
 */
export function defaultAuditDir(
  now: number,
  env: Record<string, string | undefined> = Deno.env.toObject(),
) {
  const stamp = new Date(now).toISOString().replaceAll(":", "").slice(0, 17);
  return `${dataDir(env)}/audits/audit-${stamp}Z`;
}

const isUrl = (p: string) => /^https?:\/\//.test(p);

/** Opens an existing KV; never creates one, since a typo would otherwise audit an empty store. */
export async function openExistingKv(path: string): Promise<Deno.Kv> {
  if (path !== ":memory:" && !isUrl(path)) {
    try {
      const st = await Deno.stat(path);
      if (!st.isFile) throw new CliError(`${path} is not a file`);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) throw new CliError(`no KV at ${path} (use --kv PATH)`);
      throw e;
    }
  }
  // The service may be writing the same file: opening can meet its write lock for a moment.
  for (let attempt = 0;; attempt++) {
    try {
      return await Deno.openKv(path);
    } catch (e) {
      if (!isKvBusy(e) || attempt >= 50) throw e;
      await new Promise((r) => setTimeout(r, 20 + Math.random() * 40));
    }
  }
}

/** Opens a KV that must not exist yet (a target for events:import). */
export async function openFreshKv(path: string): Promise<Deno.Kv> {
  if (isUrl(path)) return await Deno.openKv(path);
  try {
    await Deno.stat(path);
    throw new CliError(`${path} already exists; import only into a fresh KV`);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  const dir = path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : "";
  if (dir) {
    const made = await topmostMissing(dir);
    await Deno.mkdir(dir, { recursive: true });
    if (made) createdDirs.set(path, made);
  }
  return await Deno.openKv(path);
}

/** The outermost directory of `dir` that does not exist yet, or null when `dir` exists. */
async function topmostMissing(dir: string): Promise<string | null> {
  let missing: string | null = null;
  for (let d = dir; d && d !== "/" && d !== "."; d = d.slice(0, Math.max(0, d.lastIndexOf("/")))) {
    try {
      await Deno.stat(d);
      break;
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
      missing = d;
    }
  }
  return missing;
}

/**
 * KV paths for which `openFreshKv` made directories, with the outermost one: `removeKvFile` takes
 * those away too.
 */
const createdDirs = new Map<string, string>();

/** Removes a SQLite KV file and its journal companions. */
export async function removeKvFile(path: string): Promise<void> {
  for (const p of [path, `${path}-wal`, `${path}-shm`, `${path}-journal`]) {
    await Deno.remove(p).catch(() => {});
  }
  const made = createdDirs.get(path);
  if (made) {
    createdDirs.delete(path);
    // Innermost first, each only if empty: anything else in them is not ours to remove.
    for (let d = path.slice(0, path.lastIndexOf("/")); d.length >= made.length;) {
      if (await Deno.remove(d).then(() => false, () => true)) break;
      d = d.slice(0, d.lastIndexOf("/"));
    }
  }
}

/** Runs a CLI body: usage errors exit 2 with a one-line message, anything else is a crash. */
export async function runCli(main: () => Promise<number>): Promise<never> {
  try {
    Deno.exit(await main());
  } catch (e) {
    if (e instanceof CliError) {
      console.error(`error: ${e.message}`);
      Deno.exit(2);
    }
    throw e;
  }
}

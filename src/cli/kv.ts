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

export function defaultKvPath(env: Record<string, string | undefined> = Deno.env.toObject()) {
  return `${(env.DATA_DIR || ".data").replace(/\/+$/, "")}/kv.sqlite3`;
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
    try {
      await Deno.stat(dir);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
      await Deno.mkdir(dir, { recursive: true });
      createdDirs.add(path);
    }
  }
  return await Deno.openKv(path);
}

/** KV paths whose directory `openFreshKv` made: `removeKvFile` takes the directory away too. */
const createdDirs = new Set<string>();

/** Removes a SQLite KV file and its journal companions. */
export async function removeKvFile(path: string): Promise<void> {
  for (const p of [path, `${path}-wal`, `${path}-shm`, `${path}-journal`]) {
    await Deno.remove(p).catch(() => {});
  }
  if (createdDirs.delete(path)) {
    // Only if empty: anything else in it is not ours to remove.
    await Deno.remove(path.slice(0, path.lastIndexOf("/"))).catch(() => {});
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

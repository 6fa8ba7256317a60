/**
 * The admin operations behind one interface, so the CLI can act either on the KV directly
 * (local DATA_DIR, or Deploy's KV through KV Connect) or through the HTTP surface of a running
 * service (`--url`, with ADMIN_TOKEN), and both paths run the same commands.
 */
import { EventStore } from "../../events/store.ts";
import { allProjections } from "../../projections/index.ts";
import type { Config } from "../config.ts";
import { ApiError } from "../kernel/errors.ts";
import { type KeyView, type ListOptions, type Page, type PurchaseView } from "./keys.ts";
import { handleAdmin } from "./handle.ts";
import { getKey, listKeys, listPurchases } from "./reads.ts";
import {
  type CurrentNames,
  editWellKnownNames,
  readWellKnownNames,
  resetWellKnownNames,
  setWellKnownNames,
} from "./well-known-names.ts";

export interface Changed {
  key: KeyView;
  changed: boolean;
}

export interface AdminOps {
  keys(opts: ListOptions): Promise<Page<KeyView>>;
  key(keyId: string): Promise<KeyView | null>;
  ban(keyId: string, reason: string): Promise<Changed>;
  lift(keyId: string): Promise<Changed>;
  purchases(opts: ListOptions): Promise<Page<PurchaseView>>;
  names(): Promise<CurrentNames>;
  setNames(names: string[]): Promise<CurrentNames>;
  editNames(edit: { add?: string[]; remove?: string[] }): Promise<CurrentNames>;
  resetNames(): Promise<CurrentNames>;
}

export function kvOps(kv: Deno.Kv, config: Pick<Config, "wellKnownNames">): AdminOps {
  const store = new EventStore(kv, { projections: allProjections });
  const ctx = { kv, config };
  return {
    keys: (o) => listKeys(kv, o),
    key: (id) => getKey(kv, id),
    ban: async (keyId, reason) => {
      const { key, changed } = await handleAdmin(store, { type: "BanKey", keyId, reason });
      return { key, changed };
    },
    lift: async (keyId) => {
      const { key, changed } = await handleAdmin(store, { type: "LiftBan", keyId });
      return { key, changed };
    },
    purchases: (o) => listPurchases(kv, o),
    names: () => readWellKnownNames(ctx),
    setNames: (n) => setWellKnownNames(ctx, n),
    editNames: (e) => editWellKnownNames(ctx, e),
    resetNames: () => resetWellKnownNames(ctx),
  };
}

/** Talks to /admin on a running service. Errors come back as the service's ApiError. */
export function httpOps(base: string, token: string, fetchFn: typeof fetch = fetch): AdminOps {
  const root = base.replace(/\/+$/, "");
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetchFn(root + path, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await res.json().catch(() => null);
    if (!res.ok) {
      const err = json?.error;
      throw new ApiError(
        err?.code ?? "server_error",
        `${method} ${path}: ${res.status} ${err?.message ?? ""}`.trim(),
        err?.fields ?? {},
      );
    }
    return json as T;
  };
  const qs = (o: ListOptions) => {
    const p = new URLSearchParams();
    for (const [k, v] of Object.entries(o)) if (v !== undefined) p.set(k, String(v));
    const s = p.toString();
    return s ? `?${s}` : "";
  };
  const enc = encodeURIComponent;
  return {
    keys: (o) => call("GET", `/admin/keys${qs(o)}`),
    key: async (id) => {
      try {
        return await call<KeyView>("GET", `/admin/keys/${enc(id)}`);
      } catch (e) {
        if (e instanceof ApiError && e.code === "not_found") return null;
        throw e;
      }
    },
    ban: (id, reason) => call("POST", `/admin/keys/${enc(id)}/ban`, { reason }),
    lift: (id) => call("POST", `/admin/keys/${enc(id)}/lift`, {}),
    purchases: (o) => call("GET", `/admin/purchases${qs(o)}`),
    names: () => call("GET", "/admin/well-known-names"),
    setNames: (names) => call("PUT", "/admin/well-known-names", { names }),
    editNames: (e) => call("PATCH", "/admin/well-known-names", e),
    resetNames: () => call("DELETE", "/admin/well-known-names"),
  };
}

export const ADMIN_USAGE = `usage: deno task admin [--kv PATH|URL | --url SERVICE_URL] <command>

  keys [--status active|deleted|banned|suspended] [--wallet W] [--limit N] [--cursor C]
  key <keyId>
  ban <keyId> --reason "why"
  lift <keyId>                      lifts a ban or a suspension
  purchases [--wallet W] [--limit N] [--cursor C]
  names                             the well-known-names list in force
  names set <name> [<name> ...]     replace the list
  names add <name> [<name> ...]
  names remove <name> [<name> ...]
  names reset                       back to WELL_KNOWN_NAMES / the built-in list

--kv acts on the KV directly (default DATA_DIR/kv.sqlite3); --url goes through the service's
/admin API with ADMIN_TOKEN from the environment. Output is JSON.`;

export class UsageError extends Error {}

/** Runs one admin command; returns what to print. */
export async function runAdminCommand(
  ops: AdminOps,
  positionals: string[],
  flags: { status?: string; wallet?: string; limit?: string; cursor?: string; reason?: string },
): Promise<unknown> {
  const [cmd, ...rest] = positionals;
  const list: ListOptions = {
    wallet: flags.wallet,
    cursor: flags.cursor,
    limit: flags.limit === undefined ? undefined : Number(flags.limit),
  };
  if (list.limit !== undefined && !(Number.isInteger(list.limit) && list.limit > 0)) {
    throw new UsageError("--limit must be a positive integer");
  }
  const one = () => {
    if (rest.length !== 1) throw new UsageError(`${cmd} takes exactly one key id`);
    return rest[0];
  };
  switch (cmd) {
    case "keys": {
      const statuses = ["active", "deleted", "banned", "suspended"];
      if (flags.status !== undefined && !statuses.includes(flags.status)) {
        throw new UsageError(`--status must be one of ${statuses.join(", ")}`);
      }
      return ops.keys({ ...list, status: flags.status as ListOptions["status"] });
    }
    case "key": {
      const k = await ops.key(one());
      if (!k) throw new ApiError("not_found", `no key ${rest[0]}`);
      return k;
    }
    case "ban":
      if (!flags.reason?.trim()) throw new UsageError('ban needs --reason "why"');
      return ops.ban(one(), flags.reason.trim());
    case "lift":
      return ops.lift(one());
    case "purchases":
      return ops.purchases(list);
    case "names":
      return namesCommand(ops, rest);
    default:
      throw new UsageError(cmd ? `unknown command: ${cmd}` : "no command given");
  }
}

function namesCommand(ops: AdminOps, rest: string[]): Promise<unknown> {
  const [sub, ...names] = rest;
  switch (sub) {
    case undefined:
    case "list":
      return ops.names();
    case "set":
      if (names.length === 0) throw new UsageError("names set needs at least one name");
      return ops.setNames(names);
    case "add":
    case "remove":
      if (names.length === 0) throw new UsageError(`names ${sub} needs at least one name`);
      return ops.editNames(sub === "add" ? { add: names } : { remove: names });
    case "reset":
      return ops.resetNames();
    default:
      throw new UsageError(`unknown names command: ${sub}`);
  }
}

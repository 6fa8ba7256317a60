/** KV stores for tests: each closed when the test body is done, however it ends. */

/** A KV file (or ":memory:") opened for `fn` and closed after. */
export async function withKvAt<T>(path: string, fn: (kv: Deno.Kv) => Promise<T>): Promise<T> {
  const kv = await Deno.openKv(path);
  try {
    return await fn(kv);
  } finally {
    kv.close();
  }
}

/** Two in-memory stores: the log's and an audit's scratch. */
export async function withKvs<T>(fn: (kv: Deno.Kv, scratch: Deno.Kv) => Promise<T>): Promise<T> {
  const kv = await Deno.openKv(":memory:");
  const scratch = await Deno.openKv(":memory:");
  try {
    return await fn(kv, scratch);
  } finally {
    kv.close();
    scratch.close();
  }
}

/** `deno task -q <name> <args>` in the repository, its exit code and output. */
export async function runTask(name: string, ...args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "-q", name, ...args],
    cwd: new URL("../../", import.meta.url).pathname,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/**
 * `kv` with some of its methods replaced, every other one its own (bound to it): how a test counts
 * or slows the reads and writes a piece of code makes through the KV it is given.
 */
export function kvWith(kv: Deno.Kv, methods: Partial<Deno.Kv>): Deno.Kv {
  return new Proxy(kv, {
    get(target, name) {
      if (Object.hasOwn(methods, name)) return methods[name as keyof Deno.Kv];
      const v = Reflect.get(target, name, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}

/** `kv`, with a count of the sets its atomic operations take. */
export function countingSets(kv: Deno.Kv): { kv: Deno.Kv; sets: () => number } {
  let sets = 0;
  const counted = kvWith(kv, {
    atomic: (() => {
      const op = kv.atomic();
      const set = op.set.bind(op);
      op.set = (key, value, options) => {
        sets++;
        return set(key, value, options);
      };
      return op;
    }) as Deno.Kv["atomic"],
  });
  return { kv: counted, sets: () => sets };
}

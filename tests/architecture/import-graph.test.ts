/**
 * The import graph of src/, events/ and projections/ (TypeScript, and the portal's checked
 * JavaScript in src/portal/browser/), read from the source text: no cycles (type
 * imports included: a type loop still ties two files together), the kernel imports nothing of
 * ours outside it, the log (events/) imports neither projections/ nor the app (only the kernel,
 * which sits below everything), the read models only the log and the kernel, the commands only
 * those and the idempotency records they commit, the portal's browser code only itself and the
 * kernel, and features do not reach up into the HTTP layer. Between folders no import runs back up: the graph of folders has no loop (one import,
 * named below, aside). The embedded chain is a tool beside the product: only the programs that
 * start it import src/chain/. No module is a pass-through shim (only re-exports, or a
 * "re-export kept" line), nor passes on a name from another module: importers name the module
 * that holds the code.
 */
import { assertEquals } from "../support/assert.ts";

const ROOT = new URL("../../", import.meta.url);
const DIRS = ["src", "events", "projections"];

/** Every `import`/`export ... from` and dynamic `import("...")` specifier in a file. */
export function specifiers(source: string): string[] {
  const text = source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
  const out: string[] = [];
  const patterns = [
    /\bimport\s+(?:type\s+)?(?:[\w*\s{},$]*?\s+from\s+)?["']([^"']+)["']/g,
    /\bexport\s+(?:type\s+)?(?:\*|\{[^}]*\})(?:\s+as\s+\w+)?\s+from\s+["']([^"']+)["']/g,
    /\bimport\(\s*["']([^"']+)["']\s*\)/g,
  ];
  for (const re of patterns) for (const m of text.matchAll(re)) out.push(m[1]);
  return out;
}

async function walk(dir: string, into: string[]) {
  for await (const e of Deno.readDir(new URL(dir, ROOT))) {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory) await walk(path, into);
    else if (/\.(tsx?|js)$/.test(e.name)) into.push(path);
  }
}

function resolve(from: string, spec: string): string | null {
  if (!spec.startsWith(".")) return null; // npm packages and built-ins
  const parts = from.split("/").slice(0, -1);
  for (const p of spec.split("/")) {
    if (p === "..") parts.pop();
    else if (p !== ".") parts.push(p);
  }
  return parts.join("/");
}

async function sources(): Promise<Map<string, string>> {
  const files: string[] = [];
  for (const d of DIRS) await walk(d, files);
  const out = new Map<string, string>();
  for (const f of files) out.set(f, await Deno.readTextFile(new URL(f, ROOT)));
  return out;
}

export async function importGraph(): Promise<Map<string, string[]>> {
  const graph = new Map<string, string[]>();
  for (const [f, src] of await sources()) {
    graph.set(f, specifiers(src).map((s) => resolve(f, s)).filter((s): s is string => s !== null));
  }
  return graph;
}

/**
 * True for a module that only passes other modules' names on: every statement is an
 * `export ... from`, or an import whose names it re-exports with a bare `export { ... }`.
 */
export function isReexportOnly(source: string): boolean {
  const text = source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
  const from =
    /\bexport\s+(?:type\s+)?(?:\*(?:\s+as\s+\w+)?|\{[^}]*\})\s+from\s+["'][^"']+["']\s*;?/g;
  const reexports = text.match(from)?.length ?? 0;
  const bare = text.match(/\bexport\s+(?:type\s+)?\{[^}]*\}\s*;?/g)?.length ?? 0;
  if (reexports + bare === 0) return false;
  const rest = text
    .replace(from, "")
    .replace(/\bexport\s+(?:type\s+)?\{[^}]*\}\s*;?/g, "")
    .replace(/\bimport\s+(?:type\s+)?[\w*\s{},$]*?\s+from\s+["'][^"']+["']\s*;?/g, "");
  return rest.trim() === "";
}

/** Modules that are shims: re-exports only, or carrying a "re-export kept" line. */
export function shims(files: Map<string, string>): string[] {
  return [...files]
    .filter(([, src]) => isReexportOnly(src) || /re-export(?:ed)? kept/i.test(src))
    .map(([path]) => path)
    .sort();
}

/**
 * Every name a module passes on from elsewhere, as "path: name": `export { a } from`,
 * `export * from`, or an imported binding exported again with a bare `export { a }`. Inside a
 * module with code of its own such a line is a shim all the same: its importers should name the
 * module that holds the code.
 */
export function passThroughs(files: Map<string, string>): string[] {
  const out: string[] = [];
  const names = (list: string) =>
    list.split(",").map((n) => n.trim().replace(/^type\s+/, "")).filter(Boolean);
  for (const [path, source] of files) {
    const text = source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
    const imported = new Set<string>();
    const imports = /\bimport\s+(?:type\s+)?([\w*\s{},$]*?)\s+from\s+["'][^"']+["']/g;
    for (const [, clause] of text.matchAll(imports)) {
      const braces = clause.match(/\{([^}]*)\}/)?.[1] ?? "";
      for (const n of names(braces)) imported.add(n.split(/\s+as\s+/).pop()!);
      for (const n of names(clause.replace(/\{[^}]*\}/, ""))) {
        imported.add(n.split(/\s+as\s+/).pop()!);
      }
    }
    const from = /\bexport\s+(?:type\s+)?(\*(?:\s+as\s+\w+)?|\{[^}]*\})\s+from\s+["'][^"']+["']/g;
    for (const [, what] of text.matchAll(from)) {
      const list = what.startsWith("{") ? names(what.slice(1, -1)) : [what];
      for (const n of list) out.push(`${path}: ${n.split(/\s+as\s+/).pop()}`);
    }
    const bare = /\bexport\s+(?:type\s+)?\{([^}]*)\}(?!\s*from)/g;
    for (const [, list] of text.matchAll(bare)) {
      for (const n of names(list)) {
        const [local, as = local] = n.split(/\s+as\s+/);
        if (imported.has(local)) out.push(`${path}: ${as}`);
      }
    }
  }
  return out.sort();
}

/** The strongly connected parts with more than one file (or a file importing itself): Tarjan. */
export function cycles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const part: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        part.push(w);
      } while (w !== v);
      if (part.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(part.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!idx.has(v)) visit(v);
  return out;
}

/** Imports that break a layering rule, as "from -> to". */
export function upwardImports(graph: Map<string, string[]>): string[] {
  const bad: string[] = [];
  for (const [from, tos] of graph) {
    for (const to of tos) {
      const rule = from.startsWith("src/kernel/")
        ? !to.startsWith("src/kernel/") && "the kernel imports only itself"
        : from.startsWith("events/")
        ? (to.startsWith("projections/") ||
          (to.startsWith("src/") && !to.startsWith("src/kernel/"))) &&
          "the log imports neither projections/ nor src/ (the kernel aside)"
        : from.startsWith("projections/")
        ? !to.startsWith("projections/") && !to.startsWith("events/") &&
          !to.startsWith("src/kernel/") && "read models import only the log and the kernel"
        : from.startsWith("src/portal/browser/")
        ? !to.startsWith("src/portal/browser/") && !to.startsWith("src/kernel/") &&
          "the portal's browser code imports only itself and the kernel (it is bundled for the page)"
        : from.startsWith("src/commands/")
        ? !["src/commands/", "src/idempotency/", "src/kernel/", "events/", "projections/"]
          .some((p) => to.startsWith(p)) &&
          "commands import only the log, read models, idempotency records and the kernel"
        : isFeature(from) && (to.startsWith("src/http/") || to.startsWith("src/routes/")) &&
          "features do not import the HTTP layer";
      if (rule) bad.push(`${from} -> ${to} (${rule})`);
    }
  }
  return bad.sort();
}

function isFeature(path: string): boolean {
  if (!path.startsWith("src/")) return false;
  const top = path.split("/")[1];
  // The composition root, the HTTP layer and the programs that start things sit above features.
  return !["http", "routes", "app.ts", "main.ts", "bootstrap.ts", "services.ts", "cli"].includes(
    top,
  );
}

/** The programs that may start the embedded chain: the service's entry, local mode, the CLI. */
const CHAIN_USERS = ["src/main.ts", "src/bootstrap.ts", "src/cli/"];

/** Imports of src/chain/ from anything but the chain itself and the programs that start it. */
export function chainImports(graph: Map<string, string[]>): string[] {
  const bad: string[] = [];
  for (const [from, tos] of graph) {
    if (from.startsWith("src/chain/") || CHAIN_USERS.some((p) => from.startsWith(p))) continue;
    for (const to of tos) if (to.startsWith("src/chain/")) bad.push(`${from} -> ${to}`);
  }
  return bad.sort();
}

/** The folder a file belongs to: `src/<top>` (a folder, or a file at the root of src/), else the top. */
export function folderOf(path: string): string {
  const parts = path.split("/");
  return parts[0] === "src" ? parts.slice(0, 2).join("/") : parts[0];
}

/**
 * The one import allowed to run back up between folders, with its reason. tokens' request schema
 * asks metadata whether a URI is one of our own hosted documents, while metadata's request
 * refuses look-alike names with tokens' well-known-names list; the build's request schema is
 * being rewritten with the build pipeline, which takes this import with it.
 */
export const ALLOWED_UPWARD = new Set([
  "src/tokens/request-schema.ts -> src/metadata/document.ts",
]);

/**
 * Imports that close a loop between folders, as "from -> to": the folder graph, less the allowed
 * imports, must have no cycle, so each folder sits wholly above or below another.
 */
export function folderLoops(graph: Map<string, string[]>, allowed = ALLOWED_UPWARD): string[] {
  const folders = new Map<string, string[]>();
  const edges: [string, string][] = [];
  for (const [from, tos] of graph) {
    const a = folderOf(from);
    if (!folders.has(a)) folders.set(a, []);
    for (const to of tos) {
      const b = folderOf(to);
      if (a === b || allowed.has(`${from} -> ${to}`)) continue;
      edges.push([from, to]);
      if (!folders.get(a)!.includes(b)) folders.get(a)!.push(b);
    }
  }
  const partOf = new Map<string, number>();
  cycles(folders).forEach((part, i) => part.forEach((f) => partOf.set(f, i)));
  return edges
    .filter(([from, to]) => {
      const p = partOf.get(folderOf(from));
      return p !== undefined && p === partOf.get(folderOf(to));
    })
    .map(([from, to]) => `${from} -> ${to}`)
    .sort();
}

Deno.test("import graph: no cycles in src/, events/, projections/", async () => {
  assertEquals(cycles(await importGraph()), []);
});

Deno.test("import graph: nothing imports upward (kernel, log, features)", async () => {
  assertEquals(upwardImports(await importGraph()), []);
});

Deno.test("import graph: only the programs that start it import the embedded chain", async () => {
  assertEquals(chainImports(await importGraph()), []);
});

Deno.test("import graph: no import runs back up between folders (one, named, aside)", async () => {
  assertEquals(ALLOWED_UPWARD.size <= 1, true);
  assertEquals(folderLoops(await importGraph()), []);
});

Deno.test("import graph: no re-export shims in src/, events/, projections/", async () => {
  assertEquals(shims(await sources()), []);
});

Deno.test("import graph: no module passes on names from another", async () => {
  assertEquals(passThroughs(await sources()), []);
});

Deno.test("import graph: the pass-through check finds each re-exported name, and only those", () => {
  const files = new Map([
    [
      "src/a.ts",
      `import { x, type Y as Z } from "./x.ts";\nimport w from "w";\nexport { x, type Z, w };`,
    ],
    ["src/b.ts", `export const own = 1;\nexport {\n  b,\n  type B as C,\n} from "./real-b.ts";`],
    ["src/c.ts", `export * from "./c1.ts";\nexport * as ns from "./c2.ts";`],
    [
      "src/d.ts",
      `import { y } from "./y.ts";\nconst local = y + 1;\nexport { local };\n// export { y };`,
    ],
  ]);
  assertEquals(passThroughs(files), [
    "src/a.ts: Z",
    "src/a.ts: w",
    "src/a.ts: x",
    "src/b.ts: C",
    "src/b.ts: b",
    "src/c.ts: *",
    "src/c.ts: ns",
  ]);
});

Deno.test("import graph: the shim check finds re-export-only modules and kept re-exports", () => {
  const files = new Map([
    ["src/http/errors.ts", `// Moved.\nexport * from "../kernel/errors.ts";\n`],
    [
      "src/clock.ts",
      `export type { Clock } from "./kernel/clock.ts";\nexport * as c from "./c.ts";`,
    ],
    ["src/a.ts", `import { x, type Y } from "./x.ts";\n\nexport { x, type Y };\n`],
    ["src/b.ts", `export {\n  b,\n  type B,\n} from "./real-b.ts";\n`],
    [
      "src/kept.ts",
      `export const k = 1;\n// Moved to y.ts; re-export kept until later.\nexport { y } from "./y.ts";`,
    ],
    [
      "src/real.ts",
      `import { x } from "./x.ts";\nexport { y } from "./y.ts";\nexport const z = x + 1;`,
    ],
    ["src/empty.ts", `// nothing yet\n`],
  ]);
  assertEquals(shims(files), [
    "src/a.ts",
    "src/b.ts",
    "src/clock.ts",
    "src/http/errors.ts",
    "src/kept.ts",
  ]);
});

Deno.test("import graph: the checks find a planted cycle and planted upward imports", () => {
  const graph = new Map([
    ["src/http/env.ts", ["src/http/idempotency.ts"]],
    ["src/http/idempotency.ts", ["src/http/env.ts", "src/kernel/errors.ts"]],
    ["src/kernel/errors.ts", ["src/http/errors.ts"]],
    ["src/http/errors.ts", []],
    ["events/store.ts", ["projections/projection.ts", "src/kernel/hashing.ts"]],
    ["projections/projection.ts", []],
    ["src/kernel/hashing.ts", []],
    ["src/tokens/build-token.ts", ["src/http/idempotency.ts"]],
  ]);
  assertEquals(cycles(graph), [["src/http/env.ts", "src/http/idempotency.ts"]]);
  assertEquals(upwardImports(graph).map((s) => s.split(" (")[0]), [
    "events/store.ts -> projections/projection.ts",
    "src/kernel/errors.ts -> src/http/errors.ts",
    "src/tokens/build-token.ts -> src/http/idempotency.ts",
  ]);
});

Deno.test("import graph: specifiers are read from every import form", () => {
  assertEquals(
    specifiers(`import { a } from "./a.ts";
import type { B } from "../b.ts";
import * as c from "./c.ts";
import "./d.ts";
export { e } from "./e.ts";
export * from "./f.ts";
export type { G } from "./g.ts";
const h = await import("./h.ts");
// import { x } from "./commented.ts";
import {
  i,
  type J,
} from "./i.ts";`).sort(),
    ["../b.ts", "./a.ts", "./c.ts", "./d.ts", "./e.ts", "./f.ts", "./g.ts", "./h.ts", "./i.ts"],
  );
});

Deno.test("import graph: the chain and folder checks find planted imports, and only those", () => {
  const graph = new Map([
    ["src/main.ts", ["src/chain/mod.ts"]],
    ["src/cli/demo.ts", ["src/chain/mod.ts"]],
    ["src/chain/mod.ts", ["src/solana/tx-error.ts", "src/kernel/errors.ts"]],
    ["src/solana/tx-error.ts", []],
    ["src/creation/relay.ts", ["src/chain/mod.ts", "src/solana/tx-error.ts"]],
    ["src/commands/run.ts", ["src/domain/rejection.ts", "events/store.ts"]],
    ["src/domain/access/handle.ts", ["src/commands/run.ts"]],
    ["src/domain/rejection.ts", ["src/kernel/errors.ts"]],
    ["src/tokens/a.ts", ["src/metadata/b.ts"]],
    ["src/metadata/c.ts", ["src/tokens/d.ts"]],
    ["src/kernel/errors.ts", []],
    ["events/store.ts", []],
    ["projections/keys.ts", ["src/tokens/d.ts", "events/store.ts"]],
    ["src/portal/browser/app.js", ["src/portal/browser/ui.js", "src/kernel/encoding.ts"]],
    ["src/portal/browser/ui.js", ["src/config.ts"]],
    ["src/config.ts", []],
  ]);
  assertEquals(chainImports(graph), ["src/creation/relay.ts -> src/chain/mod.ts"]);
  assertEquals(folderLoops(graph, new Set()), [
    "src/commands/run.ts -> src/domain/rejection.ts",
    "src/domain/access/handle.ts -> src/commands/run.ts",
    "src/metadata/c.ts -> src/tokens/d.ts",
    "src/tokens/a.ts -> src/metadata/b.ts",
  ]);
  assertEquals(folderLoops(graph, new Set(["src/tokens/a.ts -> src/metadata/b.ts"])), [
    "src/commands/run.ts -> src/domain/rejection.ts",
    "src/domain/access/handle.ts -> src/commands/run.ts",
  ]);
  assertEquals(upwardImports(graph).map((s) => s.split(" (")[0]), [
    "projections/keys.ts -> src/tokens/d.ts",
    "src/commands/run.ts -> src/domain/rejection.ts",
    "src/portal/browser/ui.js -> src/config.ts",
  ]);
});

/**
 * The builds table written in full (every full audit, and an incremental one that cannot splice
 * the earlier table: spliced-builds-table.ts): every build in the audit's state, in build order,
 * a pack at a time, each with its exceptions, its part of the totals and its place in the index
 * (build-table.ts `BuildRows`). Two things make it cheaper at scale:
 *
 * - **Rows while the live pass ends** (`writeEarly`). After the chain pass the state holds every
 *   build, and the main thread waits for the live pass on the other one (up to a second or so at
 *   a million events): it writes rows until then, a pack at a time. Their exceptions go to a part
 *   of their own, appended after the replay's (projection mismatches come first, as when the
 *   tables follow the replay), so the tables are the same whatever the timing.
 * - **The later packs on the other core** (`write`): from `TABLES_WORKER_MIN` builds, with a file
 *   sink, a worker writes the rows of the packs from the middle of those left into part files
 *   (tables-worker.ts), appended after the main thread's.
 *
 * With `readTx` (--verify-chain) each landed creation is read back from the chain, a few at a
 * time, and everything is written on this thread.
 */
import { PROJECTIONS } from "../../events/keys.ts";
import { KvFile } from "../../events/kv-file.ts";
import { readAhead } from "../../events/read-ahead.ts";
import { type ChainCheck, checkOnChain, type TxReader } from "./chain-check.ts";
import {
  BuildRows,
  type BuildTotals,
  CountedExceptions,
  type ExceptionKind,
  type Raise,
} from "./build-table.ts";
import { AUDIT_BUILD, type AuditBuildDoc, BUILDS_PER_PACK } from "./folds.ts";
import { type AuditSink, FileSink, TablePart } from "./sink.ts";
import { listBuildPacks } from "./state-builds.ts";
import type { BuildsIndex } from "./table-splice.ts";
import { type BuildsPart, buildsPartInWorker, removeParts } from "./tables-worker.ts";

/**
 * Builds (by the span of their ids) from which the later half of the table is written on another
 * thread: its worker is up in 0.02 s, but it is a second heap beside the main thread's, and a
 * table of 50,000 builds takes only about 0.6 s to write on one thread.
 */
const TABLES_WORKER_MIN = 50_000;

/**
 * The other thread's share, by pack (64 build ids each). The service numbers builds in sequence,
 * so half the packs is about half the builds; an id far off (an outcome for a build never built)
 * only makes the halves uneven, never the tables different.
 */
const TABLES_WORKER_SHARE = 0.5;

/** The part file (sink.ts `TablePart`) of the exceptions of the rows written early. */
const EARLY_EXCEPTIONS = "exceptions-early";

export interface FullBuildsTableOptions {
  /** The audit's state: the builds, packed (folds.ts). */
  state: Deno.Kv;
  /** The state's file, when a worker can read it (the later packs are then written there). */
  statePath: string | null;
  sink: AuditSink;
  /** Column names, for the part files (the early exceptions', the worker's). */
  columns: { builds: string[]; exceptions: string[] };
  /**
   * Set for --verify-chain: reads each landed creation back from the chain (there are then no
   * early rows and no worker).
   */
  readTx: TxReader | null;
  /** Creations read from the chain at a time. */
  concurrency: number;
  /** See `TABLES_WORKER_MIN`; tests lower it. */
  tablesWorkerMin?: number;
  /** Counts every row in (the worker's added to them). */
  totals: BuildTotals;
  /** Where each row starts, for the next incremental audit; null: none kept. */
  index: BuildsIndex | null;
  /** Writes and counts an exception raised by a row written after the replay. */
  raise: Raise;
  /**
   * Adds exceptions counted apart (the early rows', the worker's), when their part is appended:
   * their kinds come after those counted so far.
   */
  addCounted: (byKind: Partial<Record<ExceptionKind, number>>, count: number) => void;
}

/**
 * One builds table: `writeEarly` while the replay's live pass ends (optional), then `write` once
 * after the replay, and `discard` always (in a `finally`: it lets go of what is left).
 */
export class FullBuildsTable {
  readonly #opts: FullBuildsTableOptions;
  readonly #rows: BuildRows;
  /** This thread's packs, in build order (the list reads its next page while rows are written). */
  #packs: AsyncGenerator<{ pack: Deno.KvKeyPart; builds: AuditBuildDoc[] }> | null = null;
  /** The last pack written early, and whether it was the state's last. */
  #earlyPack: Deno.KvKeyPart | undefined;
  #earlyDone = false;
  #early: CountedExceptions | null = null;
  #earlyBuilds = 0;
  #laterBuilds = 0;
  #verified = 0;

  constructor(opts: FullBuildsTableOptions) {
    this.#opts = opts;
    const sink = opts.sink;
    this.#rows = new BuildRows(
      {
        next: () => sink instanceof FileSink ? sink.next("builds") : null,
        write: (row) => sink.write("builds", row),
      },
      opts.totals,
      opts.index,
    );
  }

  /** Where each row starts, or null when the rows could not all be placed. */
  get index(): BuildsIndex | null {
    return this.#rows.index;
  }

  /** What the rows add up to (the worker's too, once `write` is done). */
  get totals(): BuildTotals {
    return this.#rows.totals;
  }

  /** Rows written early (`writeEarly`). */
  get earlyBuilds(): number {
    return this.#earlyBuilds;
  }

  /** Rows the worker wrote. */
  get laterBuilds(): number {
    return this.#laterBuilds;
  }

  /** Creations read back from the chain (`readTx`). */
  get verified(): number {
    return this.#verified;
  }

  #myPacks() {
    return this.#packs ??= readAhead(listBuildPacks(this.#opts.state, { batchSize: 500 }), 16);
  }

  /**
   * Writes rows, a pack at a time, until `liveEnded` settles (the replay's `meanwhile`: the state
   * holds every build by then). Nothing without a file sink, or with `readTx`.
   */
  async writeEarly(liveEnded: Promise<void>): Promise<void> {
    const sink = this.#opts.sink;
    if (!(sink instanceof FileSink) || this.#opts.readTx !== null || this.#earlyDone) return;
    let ended = false;
    liveEnded.then(() => (ended = true));
    const early = this.#early ??= new CountedExceptions(
      await TablePart.create(sink.dir, EARLY_EXCEPTIONS, this.#opts.columns.exceptions),
    );
    const packs = this.#myPacks();
    while (!ended) {
      const next = await packs.next();
      if (next.done) {
        this.#earlyDone = true;
        break;
      }
      for (const b of next.value.builds) await this.#rows.write(b, null, early.raise);
      this.#earlyPack = next.value.pack;
      this.#earlyBuilds += next.value.builds.length;
    }
  }

  /**
   * Writes the rest of the table after the replay: the early rows' exceptions, this thread's rows
   * up to the worker's share, then the worker's rows appended. `stateWritten`: writes to the state
   * still under way, which the worker must see.
   */
  async write(stateWritten?: Promise<void>): Promise<void> {
    const o = this.#opts;
    const sink = o.sink;
    const laterFrom = sink instanceof FileSink && o.readTx === null && o.statePath &&
        !this.#earlyDone
      ? await laterBuildsFrom(
        o.state,
        o.statePath,
        o.tablesWorkerMin ?? TABLES_WORKER_MIN,
        this.#earlyPack,
      )
      : null;
    if (laterFrom !== null) await stateWritten;
    const stop = new AbortController();
    const later = laterFrom === null ? null : buildsPartInWorker({
      statePath: o.statePath!,
      dir: (sink as FileSink).dir,
      from: laterFrom,
      columns: o.columns,
    }, stop.signal);
    later?.catch(() => {}); // awaited below; a failure meanwhile must not count as unhandled
    try {
      const early = this.#early;
      if (early) {
        await (sink as FileSink).append("exceptions", await early.part.close());
        this.#early = null;
        o.addCounted(early.byKind, early.count);
      }
      if (!this.#earlyDone) {
        const packs = this.#myPacks();
        const checking = new ChainChecks(o.readTx, o.concurrency, async (b, check) => {
          if (check) this.#verified++;
          await this.#rows.write(b, check, o.raise);
        });
        for (let p = await packs.next(); !p.done; p = await packs.next()) {
          if (laterFrom !== null && atOrAfter(p.value.pack, laterFrom)) break;
          for (const b of p.value.builds) await checking.add(b);
        }
        await checking.drain();
      }
      if (later) this.#laterBuilds = await this.#appendLater(await later);
    } finally {
      if (later) {
        // Failed: the worker goes, and what it wrote with it (appended parts are gone already).
        stop.abort();
        await removeParts((sink as FileSink).dir);
      }
    }
  }

  /** Puts the worker's rows after this thread's; returns how many builds it wrote. */
  async #appendLater(part: BuildsPart): Promise<number> {
    const sink = this.#opts.sink as FileSink;
    const shift = await sink.append("builds", part.builds);
    const rows = part.index;
    const index = this.#rows.index;
    if (index && rows) {
      for (let i = 0; i < rows.n; i++) {
        index.add(
          rows.ids[i],
          rows.csv[i] + shift.csv,
          rows.json[i] + shift.json,
          rows.flags[i] === 1,
        );
      }
    } else this.#rows.index = null;
    await sink.append("exceptions", part.exceptions);
    this.#opts.addCounted(part.byKind, part.exceptions.rows);
    this.#opts.totals.add(part.totals);
    return part.builds.rows;
  }

  /** Lets go of what is left (the pack listing, the early part), after `write` or a failure. */
  async discard(): Promise<void> {
    await this.#packs?.return(undefined);
    const early = this.#early;
    if (!early) return;
    this.#early = null;
    const files = await early.part.close().catch(() => null);
    if (files) { for (const f of [files.csv, files.json]) await Deno.remove(f).catch(() => {}); }
  }
}

/**
 * Builds whose creations `--verify-chain` reads back from the chain, `concurrency` at a time;
 * each is then written, in order, with what the chain said (null: nothing to check).
 */
class ChainChecks {
  #pending: AuditBuildDoc[] = [];

  constructor(
    readonly readTx: TxReader | null,
    readonly concurrency: number,
    readonly write: (b: AuditBuildDoc, check: ChainCheck | null) => Promise<void>,
  ) {}

  async add(b: AuditBuildDoc): Promise<void> {
    this.#pending.push(b);
    if (this.#pending.length >= this.concurrency) await this.drain();
  }

  async drain(): Promise<void> {
    const pending = this.#pending;
    this.#pending = [];
    const checks = await Promise.all(pending.map((b) => this.#check(b)));
    for (let i = 0; i < pending.length; i++) await this.write(pending[i], checks[i]);
  }

  #check(b: AuditBuildDoc): Promise<ChainCheck | null> {
    const readTx = this.readTx;
    if (
      readTx === null || b.signature === null || b.treasury === null ||
      (b.status !== "confirmed" && b.status !== "unverified")
    ) return Promise.resolve(null);
    return checkOnChain(readTx, {
      signature: b.signature,
      mint: b.mint,
      payer: b.payer,
      treasury: b.treasury,
      status: b.status,
      quotedLamports: b.quotedLamports,
      feeSeenLamports: b.feeSeenLamports,
    });
  }
}

/**
 * The pack where the other thread's share starts: the middle of the builds' packs after `after`
 * (the last one this thread wrote already, if any), or null when they span fewer than `min` ids
 * or are not all numbers (the state's first and last pack), or when the state's file is not one
 * the worker can read.
 */
async function laterBuildsFrom(
  state: Deno.Kv,
  statePath: string,
  min: number,
  after?: Deno.KvKeyPart,
): Promise<number | null> {
  const file = KvFile.open(statePath);
  if (!file) return null;
  file.close();
  const prefix = [...PROJECTIONS, AUDIT_BUILD];
  const end = async (reverse: boolean) => {
    for await (const e of state.list({ prefix }, { limit: 1, reverse })) {
      return e.key[prefix.length];
    }
    return null;
  };
  const [first, last] = [await end(false), await end(true)];
  if (typeof first !== "number" || typeof last !== "number") return null;
  // Between two numbers, every pack key is a number (KV orders keys by type first).
  const from = typeof after === "number" ? after + 1 : first;
  if (
    !Number.isSafeInteger(from) || !Number.isSafeInteger(last) ||
    (last - from) * BUILDS_PER_PACK < min
  ) return null;
  // This thread keeps at least the first pack.
  return from + Math.max(1, Math.floor((last - from) * (1 - TABLES_WORKER_SHARE)));
}

/**
 * Whether the pack key `pack` sorts at or after the pack number `from` in the KV's order, where
 * -0 comes before 0 (`from`, from `laterBuildsFrom`, is never -0). Keys past a number are numbers
 * up to the state's last pack, which `laterBuildsFrom` found to be one.
 */
const atOrAfter = (pack: Deno.KvKeyPart, from: number) =>
  typeof pack === "number" && (pack > from || (pack === from && !Object.is(pack, -0)));

/**
 * The audit's state and its checkpoint. The state is a KV of the audit's own (`DIR/state.sqlite3`,
 * never the audited one) holding the folds the tables are written from: the audit's builds, the
 * keys and the purchases, as of the checkpoint. A clean audit writes `checkpoint.json` beside it;
 * an incremental audit (`--from`) starts from both.
 */
import { commitInBatches } from "./commit-batches.ts";

/** 3: the state holds only the folds of the tables, one entry per document. */
export const CHECKPOINT_VERSION = 3;

export interface Checkpoint {
  version: number;
  /** The log position and the hash of the event there that the audit covered. */
  position: number;
  hash: string;
  /** Projection documents the audit compared. */
  documents: number;
  auditedAt: string;
}

/**
 * Events past the checkpoint an incremental audit takes; further behind, a full audit costs
 * about as much, and it asks for one.
 */
export const MAX_INCREMENTAL_EVENTS = 100_000;

export class TooFarBehindError extends Error {
  constructor(readonly events: number) {
    super(
      `${events} events since the checkpoint, more than an incremental audit takes ` +
        `(${MAX_INCREMENTAL_EVENTS}): run a full audit (it writes a new checkpoint)`,
    );
  }
}

export async function readCheckpoint(dir: string): Promise<Checkpoint> {
  const cp = JSON.parse(await Deno.readTextFile(`${dir}/checkpoint.json`)) as Checkpoint;
  if (cp.version !== CHECKPOINT_VERSION) {
    throw new Error(
      `checkpoint version ${cp.version}, this audit reads ${CHECKPOINT_VERSION}: run a full audit`,
    );
  }
  if (!Number.isSafeInteger(cp.position) || typeof cp.hash !== "string") {
    throw new Error("checkpoint.json is not a checkpoint");
  }
  return cp;
}

/** Writes documents to the state a few hundred to a commit (null deletes). */
export class StateWriter {
  #pending: { key: Deno.KvKey; value: unknown }[] = [];

  constructor(readonly state: Deno.Kv) {}

  async put(key: Deno.KvKey, value: unknown): Promise<void> {
    this.#pending.push({ key, value });
    if (this.#pending.length >= 500) await this.flush();
  }

  async flush(): Promise<void> {
    const writes = this.#pending;
    this.#pending = [];
    await commitInBatches(this.state, writes);
  }
}

/**
 * The node's WebSocket PubSub API (what web3.js's confirmTransaction and onAccountChange use):
 * signature, account, logs, slot and root subscriptions, each notified once its commitment is
 * reached.
 */
import type { AccountSnap } from "./accounts.ts";
import { type Commitment, commitmentRank } from "./blocks.ts";
import type { TxRecord } from "./history.ts";
import { INVALID_PARAMS, METHOD_NOT_FOUND, RpcError, stringify } from "./jsonrpc.ts";
import type { ChainNode } from "./node.ts";
import { parsePubkey } from "./rpc.ts";
import { parseMint } from "./spl-token.ts";
import { type AccountEncoding, uiAccount } from "./ui.ts";
import { base58Decode, base58Encode } from "./codec.ts";

type Sub =
  | { kind: "signature"; signature: string; commitment: Commitment }
  | {
    kind: "account";
    key: Uint8Array;
    keyStr: string;
    commitment: Commitment;
    encoding: AccountEncoding;
  }
  | { kind: "logs"; mentions: string | null; commitment: Commitment }
  | { kind: "slot" }
  | { kind: "root" };

interface Entry {
  id: number;
  socket: WebSocket;
  sub: Sub;
}

interface Pending {
  entry: Entry;
  slot: number;
  /** The transaction behind a logs notification (account notifications read current state). */
  record?: TxRecord;
}

const NOTIFICATION: Record<Sub["kind"], string> = {
  signature: "signatureNotification",
  account: "accountNotification",
  logs: "logsNotification",
  slot: "slotNotification",
  root: "rootNotification",
};

export class PubSub {
  #nextId = 0;
  #subs = new Map<number, Entry>();
  #sockets = new Set<WebSocket>();
  /** Account/logs notifications waiting for their commitment. */
  #pending: Pending[] = [];

  constructor(readonly node: ChainNode) {
    node.onTransaction((r) => this.#onTransaction(r));
    node.onAccountWrite((key) => {
      for (const e of this.#subs.values()) {
        if (e.sub.kind === "account" && e.sub.keyStr === key) {
          this.#queue(e.sub.commitment, { entry: e, slot: node.blocks.slot });
        }
      }
    });
    node.blocks.onSlot(() => this.#onSlot());
  }

  attach(socket: WebSocket): void {
    this.#sockets.add(socket);
    socket.onmessage = (ev) => this.#onMessage(socket, typeof ev.data === "string" ? ev.data : "");
    socket.onclose = () => {
      this.#sockets.delete(socket);
      for (const [id, e] of this.#subs) if (e.socket === socket) this.#subs.delete(id);
      this.#pending = this.#pending.filter((p) => p.entry.socket !== socket);
    };
    socket.onerror = () => {};
  }

  /** Closes every client socket with 1000 (normal) so clients don't try to reconnect. */
  closeAll(): void {
    for (const s of this.#sockets) {
      try {
        s.close(1000, "chain shutting down");
      } catch { /* already closing */ }
    }
    this.#sockets.clear();
    this.#subs.clear();
    this.#pending = [];
  }

  #onMessage(socket: WebSocket, text: string): void {
    let req: { id?: unknown; method?: unknown; params?: unknown };
    try {
      req = JSON.parse(text);
    } catch {
      return this.#send(socket, {
        jsonrpc: "2.0",
        error: { code: -32700, message: "Parse error" },
        id: null,
      });
    }
    // Notifications (e.g. web3.js's keep-alive "ping") get no answer.
    if (req === null || typeof req !== "object" || !("id" in req)) return;
    const id = req.id as number | string | null;
    try {
      const params = Array.isArray(req.params) ? req.params : [];
      const result = this.#call(socket, String(req.method), params);
      this.#send(socket, { jsonrpc: "2.0", result, id });
      if (typeof result === "number") this.#checkImmediate(result);
    } catch (e) {
      const err = e instanceof RpcError ? e : new RpcError(-32603, String(e));
      this.#send(socket, { jsonrpc: "2.0", error: { code: err.code, message: err.message }, id });
    }
  }

  #call(socket: WebSocket, method: string, params: unknown[]): unknown {
    const cfg = (params[1] ?? {}) as Record<string, unknown>;
    const commitment = (cfg.commitment as Commitment | undefined) ?? "finalized";
    if (!["processed", "confirmed", "finalized"].includes(commitment)) {
      throw new RpcError(INVALID_PARAMS, `Invalid params: unknown variant \`${commitment}\`.`);
    }
    const add = (sub: Sub) => {
      const id = ++this.#nextId;
      this.#subs.set(id, { id, socket, sub });
      return id;
    };
    switch (method) {
      case "signatureSubscribe": {
        const signature = params[0];
        if (typeof signature !== "string") throw new RpcError(INVALID_PARAMS, "Invalid params");
        return add({ kind: "signature", signature, commitment });
      }
      case "accountSubscribe": {
        const key = parsePubkey(params[0]);
        return add({
          kind: "account",
          key,
          keyStr: base58Encode(key),
          commitment,
          encoding: (cfg.encoding as AccountEncoding | undefined) ?? "base64",
        });
      }
      case "logsSubscribe": {
        const f = params[0];
        let mentions: string | null = null;
        if (f && typeof f === "object" && Array.isArray((f as { mentions?: unknown }).mentions)) {
          const m = (f as { mentions: unknown[] }).mentions;
          if (m.length !== 1) {
            throw new RpcError(INVALID_PARAMS, "Invalid Request: Only 1 address supported");
          }
          mentions = base58Encode(parsePubkey(m[0]));
        } else if (f !== "all" && f !== "allWithVotes") {
          throw new RpcError(INVALID_PARAMS, "Invalid params");
        }
        return add({ kind: "logs", mentions, commitment });
      }
      case "slotSubscribe":
        return add({ kind: "slot" });
      case "rootSubscribe":
        return add({ kind: "root" });
      case "signatureUnsubscribe":
      case "accountUnsubscribe":
      case "logsUnsubscribe":
      case "slotUnsubscribe":
      case "rootUnsubscribe": {
        const id = params[0];
        const e = typeof id === "number" ? this.#subs.get(id) : undefined;
        if (!e || e.socket !== socket) {
          throw new RpcError(INVALID_PARAMS, "Invalid subscription id.");
        }
        this.#subs.delete(id as number);
        return true;
      }
    }
    throw new RpcError(METHOD_NOT_FOUND, "Method not found");
  }

  #send(socket: WebSocket, msg: unknown): void {
    if (socket.readyState !== WebSocket.OPEN) return;
    socket.send(stringify(msg));
  }

  #notify(e: Entry, result: unknown): void {
    this.#send(e.socket, {
      jsonrpc: "2.0",
      method: NOTIFICATION[e.sub.kind],
      params: { result, subscription: e.id },
    });
  }

  /** A signature that already reached its commitment is reported right after subscribing. */
  #checkImmediate(id: number): void {
    const e = this.#subs.get(id);
    if (e?.sub.kind === "signature") this.#checkSignature(e);
  }

  #checkSignature(e: Entry): void {
    if (e.sub.kind !== "signature") return;
    const r = this.node.history.recent(e.sub.signature);
    if (!r || !this.node.blocks.reaches(r.slot, e.sub.commitment)) return;
    this.#notify(e, { context: { slot: this.node.blocks.slot }, value: { err: r.err } });
    this.#subs.delete(e.id);
  }

  #onTransaction(r: TxRecord): void {
    const keys = new Set(r.tx.keyStrings);
    for (const e of this.#subs.values()) {
      const s = e.sub;
      if (s.kind === "signature" && s.signature === r.signature) this.#checkSignature(e);
      else if (s.kind === "account" && keys.has(s.keyStr)) {
        this.#queue(s.commitment, { entry: e, slot: r.slot });
      } else if (s.kind === "logs" && (s.mentions === null || keys.has(s.mentions))) {
        this.#queue(s.commitment, { entry: e, slot: r.slot, record: r });
      }
    }
  }

  #queue(commitment: Commitment, p: Pending): void {
    if (commitmentRank(commitment) === 0) this.#deliver(p);
    else this.#pending.push(p);
  }

  #deliver(p: Pending): void {
    const e = p.entry;
    if (!this.#subs.has(e.id)) return;
    const context = { slot: this.node.blocks.slot };
    if (e.sub.kind === "account") {
      const acc = this.node.executor.db.get(e.sub.key);
      this.#notify(e, { context, value: this.#account(acc, e.sub.encoding) });
    } else if (e.sub.kind === "logs" && p.record) {
      this.#notify(e, {
        context,
        value: { err: p.record.err, logs: p.record.logs, signature: p.record.signature },
      });
    }
  }

  #account(acc: AccountSnap | null, encoding: AccountEncoding): unknown {
    // A closed account is reported as an empty system account, like the node does.
    const mintDecimals = (mint: string) => {
      const m = this.node.executor.db.get(base58Decode(mint));
      return m ? parseMint(m.data, m.ownerStr)?.decimals ?? null : null;
    };
    if (!acc) {
      return {
        data: ["", "base64"],
        executable: false,
        lamports: 0,
        owner: "11111111111111111111111111111111",
        rentEpoch: 0,
        space: 0,
      };
    }
    try {
      return uiAccount(acc, encoding, mintDecimals);
    } catch {
      return uiAccount(acc, "base64", mintDecimals);
    }
  }

  #onSlot(): void {
    const blocks = this.node.blocks;
    const slot = blocks.slot;
    const root = Math.max(0, slot - 32);
    for (const e of [...this.#subs.values()]) {
      if (e.sub.kind === "slot") this.#notify(e, { parent: Math.max(0, slot - 1), root, slot });
      else if (e.sub.kind === "root") this.#notify(e, root);
      else if (e.sub.kind === "signature") this.#checkSignature(e);
    }
    if (this.#pending.length) {
      const still: Pending[] = [];
      for (const p of this.#pending) {
        const c = (p.entry.sub as { commitment: Commitment }).commitment;
        if (blocks.reaches(p.slot, c)) this.#deliver(p);
        else still.push(p);
      }
      this.#pending = still;
    }
  }
}

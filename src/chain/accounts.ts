/**
 * Account access over litesvm's napi store with the node's view of existence (0 lamports ==
 * no account), plus snapshot/restore used to make multi-step execution atomic.
 */
import { Account, type LiteSvm } from "litesvm/internal";
import { base58Encode } from "./codec.ts";
import { bytesEqual } from "../kernel/bytes.ts";

export class AccountSnap {
  #ownerStr: string | undefined;
  constructor(
    readonly lamports: bigint,
    readonly data: Uint8Array,
    readonly owner: Uint8Array,
    readonly executable: boolean,
    readonly rentEpoch: bigint,
  ) {}

  get ownerStr(): string {
    return this.#ownerStr ??= base58Encode(this.owner);
  }

  with(p: { lamports?: bigint; data?: Uint8Array; owner?: Uint8Array }): AccountSnap {
    return new AccountSnap(
      p.lamports ?? this.lamports,
      p.data ?? this.data,
      p.owner ?? this.owner,
      this.executable,
      this.rentEpoch,
    );
  }

  sameAs(o: AccountSnap | null): boolean {
    return o !== null && o.lamports === this.lamports && o.executable === this.executable &&
      bytesEqual(o.owner, this.owner) && bytesEqual(o.data, this.data);
  }
}

/** rent_epoch the node stamps on rent-exempt accounts (u64::MAX). */
export const RENT_EXEMPT_EPOCH = 18446744073709551615n;

export class AccountsDb {
  /**
   * Program accounts, which ordinary transactions cannot modify, are kept here so that
   * snapshotting a transaction's accounts doesn't copy and compare program binaries (the
   * ATA program alone is 100 KB) on every call. A lamport check catches the rare change.
   */
  #executables = new Map<string, AccountSnap>();

  constructor(readonly svm: LiteSvm) {}

  get(key: Uint8Array): AccountSnap | null {
    const id = keyId(key);
    const cached = this.#executables.get(id);
    if (cached && this.svm.getBalance(key) === cached.lamports) return cached;
    const a = this.svm.getAccount(key);
    if (!a) return null;
    const lamports = a.lamports();
    if (lamports === 0n) return null;
    const snap = new AccountSnap(lamports, a.data(), a.owner(), a.executable(), a.rentEpoch());
    if (snap.executable) this.#executables.set(id, snap);
    else if (cached) this.#executables.delete(id);
    return snap;
  }

  set(key: Uint8Array, a: AccountSnap | null): void {
    this.#executables.delete(keyId(key));
    if (a === null) {
      this.svm.setAccount(key, new Account(0n, new Uint8Array(0), SYSTEM_PROGRAM_BYTES, false, 0n));
      return;
    }
    this.svm.setAccount(key, new Account(a.lamports, a.data, a.owner, a.executable, a.rentEpoch));
  }

  /** Puts back every account that differs from the snapshot. */
  restore(keys: Uint8Array[], snapshot: (AccountSnap | null)[]): void {
    for (let i = 0; i < keys.length; i++) {
      const want = snapshot[i];
      const now = this.get(keys[i]);
      if (want === now || (want === null ? now === null : want.sameAs(now))) continue;
      this.set(keys[i], want);
    }
  }

  rentExemptMinimum(len: number): bigint {
    return this.svm.minimumBalanceForRentExemption(BigInt(len));
  }
}

/** A cheap map key for 32 raw bytes (base58 costs far more and is only needed for output). */
function keyId(key: Uint8Array): string {
  return String.fromCharCode.apply(null, key as unknown as number[]);
}

export const SYSTEM_PROGRAM = "11111111111111111111111111111111";
export const SYSTEM_PROGRAM_BYTES = new Uint8Array(32);

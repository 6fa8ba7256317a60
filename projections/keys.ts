/** API keys as authentication sees them: the keyed hash of the secret and whether it may be used. */
import type { StoredEvent } from "../events/types.ts";
import type { DeclaredProjection } from "../events/projection.ts";
import { KEY_EVENT_TYPES } from "../events/event-types.ts";

export interface KeyDoc {
  keyId: string;
  purchaseId: string;
  wallet: string;
  secretMac: string;
  createdAt: number;
  rotatedAt: number | null;
  deleted: boolean;
  banned: string | null;
  suspended: string | null;
  unverifiedCount: number;
}

export const keyUsable = (k: KeyDoc | null): k is KeyDoc =>
  !!k && !k.deleted && k.banned === null && k.suspended === null;

/**
 * The key a request authenticated with is still the one in force: usable, and not rotated since.
 * Checked again in a command's own commit, so a ban, deletion or rotation that lands while the
 * request is under way wins over its write (a rotation ends the old secret at once).
 */
export const stillInForce = (
  now: KeyDoc | null,
  authenticated: Pick<KeyDoc, "secretMac">,
): now is KeyDoc => keyUsable(now) && now.secretMac === authenticated.secretMac;

export const keyStatus = (k: KeyDoc) =>
  k.deleted ? "deleted" : k.banned ? "banned" : k.suspended ? "suspended" : "active";

export const keysProjection: DeclaredProjection<KeyDoc> = {
  name: "key",
  // CreationUnverified: the unverified builds that suspend a key count here.
  handles: [...KEY_EVENT_TYPES, "CreationUnverified"],
  keysOf(e: StoredEvent) {
    switch (e.type) {
      case "KeyIssued":
      case "KeyRotated":
      case "KeyDeleted":
      case "KeyBanned":
      case "KeyBanLifted":
      case "KeySuspended":
        return [[e.data.keyId]];
      case "CreationUnverified":
        return [[e.data.keyId]];
      default:
        return [];
    }
  },
  evolve(doc, e) {
    switch (e.type) {
      case "KeyIssued":
        return {
          keyId: e.data.keyId,
          purchaseId: e.data.purchaseId,
          wallet: e.data.wallet,
          secretMac: e.data.secretMac,
          createdAt: e.at,
          rotatedAt: null,
          deleted: false,
          banned: null,
          suspended: null,
          unverifiedCount: 0,
        };
      case "KeyRotated":
        return doc && { ...doc, secretMac: e.data.secretMac, rotatedAt: e.at };
      case "KeyDeleted":
        return doc && { ...doc, deleted: true };
      case "KeyBanned":
        return doc && { ...doc, banned: e.data.reason };
      case "KeyBanLifted":
        return doc && { ...doc, banned: null, suspended: null };
      case "KeySuspended":
        return doc && { ...doc, suspended: e.data.reason };
      case "CreationUnverified":
        return doc && { ...doc, unverifiedCount: doc.unverifiedCount + 1 };
      default:
        return doc;
    }
  },
};

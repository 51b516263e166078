/**
 * API keys: how they look, how they are hashed, what a key record holds, and when one is usable. Why a usable key
 * is refused is refusal.ts.
 * The plaintext key is shown once on creation and never stored or logged: storage holds its SHA-256.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { crc32 } from 'node:zlib';
import {
  BEARER_PATTERN,
  CHECKED_KEY,
  CHECKED_KEY_LENGTH,
  EXPIRED_NOTICE_SECONDS,
  OLD_KEY_PATTERN,
} from '../../contract/auth.ts';
export { CHECKED_KEY, OLD_KEY_PATTERN } from '../../contract/auth.ts';
import { PLANS, planUsageKeyValue, type PlanLimits, type PlanName } from '../../contract/plans.ts';
import type { BanCause } from '../../contract/deny-context.ts';

export type KeyStatus = 'active' | 'revoked';

export interface KeyRecord {
  readonly hash: string;
  readonly keyId: string;
  readonly owner: string;
  readonly plan: PlanName;
  /** Custom limits (Enterprise); absent for plans with fixed limits. */
  readonly limits?: PlanLimits;
  readonly status: KeyStatus;
  readonly createdAt: string;
  readonly rotatedAt?: string;
  /** When the key was revoked. */
  readonly revokedAt?: string;
  /** An admin's ban (unix seconds): the key is refused until then (`keys ban`). */
  readonly bannedUntil?: number;
  /** Bans ending at or before this (unix seconds) are lifted (`keys unban`): the limiter's and the gateway's. */
  readonly unbannedThrough?: number;
  /**
   * Where the key was before its first plan change of the day, and its standing then: a set-plan back there the same
   * day is an admin undoing a mistake, and lifts the bans the mistake caused (lib/admin/lifecycle.ts setPlan).
   */
  readonly planMove?: {
    readonly plan: PlanName;
    readonly limits?: PlanLimits;
    /** The UTC day (start, unix seconds) of the move. */
    readonly day: number;
    /** The latest ban (or ended ban the gateway still held) at the move, unix seconds; 0 for none. */
    readonly banEnd: number;
    /** The key's bans that day at the move. */
    readonly bans: number;
  };
  /**
   * Optimistic concurrency: every admin write is conditional on the version it read and stores version + 1, so two
   * admins never undo each other's change. Records written before versions existed count as version 0.
   */
  readonly version?: number;
  /** Random id of the admin write that produced this version: a retried write recognises its own earlier success. */
  readonly writeId?: string;
  /**
   * A key whose `keys create` has not yet shown a secret that works (it stopped, or its answer was lost, between its
   * record write and the write that makes the shown secret work): its record sits under a placeholder instead of a
   * secret's hash, so no secret finds it and the authorizer refuses every request. The same create run again gives it
   * a secret (lib/admin/lifecycle.ts create).
   */
  readonly undelivered?: boolean;
  /** `read`: the key may call only the operations that read (contract/routes.ts `does`). Absent: every operation. */
  readonly scope?: KeyScope;
  /** When the key expires (unix seconds): refused from then. Absent: it never expires. */
  readonly validUntil?: number;
  /**
   * Earlier secrets still accepted (`keys rotate --overlap`): each one's hash and the end of its overlap (unix
   * seconds). Kept on the record so a later rotation moves them to the new secret and `keys show` prints them.
   */
  readonly overlaps?: readonly KeyOverlapRef[];
}

/** What a key may call: every operation, or only those that read. */
export type KeyScope = 'all' | 'read';
export const KEY_SCOPES = ['all', 'read'] as const satisfies readonly KeyScope[];

/** An earlier secret whose overlap runs: its hash and its end (unix seconds). */
export interface KeyOverlapRef {
  readonly hash: string;
  readonly until: number;
}

/** An admin write found the record changed (another version, or rotated away) since it was read. */
export class StaleKeyRecordError extends Error {
  constructor(keyId: string) {
    super(`key ${keyId} changed while it was being updated`);
    this.name = 'StaleKeyRecordError';
  }
}

/**
 * What a rotation with an overlap leaves under the old secret's hash (`keys rotate --overlap`): the hash of the
 * secret that replaced it, and until when the old one is still accepted (unix seconds). No key id, plan or status:
 * the authorizer follows it to the current record, so that record decides (a revoked key refuses both secrets).
 */
export interface KeyOverlap {
  readonly hash: string;
  readonly overlapOf: string;
  readonly overlapUntil: number;
}

/** The hash an item read under a secret's hash leads to while its overlap lasts; undefined for anything else. */
export function overlapTarget(item: unknown, nowSec: number): string | undefined {
  const o = item as Partial<KeyOverlap> | undefined;
  return typeof o?.overlapOf === 'string' && typeof o.overlapUntil === 'number' && o.overlapUntil > nowSec
    ? o.overlapOf
    : undefined;
}

export interface KeyStore {
  getByHash(hash: string): Promise<KeyRecord | undefined>;
}

export function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** Whether the stage still looks up keys of the old form (its authorizer's OLD_KEY_FORM). */
export type OldKeyForm = 'accepted' | 'refused';

/**
 * Keys carry their own check, as GitHub's and Stripe's do: `ask2_` + 32 random bytes (base64url, 43 characters) +
 * the CRC-32 of everything before it (4 bytes, base64url, 6 characters): 54 characters. A token that claims this
 * form and fails its check is refused without a read (a flood of random tokens costs no DynamoDB request). Keys
 * issued before (`ask_` + 32 random bytes, base64url: 43 characters, no check) are looked up as before until they are
 * rotated, and only at that exact shape: any other token is no key anyone was issued, refused without a read. Once
 * no old key is left, the stage refuses the old form too (OLD_KEY_FORM=refused: docs/deployment.md, "Guards against
 * floods"), and no token costs a read unless it passes its check. CRC-32 is a checksum, not a MAC: it stops random
 * and mistyped tokens, not someone who computes it; such a token costs a read, and WAF's per-address and per-key
 * rules bound how many (lib/constructs/web-firewall.ts). A token of no issued form never reaches the gateway (WAF).
 */
function keyCheck(body: string): string {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(crc32(body));
  return b.toString('base64url');
}

export function generateKey(): string {
  const body = `${CHECKED_KEY.prefix}${randomBytes(CHECKED_KEY.randomBytes).toString('base64url')}`;
  return `${body}${keyCheck(body)}`;
}

/**
 * `forged`: no key has it, and no read is needed to say so: the checked form (its prefix) failing its length or
 * check, the old form once the stage refuses it, any other shape. `checked`: the form holds. `unchecked`: the old
 * key's exact shape while the stage accepts it, which only a lookup can judge.
 */
export function keyForm(key: string, oldForm: OldKeyForm = 'accepted'): 'checked' | 'forged' | 'unchecked' {
  if (key.startsWith(CHECKED_KEY.prefix)) {
    if (key.length !== CHECKED_KEY_LENGTH) return 'forged';
    const cut = key.length - CHECKED_KEY.checkChars;
    return keyCheck(key.slice(0, cut)) === key.slice(cut) ? 'checked' : 'forged';
  }
  return oldForm === 'accepted' && OLD_KEY_PATTERN.test(key) ? 'unchecked' : 'forged';
}

export function generateKeyId(): string {
  return `key_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
}

/** The limits that apply to a key: its custom ones, or its plan's. */
export function limitsOf(record: Pick<KeyRecord, 'plan' | 'limits'>): PlanLimits | undefined {
  return record.limits ?? PLANS[record.plan].limits;
}

/** What the authorizer passes to every operation (API Gateway context values are strings, numbers or booleans). */
export interface AuthContext {
  readonly keyId: string;
  readonly plan: PlanName;
  readonly perMinute: number;
  readonly perDay: number;
  /**
   * `read`: the envelope refuses every operation that changes data (403 key_read_only). Absent (a context of an
   * authorizer from before scopes, whose keys all had every scope): `all`.
   */
  readonly scope?: KeyScope;
  /**
   * When the key expires (unix seconds); 0 or absent: never. The envelope refuses it from then (401 key_expired),
   * exactly, however long ago the gateway cached its Allow.
   */
  readonly validUntil?: number;
  /**
   * The SHA-256 of the secret the request came with, where a function that refuses the key records its standing
   * for the gateway (storage/standing.ts). The hash only: never the secret.
   */
  readonly keyHash?: string;
}

/** Extracts the key from `Bearer <key>`; undefined for anything else. */
export function parseBearer(header: string | undefined): string | undefined {
  const m = BEARER_PATTERN.exec(header ?? '');
  return m?.[1];
}

/** A usable key: what the operations get, and the API key its requests count against on this stage. */
export interface Authenticated extends AuthContext {
  /** Its plan's API key on the stage (contract/plans.ts planUsageKeyValue). */
  readonly usageIdentifierKey: string;
}

/**
 * Decides whether a bearer header is a usable key on `stage` at `nowSec`; undefined means 401. A key expired less
 * than EXPIRED_NOTICE_SECONDS ago is usable here: the operation refuses it with its own answer (refusal.ts).
 */
export async function authenticate(
  store: KeyStore,
  header: string | undefined,
  stage: string,
  nowSec: number,
  oldForm: OldKeyForm = 'accepted',
): Promise<Authenticated | undefined> {
  const key = parseBearer(header);
  if (!key || keyForm(key, oldForm) === 'forged') return undefined;
  const auth = usableKey(await store.getByHash(hashKey(key)), stage);
  return auth && expiryAt(auth.validUntil, nowSec) !== 'gone' ? auth : undefined;
}

/**
 * A key record that may be used on `stage`, as the operations see it (its expiry is judged at a time: expiryAt);
 * undefined means 401. A scope or expiry this code cannot read refuses the key rather than guess it wider.
 */
export function usableKey(record: KeyRecord | undefined, stage: string): Authenticated | undefined {
  if (!record || record.status !== 'active') return undefined;
  const limits = limitsOf(record);
  if (!limits) return undefined; // an Enterprise key without agreed limits is not usable
  const scope = record.scope ?? 'all';
  if (!KEY_SCOPES.includes(scope)) return undefined;
  const validUntil = record.validUntil ?? 0;
  if (!Number.isSafeInteger(validUntil) || validUntil < 0) return undefined;
  return {
    keyId: record.keyId,
    plan: record.plan,
    perMinute: limits.perMinute,
    perDay: limits.perDay,
    scope,
    validUntil,
    usageIdentifierKey: planUsageKeyValue(stage, record.plan),
  };
}

/**
 * A key's expiry at `nowSec`: `valid` before its validUntil (or without one); `expired` from then until
 * EXPIRED_NOTICE_SECONDS later, when the gateway lets it through to be told so (401 key_expired, before anything is
 * counted or read); `gone` after that, refused by the authorizer like an unknown key.
 */
export function expiryAt(validUntil: number | undefined, nowSec: number): 'valid' | 'expired' | 'gone' {
  if (!validUntil || nowSec < validUntil) return 'valid';
  return nowSec < validUntil + EXPIRED_NOTICE_SECONDS ? 'expired' : 'gone';
}

/** A key's standing at the gateway, as functions that refused it recorded it (storage/standing.ts). */
export interface Standing {
  /** The end of its ban (unix seconds). */
  readonly bannedUntil?: number;
  /** Who banned it until then: `admin` when an admin's ban (`keys ban`) wrote that end; else the limiter. */
  readonly bannedBy?: BanCause;
  /** The start (unix seconds) of the UTC day whose quota it has spent. */
  readonly spentDay?: number;
  /** When the authorizer first denied it its spent day (unix seconds): once per day (refusal.ts spentRepeat). */
  readonly spentDeniedAt?: number;
}

/** What a function tells the gateway about a key it refused, or the admin tool about a key an admin banned. */
export type StandingNote = { readonly bannedUntil: number; readonly by?: BanCause } | { readonly spentDay: number };

/** The port to a key's record and standing (storage/standing.ts implements it). */
export interface StandingStore {
  /** The key record under a secret's hash and its standing, in one read; a standing it could not read is unknown. */
  read(hash: string): Promise<{ record?: KeyRecord; standing?: Standing }>;
  /**
   * Records a refusal's standing for the gateway (never shortens a ban). For a ban, answers who banned the key until
   * that end as the standing now records it; undefined when it records a later end or cannot say.
   */
  note(hash: string, note: StandingNote): Promise<BanCause | undefined>;
  /** Notes when the authorizer told the key its day is spent (`firstOfDay`: only if not yet noted that day). */
  noteSpentTold(hash: string, atSec: number, firstOfDay: boolean): Promise<void>;
}

/**
 * What an admin write changes beside the key record, in the record's own transaction (key-store.ts): the key's
 * standing at the gateway (standing.ts: what the authorizer denies on) and its day counters (limit-store.ts: what the
 * functions' limiter refuses on). So a command is one transaction: it lands whole or not at all, and the same command
 * again finishes whatever a failure left. Each item is written with a condition on the value just read of it: a
 * function's write in between (a new ban, a give-back) cancels the transaction, and the admin tool reads again and
 * retries (lib/admin/context.ts onLatest), never undoing it.
 */
import { BatchGetCommand, GetCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { limiterShards, type PlanLimits } from '../../contract/plans.ts';
import type { Standing } from '../domain/keys.ts';
import type { ShardState } from '../domain/rate-limit.ts';
import { windowsAt, type Windows } from '../../contract/windows.ts';
import { guarded, type Storage } from './client.ts';
import { MAX_SHARDS } from './limit-store.ts';
import { KEEP_SECONDS, hourKey, rejectionKey, shardKey } from './limiter-items.ts';
import { standingKey, standingOf, type StandingItem } from './standing.ts';

export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** What a write changes of a key's standing and counters; each part absent: left as it is. */
export interface StandingChange {
  /** An admin's ban until then (unix seconds): at the gateway, and on the counters of these limits' layout. */
  readonly ban?: { readonly until: number; readonly limits: PlanLimits };
  /** Bans ending by then (unix seconds) are lifted, at the gateway and on the counters, with the 429s towards a new one. */
  readonly liftBansThrough?: number;
  /** Today's quota starts again: its counts back to 0, and the gateway forgets the spent day. */
  readonly liftDay?: boolean;
  /** The gateway forgets today's spent day when today's count is under this many (it was decided on other limits). */
  readonly spentUnder?: number;
  /** Today's bans back to this many (a plan change undone caused the others): its next ban is not escalated. */
  readonly dayBans?: number;
  /** Today's counts (and a running ban) move to the shard layout of these limits. */
  readonly layout?: PlanLimits;
}

type Counter = ShardState & { readonly bans?: number };

/** The key's standing as the authorizer reads it (consistently). */
export async function readStanding(storage: Storage, hash: string): Promise<Standing> {
  return standingOf(await readStandingItem(storage, hash));
}

async function readStandingItem({ doc, tables }: Storage, hash: string): Promise<StandingItem | undefined> {
  const out = await guarded(() =>
    doc.send(new GetCommand({ TableName: tables.state, Key: standingKey(hash), ConsistentRead: true })),
  );
  return out.Item as StandingItem | undefined;
}

/** Every shard's counter item of `days`, read consistently: by day, then shard (absent items are `{}`). */
async function readCounters(storage: Storage, subject: string, days: readonly number[]): Promise<Counter[][]> {
  const table = storage.tables.state;
  const found = new Map<string, Counter>();
  let keys: Array<Record<string, unknown>> = days.flatMap((day) =>
    Array.from({ length: MAX_SHARDS }, (_, s) => shardKey(subject, day, s)),
  );
  for (let attempt = 0; keys.length && attempt < 5; attempt++) {
    const out = await guarded((options) =>
      storage.doc.send(
        new BatchGetCommand({ RequestItems: { [table]: { Keys: keys, ConsistentRead: true } } }),
        options,
      ),
    );
    for (const item of out.Responses?.[table] ?? []) found.set(String(item.pk), item as Counter);
    keys = (out.UnprocessedKeys?.[table]?.Keys as Array<Record<string, unknown>> | undefined) ?? [];
  }
  if (keys.length) throw new Error('counters unreadable (throttled)');
  return days.map((day) => Array.from({ length: MAX_SHARDS }, (_, s) => found.get(shardKey(subject, day, s).pk) ?? {}));
}

/** Each shard's part of `total` in a layout of `n` shards, split as shardLimits splits a budget. */
const shares = (total: number, n: number) =>
  Array.from({ length: MAX_SHARDS }, (_, i) => (i < n ? Math.floor(total / n) + (i < total % n ? 1 : 0) : 0));

/** One item's update, built part by part: its expressions and the condition on what was read of it. */
class ItemUpdate {
  private readonly sets = new Map<string, string>();
  private readonly adds: string[] = [];
  private readonly removes: string[] = [];
  private readonly conditions: string[] = [];
  private readonly names: Record<string, string> = {};
  private readonly values: Record<string, unknown> = {};
  private readonly table: string;
  private readonly key: Record<string, unknown>;
  constructor(table: string, key: Record<string, unknown>) {
    this.table = table;
    this.key = key;
  }
  private value(v: unknown): string {
    const name = `:v${Object.keys(this.values).length}`;
    this.values[name] = v;
    return name;
  }
  private name(attr: string): string {
    const name = `#${attr}`;
    this.names[name] = attr;
    return name;
  }
  set(attr: string, v: unknown): this {
    this.sets.set(attr, `${this.name(attr)} = ${this.value(v)}`);
    return this;
  }
  /** Sets it unless the item has it (an item this write may create gets it); once per attribute. */
  setIfAbsent(attr: string, v: unknown): this {
    if (this.sets.has(attr)) return this;
    const n = this.name(attr);
    this.sets.set(attr, `${n} = if_not_exists(${n}, ${this.value(v)})`);
    return this;
  }
  add(attr: string, v: number): this {
    this.adds.push(`${this.name(attr)} ${this.value(v)}`);
    return this;
  }
  remove(attr: string): this {
    this.removes.push(this.name(attr));
    return this;
  }
  /** The attribute is still what was read (absent when `v` is undefined). */
  holds(attr: string, v: unknown): this {
    const n = this.name(attr);
    this.conditions.push(v === undefined ? `attribute_not_exists(${n})` : `${n} = ${this.value(v)}`);
    return this;
  }
  atLeast(attr: string, v: number): this {
    this.conditions.push(`${this.name(attr)} >= ${this.value(v)}`);
    return this;
  }
  get empty(): boolean {
    return !this.sets.size && !this.adds.length && !this.removes.length;
  }
  item(): TransactItem {
    const expression = [
      this.sets.size ? `SET ${[...this.sets.values()].join(', ')}` : '',
      this.adds.length ? `ADD ${this.adds.join(', ')}` : '',
      this.removes.length ? `REMOVE ${this.removes.join(', ')}` : '',
    ]
      .filter(Boolean)
      .join(' ');
    return {
      Update: {
        TableName: this.table,
        Key: this.key,
        UpdateExpression: expression,
        ...(this.conditions.length ? { ConditionExpression: this.conditions.join(' AND ') } : {}),
        ExpressionAttributeNames: this.names,
        ...(Object.keys(this.values).length ? { ExpressionAttributeValues: this.values } : {}),
      },
    };
  }
}

/**
 * The items of a change for `subject` (the key id: its counters) and `hash` (its secret's: its standing), from what
 * they hold now; [] when nothing needs writing.
 */
export async function standingWrites(
  storage: Storage,
  subject: string,
  hash: string,
  change: StandingChange,
  nowMs: number,
): Promise<TransactItem[]> {
  const w = windowsAt(nowMs);
  const through = change.liftBansThrough;
  const atGateway = change.ban || through !== undefined || change.liftDay || change.spentUnder !== undefined;
  const onCounters = atGateway || change.layout !== undefined || change.dayBans !== undefined;
  const tomorrow = w.dayStart + 86_400;
  const days =
    through !== undefined || (change.ban && change.ban.until > tomorrow) ? [w.dayStart, tomorrow] : [w.dayStart];
  const [item, counters] = await Promise.all([
    atGateway ? readStandingItem(storage, hash) : undefined,
    onCounters ? readCounters(storage, subject, days) : [],
  ]);
  const today = counters[0] ?? [];
  const total = today.reduce((sum, c) => sum + (c.d ?? 0), 0);
  return [
    ...(atGateway ? gatewayWrite(storage, hash, item, change, total, w) : []),
    ...counterWrites(storage, subject, days, counters, change, w),
  ];
}

/** The standing item's update: the admin's ban noted, a lifted ban or spent day forgotten. */
function gatewayWrite(
  storage: Storage,
  hash: string,
  item: StandingItem | undefined,
  change: StandingChange,
  total: number,
  w: Windows,
): TransactItem[] {
  const u = new ItemUpdate(storage.tables.state, standingKey(hash));
  const until = change.ban?.until;
  let expires = 0;
  // Marked as the admin's, so the key is told who banned it; also when a function recorded that end first.
  if (until && ((item?.banUntil ?? 0) < until || (item?.banUntil === until && item.adminBanUntil !== until))) {
    u.holds('banUntil', item?.banUntil).holds('adminBanUntil', item?.adminBanUntil);
    u.set('banUntil', until).set('adminBanUntil', until);
    expires = until;
  } else if (change.liftBansThrough !== undefined && item?.banUntil && item.banUntil <= change.liftBansThrough)
    u.holds('banUntil', item.banUntil).remove('banUntil').remove('adminBanUntil');
  const spentLifted =
    change.liftDay || (change.spentUnder !== undefined && total < change.spentUnder) ? item?.spentDay : undefined;
  // The authorizer's note of the day's first spent Deny goes with it: a key that spends the day again is told
  // afresh before it is banned for coming back (domain/keys.ts spentRepeat).
  if (spentLifted === w.dayStart) {
    u.holds('spentDay', spentLifted).remove('spentDay');
    if (item?.spentDeniedAt !== undefined) u.remove('spentDeniedAt');
  } else if (item?.spentDay !== undefined) expires = Math.max(expires, item.spentDay + 86_400);
  // A ban noted on an item kept for a spent day keeps it as long as either lasts.
  if (expires) u.set('expiresAt', expires + KEEP_SECONDS);
  return u.empty ? [] : [u.item()];
}

/** The counter items' updates: bans lifted, the admin's ban, the day lifted or carried, the day's bans set back. */
function counterWrites(
  storage: Storage,
  subject: string,
  days: readonly number[],
  counters: Counter[][],
  change: StandingChange,
  w: Windows,
): TransactItem[] {
  const table = storage.tables.state;
  const through = change.liftBansThrough;
  const lifted = (b: number | undefined) => (b !== undefined && through !== undefined && b <= through ? undefined : b);
  const out: TransactItem[] = [];
  const today = counters[0] ?? [];
  // The counts each shard holds after the change: the day lifted, or spread over the new layout.
  const n = change.layout ? limiterShards(change.layout) : undefined;
  const total = today.reduce((sum, c) => sum + (c.d ?? 0), 0);
  const want = n !== undefined ? shares(total, n) : undefined;
  // A ban on any of today's items (not lifted) is the key's: it moves to every item of the new layout.
  const running = Math.max(0, ...today.map((c) => lifted(c.banUntil) ?? 0));
  const carried = n !== undefined && running > w.nowSec ? running : 0;
  const moved: number[] = [];
  days.forEach((day, i) => {
    for (let s = 0; s < MAX_SHARDS; s++) {
      const c = counters[i]?.[s] ?? {};
      const u = new ItemUpdate(table, shardKey(subject, day, s));
      let ban = lifted(c.banUntil);
      if (carried && s < n!) ban = Math.max(ban ?? 0, carried);
      if (change.ban && change.ban.until > day && s < limiterShards(change.ban.limits))
        ban = Math.max(ban ?? 0, change.ban.until);
      if (ban !== c.banUntil) {
        u.holds('banUntil', c.banUntil);
        if (ban === undefined) u.remove('banUntil');
        else u.set('banUntil', ban).setIfAbsent('expiresAt', day + KEEP_SECONDS);
      }
      if (day === w.dayStart) {
        const d = c.d ?? 0;
        if (change.liftDay && d > 0) u.set('d', 0);
        else if (want && want[s] !== d) {
          const delta = want[s]! - d;
          // Taken only from an item that still holds it (a give-back may have lowered it meanwhile).
          if (delta < 0) u.atLeast('d', -delta);
          else u.setIfAbsent('expiresAt', day + KEEP_SECONDS);
          u.add('d', delta);
          moved.push(s);
        }
        if (s === 0 && change.dayBans !== undefined && (c.bans ?? 0) > change.dayBans)
          u.holds('bans', c.bans).set('bans', change.dayBans);
      }
      if (!u.empty) out.push(u.item());
    }
  });
  // The 429s counted towards a new ban go with the ban, so the next refused request does not ban the key again.
  if (through !== undefined)
    for (let i = 0; i < 2; i++)
      out.push({ Delete: { TableName: table, Key: rejectionKey(subject, w.minuteStart - 60 * i) } });
  // The usage history gets the moved items' day counts at this minute, so the chart's sum stays the day's count.
  const hourStart = w.minuteStart - (w.minuteStart % 3600);
  for (const s of moved)
    out.push(
      new ItemUpdate(table, hourKey(subject, hourStart, s))
        .set(`m${(w.minuteStart - hourStart) / 60}`, want![s]!)
        .setIfAbsent('expiresAt', w.dayStart + KEEP_SECONDS)
        .item(),
    );
  return out;
}

/**
 * The limiter's counters (the LimitCounters port) in memory, with the semantics of lambdas/storage/limit-store.ts:
 * each write applied only if its condition holds, the domain's takeStep deciding the next one. For models and simulations that need no database; the real adapter
 * is checked on DynamoDB Local (test/integration/limits.test.ts) and measured in `npm run bench -- --only=scale`.
 */
import { limiterShards, type PlanLimits } from '../../contract/plans.ts';
import {
  takeStep,
  type Attempt,
  type CountingStep,
  type LimitCounters,
  type ShardState,
  type TakeRequest,
  type Windows,
} from '../../lambdas/domain/rate-limit.ts';

/** The limiter's counter items in memory: one per shard and UTC day, and the 429s per minute window. */
export class MemoryCounters implements LimitCounters {
  readonly items = new Map<string, { ms?: number; m?: number; d?: number; banUntil?: number }>();
  readonly rejections = new Map<string, number>();
  writes = 0;

  private item(subject: string, day: number, shard: number) {
    const k = `${subject}#${day}#${shard}`;
    let it = this.items.get(k);
    if (!it) this.items.set(k, (it = {}));
    return it;
  }

  async tryTake(req: TakeRequest, step: CountingStep): Promise<Attempt> {
    this.writes++;
    const it = this.item(req.subject, req.w.dayStart, req.shard);
    const n = step.want;
    // The conditions of limit-store.ts's two writes.
    const room = (it.banUntil ?? 0) <= req.w.nowSec && (it.d ?? 0) <= req.limits.perDay - n;
    const applies =
      step.kind === 'count'
        ? room && it.ms === step.minuteStart && (it.m ?? 0) <= req.limits.perMinute - n
        : room && (it.ms === undefined || it.ms < req.w.minuteStart);
    if (!applies) return { ok: false, state: { ...it } };
    if (step.kind === 'open') Object.assign(it, { ms: req.w.minuteStart, m: n });
    else it.m = (it.m ?? 0) + n - (req.giveBackWindow === step.minuteStart ? req.giveBack : 0);
    it.d = (it.d ?? 0) + n - req.giveBack;
    const take = { kind: 'granted' as const, granted: n, minuteStart: it.ms!, minuteCount: it.m!, dayCount: it.d };
    return { ok: true, take };
  }

  async addRejections(subject: string, minuteStart: number, n: number) {
    this.writes++;
    const k = `${subject}#${minuteStart}`;
    this.rejections.set(k, (this.rejections.get(k) ?? 0) + n);
    return this.rejections.get(k)!;
  }

  readonly bans = new Map<string, { windows: Set<number> }>();
  async countBan(subject: string, dayStart: number, minuteStart: number) {
    this.writes++;
    const k = `${subject}#${dayStart}`;
    const b = this.bans.get(k) ?? { windows: new Set<number>() };
    this.bans.set(k, b.windows.add(minuteStart) && b);
    return b.windows.size;
  }

  async ban(subject: string, limits: PlanLimits, banUntil: number, days: readonly number[]) {
    for (const day of days)
      for (let s = 0; s < limiterShards(limits); s++) {
        const it = this.item(subject, day, s);
        it.banUntil = Math.max(it.banUntil ?? 0, banUntil);
      }
  }

  async usage(): Promise<never> {
    throw new Error('not modelled');
  }

  /** Whether a request now would be admitted, without counting: what the app would have answered. */
  wouldAdmit(subject: string, limits: PlanLimits, w: Windows): boolean {
    const it = this.item(subject, w.dayStart, 0);
    return takeStep(it as ShardState, limits, w, 1).kind !== 'full' && (it.banUntil ?? 0) <= w.nowSec;
  }
}

/**
 * The limiter's counters (the LimitCounters port) in memory, with the semantics of lambdas/storage/limit-store.ts:
 * the domain's own takeStep decides each write. For models and simulations that need no database; the real adapter
 * is checked on DynamoDB Local (test/integration/limits.test.ts) and measured in `npm run bench -- --only=scale`.
 */
import { limiterShards, type PlanLimits } from '../../contract/plans.ts';
import { takeStep, type LimitCounters, type ShardState, type Windows } from '../../lambdas/domain/rate-limit.ts';

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

  async take(req: Parameters<LimitCounters['take']>[0]) {
    this.writes++;
    const it = this.item(req.subject, req.w.dayStart, req.shard);
    const step = takeStep(it as ShardState, req.limits, req.w, req.want);
    if (step.kind === 'banned' || step.kind === 'full') return step;
    if (step.kind === 'open') Object.assign(it, { ms: req.w.minuteStart, m: 0 });
    it.m = (it.m ?? 0) + step.want - (step.kind === 'count' && req.giveBackWindow === it.ms ? req.giveBack : 0);
    it.d = (it.d ?? 0) + step.want - req.giveBack;
    return { kind: 'granted' as const, granted: step.want, minuteStart: it.ms!, minuteCount: it.m, dayCount: it.d };
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

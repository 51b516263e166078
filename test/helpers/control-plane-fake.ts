/**
 * A fake of API Gateway's control plane for the admin tool's one command that writes to it (no local engine exists
 * for it; moto is the second opinion: admin-moto.test.ts): an inventory of API keys,
 * usage plans and their keys, with the answers AWS documents (NotFoundException for what is not there,
 * ConflictException for a key already on a plan of the stage, BadRequestException for deleting a plan still on a
 * stage, LimitExceededException past the account's usage plans), the documented rates enforced on a simulated clock
 * (TooManyRequestsException: UpdateUsagePlan once per 20 s, CreateApiKey and DeleteApiKey 5 per second, 10 per
 * second in all), and a fault armed at any call: refused (nothing applied) or lost (applied, the answer never came).
 */
import { CONTROL_PLANE_INTERVAL_MS, type PacingClock } from '../../lib/admin/pacing.ts';

interface FakeKey {
  id: string;
  name: string;
  value: string;
}
interface FakePlan {
  id: string;
  name: string;
  apiStages: Array<{ apiId: string; stage: string }>;
  throttle?: { rateLimit?: number; burstLimit?: number };
  quota?: { limit?: number; period?: string };
  keys: Set<string>;
}

/** refused: nothing applied (an error); lost: applied, the answer never came; throttled: TooManyRequests once. */
export type FaultMode = 'refused' | 'lost' | 'throttled';

/** AWS's default usage plans per account and Region ("Amazon API Gateway quotas"). */
export const USAGE_PLANS_PER_ACCOUNT = 300;
/** API keys per account and Region (not raisable), and usage plans one API key can be on. */
export const API_KEYS_PER_ACCOUNT = 10_000;
export const USAGE_PLANS_PER_API_KEY = 10;

const awsError = (name: string, status: number, extra: Record<string, unknown> = {}) =>
  Object.assign(new Error(name), { name, $metadata: { httpStatusCode: status }, ...extra });

export class FakeControlPlane implements PacingClock {
  t: number;
  readonly keys = new Map<string, FakeKey>();
  readonly plans = new Map<string, FakePlan>();
  /** Every call, in order: its operation and whether it was throttled or faulted. */
  readonly calls: Array<{ op: string; at: number; outcome: 'ok' | FaultMode | 'error' }> = [];
  private seq = 0;
  private lastAt = new Map<string, number>();
  private bucket = { tokens: 40, at: 0 };
  private fault?: { at: number; mode: FaultMode };

  constructor(startMs: number) {
    this.t = startMs;
    this.bucket.at = startMs;
  }

  now = () => this.t;
  sleep = async (ms: number) => {
    this.t += ms;
  };

  /** The `n`th call from now (1 = the next) fails in that mode. */
  failAt(n: number, mode: FaultMode) {
    this.fault = { at: this.calls.length + n, mode };
  }

  /** Another client (a deploy, another admin) spends the operation's allowance now. */
  spend(op: string) {
    this.lastAt.set(op, this.t);
  }

  /** A usage plan as a stack (or an earlier tool) made it, on these stages (default: the stage the tests use). */
  seedPlan(name: string, apiStages = [{ apiId: 'api123', stage: 'v1' }]): string {
    const id = this.newId('plan');
    this.plans.set(id, { id, name, apiStages, keys: new Set() });
    return id;
  }

  /** An API key as a stack (or an earlier tool) made it, on these usage plans. */
  seedKey(name: string, value: string, plans: readonly string[] = []): string {
    const id = this.newId('key');
    this.keys.set(id, { id, name, value });
    for (const p of plans) this.plans.get(p)!.keys.add(id);
    return id;
  }

  private newId(kind: string) {
    return `${kind}${++this.seq}`;
  }

  async send(command: object): Promise<unknown> {
    const op = command.constructor.name.replace(/Command$/, '');
    const input = (command as { input: Record<string, any> }).input;
    const n = this.calls.length + 1;
    const interval = CONTROL_PLANE_INTERVAL_MS[op];
    this.bucket.tokens = Math.min(40, this.bucket.tokens + ((this.t - this.bucket.at) / 1000) * 10);
    this.bucket.at = this.t;
    const last = this.lastAt.get(op);
    if ((interval && last !== undefined && this.t - last < interval) || this.bucket.tokens < 1) {
      this.calls.push({ op, at: this.t, outcome: 'throttled' });
      throw awsError('TooManyRequestsException', 429, { retryAfterSeconds: '1' });
    }
    this.bucket.tokens -= 1;
    this.lastAt.set(op, this.t);
    const fault = this.fault?.at === n ? this.fault.mode : undefined;
    if (fault === 'throttled') {
      this.calls.push({ op, at: this.t, outcome: 'throttled' });
      throw awsError('TooManyRequestsException', 429, { retryAfterSeconds: '1' });
    }
    if (fault === 'refused') {
      this.calls.push({ op, at: this.t, outcome: fault });
      throw awsError('ServiceUnavailableException', 503);
    }
    let out: unknown;
    try {
      out = this.apply(op, input);
    } catch (err) {
      this.calls.push({ op, at: this.t, outcome: 'error' });
      throw err;
    }
    this.calls.push({ op, at: this.t, outcome: fault ?? 'ok' });
    if (fault === 'lost')
      throw Object.assign(new Error('socket hang up'), { name: 'TimeoutError', code: 'ECONNRESET' });
    return out;
  }

  private plan(id: string): FakePlan {
    const p = this.plans.get(id);
    if (!p) throw awsError('NotFoundException', 404);
    return p;
  }

  private apply(op: string, i: Record<string, any>): unknown {
    switch (op) {
      case 'CreateApiKey': {
        // AWS: a value of at least 20 characters (moto checks it too; the fake took any).
        if (typeof i.value === 'string' && i.value.length < 20) throw awsError('BadRequestException', 400);
        if ([...this.keys.values()].some((k) => k.value === i.value)) throw awsError('ConflictException', 409);
        if (this.keys.size >= API_KEYS_PER_ACCOUNT) throw awsError('LimitExceededException', 429);
        const id = this.newId('key');
        this.keys.set(id, { id, name: i.name, value: i.value });
        return { id };
      }
      case 'DeleteApiKey':
        if (!this.keys.delete(i.apiKey)) throw awsError('NotFoundException', 404);
        for (const p of this.plans.values()) p.keys.delete(i.apiKey);
        return {};
      case 'GetApiKeys':
        // As AWS (and moto): a key's value only with includeValues, so code that reads values without asking fails here.
        return {
          items: [...this.keys.values()]
            .filter((k) => k.name.startsWith(i.nameQuery ?? ''))
            .map((k) => ({ id: k.id, name: k.name, ...(i.includeValues ? { value: k.value } : {}) })),
        };
      case 'CreateUsagePlanKey': {
        const p = this.plan(i.usagePlanId);
        if (!this.keys.has(i.keyId)) throw awsError('NotFoundException', 404);
        const stages = new Set(p.apiStages.map((s) => `${s.apiId}:${s.stage}`));
        const onStage = [...this.plans.values()].some(
          (o) => o.keys.has(i.keyId) && o.apiStages.some((s) => stages.has(`${s.apiId}:${s.stage}`)),
        );
        if (onStage) throw awsError('ConflictException', 409);
        if (this.plansOf(i.keyId).length >= USAGE_PLANS_PER_API_KEY) throw awsError('LimitExceededException', 429);
        p.keys.add(i.keyId);
        return { id: i.keyId };
      }
      case 'GetUsagePlanKeys':
        return {
          items: [...this.plan(i.usagePlanId).keys].map((id) => ({
            id,
            type: 'API_KEY',
            value: this.keys.get(id)?.value,
            name: this.keys.get(id)?.name,
          })),
        };
      case 'GetUsagePlanKey':
        if (!this.plan(i.usagePlanId).keys.has(i.keyId)) throw awsError('NotFoundException', 404);
        return { id: i.keyId };
      case 'DeleteUsagePlanKey':
        if (!this.plan(i.usagePlanId).keys.delete(i.keyId)) throw awsError('NotFoundException', 404);
        return {};
      case 'CreateUsagePlan': {
        if (this.plans.size >= USAGE_PLANS_PER_ACCOUNT) throw awsError('LimitExceededException', 429);
        const id = this.newId('plan');
        this.plans.set(id, {
          id,
          name: i.name,
          apiStages: i.apiStages ?? [],
          throttle: i.throttle,
          quota: i.quota,
          keys: new Set(),
        });
        return { id };
      }
      case 'GetUsagePlan': {
        const p = this.plan(i.usagePlanId);
        return { id: p.id, name: p.name, apiStages: p.apiStages, throttle: p.throttle, quota: p.quota };
      }
      case 'GetUsagePlans':
        return {
          // As AWS's items: each plan's throttle and quota too.
          items: [...this.plans.values()].map((p) => ({
            id: p.id,
            name: p.name,
            apiStages: p.apiStages,
            throttle: p.throttle,
            quota: p.quota,
          })),
        };
      case 'UpdateUsagePlan': {
        const p = this.plan(i.usagePlanId);
        for (const patch of i.patchOperations as Array<{ op: string; path: string; value: string }>) {
          if (patch.op === 'remove' && patch.path === '/apiStages') {
            const before = p.apiStages.length;
            p.apiStages = p.apiStages.filter((s) => `${s.apiId}:${s.stage}` !== patch.value);
            if (p.apiStages.length === before) throw awsError('NotFoundException', 404);
          } else if (patch.op === 'replace' && patch.path.startsWith('/throttle/'))
            p.throttle = { ...p.throttle, [patch.path.split('/')[2]!]: Number(patch.value) };
          else if (patch.op === 'replace' && patch.path === '/quota/limit')
            p.quota = { ...p.quota, limit: Number(patch.value) };
          else throw awsError('BadRequestException', 400);
        }
        return {};
      }
      case 'DeleteUsagePlan': {
        const p = this.plan(i.usagePlanId);
        if (p.apiStages.length) throw awsError('BadRequestException', 400);
        this.plans.delete(p.id);
        return {};
      }
      default:
        throw new Error(`the fake does not know ${op}`);
    }
  }

  /** Which usage plans an API key is on. */
  plansOf(apiKeyId: string): string[] {
    return [...this.plans.values()].filter((p) => p.keys.has(apiKeyId)).map((p) => p.id);
  }
}

/**
 * A stage carried through the upgrade from release 3357b0c, as API Gateway and CloudFormation would take it:
 * - API Gateway: what API keys exist and sit on a usage plan of the stage (the control-plane fake, holding what the
 *   stack's template made and what 3357b0c's admin tool made beside it), and the authorizer's cache: each token's
 *   last answer, from the version that gave it, replayed for the TTL. An Allow naming a usage key on no usage plan of
 *   the stage is a 403; an answer without a record a 401.
 * - CloudFormation: an update makes the new template's usage plans, API keys and attachments (a value an API key of
 *   the account already has is a ConflictException, failing the update), then shifts the authorizer's alias as a
 *   canary when its code changed, then cleans up what the new template dropped, letting go of what the old one
 *   retains; a rollback shifts the alias back at once and deletes what the update made, unless retained. An update
 *   with an unchanged template changes nothing, its status included.
 * - Callers sending a request with every key every TICK_MS of simulated time (the fake's clock, the admin's too),
 *   each answered by the authorizer as the gateway routes it and recorded.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import * as current from '../../lambdas/domain/keys.ts';
import { standingDecision } from '../../lambdas/domain/refusal.ts';
import type { KeyRecord, Standing } from '../../lambdas/domain/keys.ts';
import type { Storage } from '../../lambdas/storage/client.ts';
import { readKeyAndStanding } from '../../lambdas/storage/standing.ts';
import type { DeployedStack } from '../../lib/admin/release-api-keys.ts';
import { STAGES } from '../../lib/config/stages.ts';
import type { CfnResource, CfnTemplate } from '../../lib/preflight/template.ts';
import type { FakeControlPlane } from './control-plane-fake.ts';
import { API, STAGE } from './control-plane-world.ts';

export const STACK_NAME = STAGES[STAGE].stackName;
/** The stage's authorizer cache TTL (lib/config/stages.ts). */
export const CACHE_TTL_MS = STAGES[STAGE].authorizerCacheTtl.toMilliseconds();
/** CANARY_10PERCENT_10MINUTES, both stages' CodeDeploy config (lib/config/stages.ts): 1 uncached request in 10. */
export const CANARY = { every: 10, ms: 10 * 60_000 } as const;
/** How often every caller sends a request. */
export const TICK_MS = 5_000;
/** How long CloudFormation takes over each step around the shift (creating, cleaning up, rolling back). */
export const STEP_MS = 10_000;

/** What the authorizer answered a token: the gateway's 401, a Deny (429 by the gateway response), or an Allow. */
export type Answer =
  { readonly kind: 'unauthorized' } | { readonly kind: 'deny' } | { readonly kind: 'allow'; readonly usageKey: string };

/** A version of the authorizer: what its handler decides from the record and standing it read. */
export interface Authorizer {
  readonly code: string;
  answer(record: KeyRecord | undefined, standing: Standing | undefined, nowSec: number): Answer;
}

const UNAUTHORIZED: Answer = { kind: 'unauthorized' };
const DENY: Answer = { kind: 'deny' };

/** This release's authorizer: a Deny for a ban or a spent day, else its plan's API key. */
export const currentAuthorizer: Authorizer = {
  code: 'this release',
  answer(record, standing, nowSec) {
    const auth = current.usableKey(record, STAGE);
    if (!auth) return UNAUTHORIZED;
    return standingDecision(standing, nowSec) === 'allow' ? { kind: 'allow', usageKey: auth.usageIdentifierKey } : DENY;
  },
};

/** What 3357b0c's authorizer calls to name a usage key (its lambdas/domain/keys.ts), and its own-key values. */
export interface ReleasedNaming {
  usableKey(record: unknown, stage: string): { readonly usageIdentifierKey: string } | undefined;
  gateDecision(standing: Standing | undefined, nowSec: number): string;
  gateUsageKey(auth: unknown, decision: string, stage: string): string;
  usageIdentifierKey(keyId: string): string;
}

/** 3357b0c's authorizer, from its code: a Deny for a ban, else the usage key its gate names. */
export function releasedAuthorizer(naming: ReleasedNaming): Authorizer {
  return {
    code: '3357b0c',
    answer(record, standing, nowSec) {
      const auth = naming.usableKey(record, STAGE);
      if (!auth) return UNAUTHORIZED;
      const decision = naming.gateDecision(standing, nowSec);
      return decision === 'deny' ? DENY : { kind: 'allow', usageKey: naming.gateUsageKey(auth, decision, STAGE) };
    },
  };
}

/**
 * 3357b0c's `contract/` and `lambdas/domain/`, as `git archive` wrote them (test/fixtures/releases/3357b0c: a clone
 * without that commit, as CI's shallow one, has them too), unpacked to a directory `close` removes.
 */
export async function loadReleasedNaming(): Promise<{ naming: ReleasedNaming; close: () => void }> {
  const dir = mkdtempSync(join(tmpdir(), 'release-3357b0c-'));
  execFileSync('tar', ['-xzf', 'test/fixtures/releases/3357b0c/authorizer-code.tar.gz', '-C', dir]);
  const naming = (await import(join(dir, 'lambdas/domain/keys.ts'))) as ReleasedNaming;
  return { naming, close: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A release as deployed: its template for the stage and its authorizer's code. */
export interface Release {
  readonly name: string;
  readonly template: CfnTemplate;
  readonly authorizer: Authorizer;
}

/** A released template of the stage, as its fixture holds it. */
export const releasedTemplate = (release: string): CfnTemplate =>
  JSON.parse(readFileSync(`test/fixtures/releases/${release}/${STACK_NAME}.template.json`, 'utf8')) as CfnTemplate;

const PLAN = 'AWS::ApiGateway::UsagePlan';
const KEY = 'AWS::ApiGateway::ApiKey';
const ATTACHMENT = 'AWS::ApiGateway::UsagePlanKey';
/** In the order CloudFormation can make them (an attachment refers to both others); deleted the other way. */
const GATEWAY_TYPES = [PLAN, KEY, ATTACHMENT];

const gatewayIds = (t: CfnTemplate) =>
  Object.keys(t.Resources).filter((id) => GATEWAY_TYPES.includes(t.Resources[id]!.Type));
const ref = (v: unknown) => (v as { Ref: string }).Ref;

/** The stage's stack: its template, status, the gateway resources it holds, and its authorizer alias. */
export class StackModel {
  status = 'CREATE_COMPLETE';
  release: Release;
  template: CfnTemplate;
  /** Physical ids of the usage plans, API keys and attachments the stack holds, by logical id, and their types. */
  readonly physical = new Map<string, string>();
  private readonly types = new Map<string, string>();
  /** The alias's version, and while a shift runs the new one, which takes 1 in CANARY.every uncached requests. */
  alias: { readonly live: Authorizer; readonly canary?: Authorizer };
  /** When a resource the stack lists last changed (ms): what it made, and its alias's last shift. */
  changedAt: number;
  /** What CloudFormation stopped managing and left in place (DeletionPolicy Retain), by physical id. */
  readonly letGo = { apiKeys: [] as string[], usagePlans: [] as string[] };

  readonly fake: FakeControlPlane;

  constructor(fake: FakeControlPlane, release: Release) {
    this.fake = fake;
    this.release = release;
    this.template = release.template;
    this.alias = { live: release.authorizer };
    this.changedAt = fake.t;
    const made = this.create(release.template, gatewayIds(release.template));
    if (made.failure) throw new Error(`the stack could not be created: ${made.failure}`);
  }

  /** CodeDeploy moves the alias (its LastUpdatedTimestamp too). */
  shift(alias: StackModel['alias']): void {
    this.alias = alias;
    this.changedAt = this.fake.t;
  }

  /** Makes `ids` of `t` at the gateway, stopping at the first failure: what it made, and the failure. */
  create(t: CfnTemplate, ids: readonly string[]): { created: string[]; failure?: string } {
    const created: string[] = [];
    for (const type of GATEWAY_TYPES)
      for (const id of ids.filter((i) => t.Resources[i]!.Type === type)) {
        const p = t.Resources[id]!.Properties as Record<string, any>;
        if (type === PLAN) this.physical.set(id, this.fake.seedPlan(p.UsagePlanName ?? id, [{ ...API }]));
        else if (type === KEY) {
          // API key values are unique in an account and Region: CreateApiKey answers 409 ConflictException.
          if ([...this.fake.keys.values()].some((k) => k.value === p.Value))
            return { created, failure: `${id}: API Key already exists (ConflictException)` };
          this.physical.set(id, this.fake.seedKey(p.Name ?? id, p.Value));
        } else {
          const [key, plan] = [this.physical.get(ref(p.KeyId))!, this.physical.get(ref(p.UsagePlanId))!];
          this.fake.plans.get(plan)!.keys.add(key);
          this.physical.set(id, `${key}:${plan}`);
        }
        this.types.set(id, type);
        this.changedAt = this.fake.t;
        created.push(id);
      }
    return { created };
  }

  /** Deletes `ids` (of `t`) at the gateway, or only lets go of those `t` retains. */
  remove(t: CfnTemplate, ids: readonly string[]): void {
    for (const type of [...GATEWAY_TYPES].reverse())
      for (const id of ids.filter((i) => t.Resources[i]!.Type === type)) {
        const physical = this.physical.get(id);
        this.physical.delete(id);
        if (!physical) continue;
        if (t.Resources[id]!.DeletionPolicy === 'Retain') {
          if (type === KEY) this.letGo.apiKeys.push(physical);
          if (type === PLAN) this.letGo.usagePlans.push(physical);
        } else if (type === ATTACHMENT) {
          const [key, plan] = physical.split(':');
          this.fake.plans.get(plan!)?.keys.delete(key!);
        } else if (type === KEY) {
          this.fake.keys.delete(physical);
          for (const p of this.fake.plans.values()) p.keys.delete(physical);
        } else this.fake.plans.delete(physical);
      }
  }

  /** The stack as CloudFormation describes it (what `keys remove-release-api-keys` reads). */
  view(): DeployedStack {
    const resources = [
      { logicalId: 'RestApi', type: 'AWS::ApiGateway::RestApi', physicalId: API.apiId },
      { logicalId: 'ApiStage', type: 'AWS::ApiGateway::Stage', physicalId: API.stage },
      ...[...this.physical].map(([logicalId, physicalId]) => ({
        logicalId,
        type: this.types.get(logicalId)!,
        physicalId,
      })),
    ];
    const { status, template, changedAt } = this;
    return structuredClone({ name: STACK_NAME, status, template, resources, changedAt });
  }
}

/** Whether an API key of that value sits on a usage plan of the stage: else API Gateway answers 403. */
export function onStage(fake: FakeControlPlane, value: string): boolean {
  const keys = [...fake.keys.values()].filter((k) => k.value === value).map((k) => k.id);
  return [...fake.plans.values()].some(
    (p) => keys.some((k) => p.keys.has(k)) && p.apiStages.some((s) => s.apiId === API.apiId && s.stage === API.stage),
  );
}

/** A customer sending requests with its key's secret: `active` unless revoked (which must get 401). */
export interface Caller {
  readonly label: string;
  readonly secret: string;
  readonly active: boolean;
}

export type Outcome = 'served' | 'denied' | '401' | '403';

/** The gateway's side: the authorizer's cache, every caller's requests, and what they got. */
export class StageTraffic {
  readonly callers: Caller[] = [];
  /** Each outcome's count, and how many answers each authorizer version gave (cache misses). */
  readonly counts: Record<Outcome, number> = { served: 0, denied: 0, '401': 0, '403': 0 };
  readonly answeredBy = new Map<string, number>();
  /** Requests that got what they should not: an active key's 401 or 403, a revoked key served. */
  readonly wrong: string[] = [];
  /** What the operator is doing, for the wrong requests' lines. */
  phase = 'start';
  private readonly cache = new Map<string, { answer: Answer; at: number; by: string }>();
  private uncached = 0;
  private lastTick: number;
  private readonly startedAt: number;

  private readonly fake: FakeControlPlane;
  private readonly stack: StackModel;
  private readonly storage: Storage;

  constructor(fake: FakeControlPlane, stack: StackModel, storage: Storage) {
    this.fake = fake;
    this.stack = stack;
    this.storage = storage;
    this.lastTick = fake.t;
    this.startedAt = fake.t;
  }

  /** Simulated time passes, every caller sending a request each tick, against the gateway as it is. */
  async advance(ms: number): Promise<void> {
    this.fake.t += ms;
    await this.catchUp();
  }

  /** The ticks between the last and the fake's clock (moved by a paced command's waits), sent now. */
  async catchUp(): Promise<void> {
    while (this.lastTick + TICK_MS <= this.fake.t) {
      this.lastTick += TICK_MS;
      const at = this.lastTick;
      await Promise.all(this.callers.map((c) => this.request(c, at)));
    }
  }

  /** The version the alias gives an uncached request (chosen before the read, so the mix does not race). */
  private route(): Authorizer {
    const { live, canary } = this.stack.alias;
    return canary && ++this.uncached % CANARY.every === 0 ? canary : live;
  }

  private async request(c: Caller, at: number): Promise<void> {
    const hash = current.hashKey(c.secret);
    let hit = this.cache.get(hash);
    if (!hit || at - hit.at >= CACHE_TTL_MS) {
      const version = this.route();
      const found = await readKeyAndStanding(this.storage, hash);
      const answer = version.answer(found.record, found.standing, Math.floor(at / 1000));
      this.answeredBy.set(version.code, (this.answeredBy.get(version.code) ?? 0) + 1);
      hit = { answer, at, by: version.code };
      // API Gateway caches an authorizer's policy, not its Unauthorized.
      if (answer.kind === 'unauthorized') this.cache.delete(hash);
      else this.cache.set(hash, hit);
    }
    const { answer } = hit;
    const outcome: Outcome =
      answer.kind === 'unauthorized'
        ? '401'
        : answer.kind === 'deny'
          ? 'denied'
          : onStage(this.fake, answer.usageKey)
            ? 'served'
            : '403';
    this.counts[outcome]++;
    if (c.active ? outcome === '401' || outcome === '403' : outcome !== '401')
      this.wrong.push(
        `${c.label} ${outcome} at +${(at - this.startedAt) / 1000}s (${this.phase}; answered by ${hit.by}` +
          `${answer.kind === 'allow' ? `, naming ${answer.usageKey}` : ''})`,
      );
  }
}

/** Where an update is rolled back: before the shift, half-way through the canary, or after the whole shift. */
export type RollbackAt = 'before the shift' | 'in the canary' | 'after the shift';

export interface UpdateOptions {
  readonly rollbackAt?: RollbackAt;
  /** The pre-traffic check, before any traffic shifts to a new authorizer version: false fails the update. */
  readonly beforeTraffic?: (to: Release) => Promise<boolean>;
  /** What the operator does half-way through the canary. */
  readonly inCanary?: () => Promise<void>;
}

export interface UpdateResult {
  readonly status: string;
  /** Why it rolled back without being asked to. */
  readonly failure?: string;
}

/** One `cdk deploy` of `to` over the stack, traffic flowing throughout. */
export async function update(
  stack: StackModel,
  traffic: StageTraffic,
  to: Release,
  o: UpdateOptions = {},
): Promise<UpdateResult> {
  const from = stack.release;
  // CloudFormation: "No updates are to be performed"; the stack keeps its status.
  if (isDeepStrictEqual(from.template, to.template) && from.authorizer === to.authorizer)
    return { status: stack.status };
  const say = (what: string) => (traffic.phase = `${from.name} → ${to.name}: ${what}`);
  const before = new Set(gatewayIds(from.template));
  const after = new Set(gatewayIds(to.template));
  for (const id of [...before].filter((i) => after.has(i)))
    if (!isDeepStrictEqual(pick(from.template.Resources[id]!), pick(to.template.Resources[id]!)))
      throw new Error(`${id} changes in a way this model does not replay`);
  stack.status = 'UPDATE_IN_PROGRESS';
  stack.template = to.template;
  say('creating');
  await traffic.advance(STEP_MS);
  const made = stack.create(
    to.template,
    [...after].filter((i) => !before.has(i)),
  );
  await traffic.advance(STEP_MS);
  const rollback = async (failure?: string): Promise<UpdateResult> => {
    // The alias first, at once; the cache still holds the new version's answers while what was made is deleted.
    stack.status = 'UPDATE_ROLLBACK_IN_PROGRESS';
    stack.template = from.template;
    if (stack.alias.canary || stack.alias.live !== from.authorizer) stack.shift({ live: from.authorizer });
    say('rolling back');
    await traffic.advance(STEP_MS);
    stack.status = 'UPDATE_ROLLBACK_COMPLETE_CLEANUP_IN_PROGRESS';
    // A rollback keeps what the new template retains too (DeletionPolicy Retain, unlike RetainExceptOnCreate).
    stack.remove(to.template, made.created);
    await traffic.advance(STEP_MS);
    stack.status = 'UPDATE_ROLLBACK_COMPLETE';
    say('rolled back');
    return { status: stack.status, ...(failure ? { failure } : {}) };
  };
  if (made.failure) return rollback(made.failure);
  if (o.rollbackAt === 'before the shift') return rollback();
  if (to.authorizer !== from.authorizer) {
    if (o.beforeTraffic && !(await o.beforeTraffic(to))) return rollback('the pre-traffic check failed');
    stack.shift({ live: from.authorizer, canary: to.authorizer });
    say('canary');
    await traffic.advance(CANARY.ms / 2);
    await o.inCanary?.();
    if (o.rollbackAt === 'in the canary') return rollback();
    await traffic.advance(CANARY.ms / 2);
    stack.shift({ live: to.authorizer });
    say('shifted');
  }
  await traffic.advance(STEP_MS);
  if (o.rollbackAt === 'after the shift') return rollback();
  stack.status = 'UPDATE_COMPLETE_CLEANUP_IN_PROGRESS';
  say('cleaning up');
  stack.remove(
    from.template,
    [...before].filter((i) => !after.has(i)),
  );
  stack.release = to;
  await traffic.advance(STEP_MS);
  stack.status = 'UPDATE_COMPLETE';
  say('complete');
  return { status: stack.status };
}

/** What of a gateway resource would make CloudFormation replace it or change what it holds. */
function pick(r: CfnResource): unknown {
  const p = (r.Properties ?? {}) as Record<string, unknown>;
  if (r.Type === KEY) return p.Value;
  if (r.Type === ATTACHMENT) return [p.KeyId, p.UsagePlanId];
  return (p.ApiStages as Array<{ ApiId: unknown; Stage: unknown }>).map((s) => [s.ApiId, s.Stage]);
}

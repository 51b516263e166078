/**
 * The throttles API Gateway applies before the authorizer, so that a throttled request never invokes it and never
 * counts on a usage plan (Developer Guide, "Throttle requests to your REST APIs"):
 * - the stage's: a token bucket per method (resource path and HTTP method; a resource's `ANY` MOCK method, which
 *   answers 405, is a method too) with the stage's default figures or the method's own setting, shared by every
 *   caller of the method;
 * - the account's (ACCOUNT_THROTTLE): one bucket over every method of every API of the account (locally, of this
 *   gateway).
 * A bucket starts full and refills continuously at its rate up to its burst. A request takes a token from both
 * buckets or, when either is empty, from neither, and is answered THROTTLED.
 */
import { ACCOUNT_THROTTLE } from '../../contract/plans.ts';
import type { MethodBase, StageThrottleDef, ThrottleDef } from './template-model.ts';

/** What `throttled` names the account's bucket by. */
export const ACCOUNT_BUCKET = 'account';

/** What a method's bucket (and its setting in StageThrottleDef.methods) is named by: `GET /pets/{petId}`. */
export const methodKey = (httpMethod: string, resourcePath: string): string =>
  `${httpMethod.toUpperCase()} ${resourcePath}`;

/** A method's figures: its own setting's, else the stage's default; undefined when the stage throttles it not. */
export function methodThrottle(
  stage: StageThrottleDef | undefined,
  method: Pick<MethodBase, 'httpMethod' | 'resourcePath'>,
): ThrottleDef | undefined {
  return stage?.methods.get(methodKey(method.httpMethod, method.resourcePath)) ?? stage?.default;
}

class Bucket {
  private tokens: number;
  private refilledAt: number;
  throttled = 0;
  private readonly figures: ThrottleDef;

  constructor(figures: ThrottleDef, ms: number) {
    this.figures = figures;
    this.tokens = figures.burstLimit;
    this.refilledAt = ms;
  }

  /** Whether a token is there at `ms`. */
  has(ms: number): boolean {
    // A clock moved backwards (tests move it) adds nothing.
    const elapsed = Math.max(0, ms - this.refilledAt) / 1000;
    this.tokens = Math.min(this.figures.burstLimit, this.tokens + elapsed * this.figures.rateLimit);
    this.refilledAt = ms;
    return this.tokens >= 1;
  }

  take(): void {
    this.tokens -= 1;
  }
}

export class StageThrottle {
  /** By methodKey; null: the stage does not throttle that method. */
  private readonly methods = new Map<string, Bucket | null>();
  private account?: Bucket;
  private readonly stage: StageThrottleDef | undefined;
  private readonly accountFigures: ThrottleDef;

  constructor(stage: StageThrottleDef | undefined, account: ThrottleDef = ACCOUNT_THROTTLE) {
    this.stage = stage;
    this.accountFigures = account;
  }

  /** Admits (and takes a token for) one request of `method` at time `ms`, or says it is throttled. */
  admit(method: Pick<MethodBase, 'httpMethod' | 'resourcePath'>, ms: number): 'ok' | 'THROTTLED' {
    const key = methodKey(method.httpMethod, method.resourcePath);
    let own = this.methods.get(key);
    if (own === undefined) {
      const figures = methodThrottle(this.stage, method);
      own = figures ? new Bucket(figures, ms) : null;
      this.methods.set(key, own);
    }
    const account = (this.account ??= new Bucket(this.accountFigures, ms));
    // The method's bucket is looked at first, so a request both would refuse is counted on the narrower one.
    const refusing = own && !own.has(ms) ? own : account.has(ms) ? undefined : account;
    if (refusing) {
      refusing.throttled += 1;
      return 'THROTTLED';
    }
    own?.take();
    account.take();
    return 'ok';
  }

  /** How many requests a bucket throttled: a method's (by methodKey) or the account's (ACCOUNT_BUCKET). */
  throttled(bucket: string): number {
    return (bucket === ACCOUNT_BUCKET ? this.account : this.methods.get(bucket))?.throttled ?? 0;
  }

  /** How many requests every bucket throttled, together. */
  total(): number {
    return [...this.methods.values(), this.account].reduce((n, b) => n + (b?.throttled ?? 0), 0);
  }
}

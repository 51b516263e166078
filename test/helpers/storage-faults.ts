/**
 * The admin tool's storage ports (key records with what their transactions change of the standing and counters, the
 * limiter's counts) on DynamoDB Local, with a fault armed at any call, as the fake control plane arms one at any API
 * Gateway call: `throttle` (DynamoDB's throttling error once
 * the SDK's retries are spent; nothing applied), `error` (an internal error; nothing applied), or `lost` (applied, the
 * answer never came). Every call is counted, so a test learns how many steps a command takes from the code itself.
 */
import type { AdminDeps } from '../../lib/admin/service.ts';

export type StorageFault = 'throttle' | 'error' | 'lost';

const thrown = (mode: StorageFault) =>
  Object.assign(new Error(`injected ${mode}`), {
    name:
      mode === 'throttle'
        ? 'ProvisionedThroughputExceededException'
        : mode === 'lost'
          ? 'TimeoutError'
          : 'InternalServerError',
    $metadata: { httpStatusCode: mode === 'throttle' ? 400 : 500 },
  });

export class StorageFaults {
  /** Every port call, in order. */
  readonly calls: string[] = [];
  private fault?: { at: number; mode: StorageFault };
  private named?: { name: string; mode: StorageFault };

  /** The `n`th call from now (1 = the next) fails in that mode. */
  failAt(n: number, mode: StorageFault) {
    this.fault = { at: this.calls.length + n, mode };
  }

  /** The next call of the port `name` (e.g. `store.update`) fails in that mode. */
  failNext(name: string, mode: StorageFault) {
    this.named = { name, mode };
  }

  private wrap<F extends (...args: any[]) => Promise<any>>(name: string, fn: F): F {
    return (async (...args: unknown[]) => {
      this.calls.push(name);
      let mode = this.fault?.at === this.calls.length ? this.fault.mode : undefined;
      if (this.named?.name === name) {
        mode = this.named.mode;
        this.named = undefined;
      }
      if (mode && mode !== 'lost') throw thrown(mode);
      const out = await fn(...args);
      if (mode === 'lost') throw thrown(mode);
      return out;
    }) as F;
  }

  /** `deps` with every storage port call counted and faultable. */
  around(deps: AdminDeps): AdminDeps {
    const store = Object.fromEntries(
      Object.entries(deps.store).map(([k, f]) => [
        k,
        this.wrap(`store.${k}`, (f as (...a: unknown[]) => Promise<unknown>).bind(deps.store)),
      ]),
    ) as unknown as AdminDeps['store'];
    const limits = { usage: this.wrap('limits.usage', deps.limits.usage.bind(deps.limits)) };
    return { ...deps, store, limits };
  }
}

/**
 * A storage call inside a request is cut off at the request's deadline (less the cleanup reserve), and a call that
 * ended before it leaves nothing behind: its deadline does not fire later.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { UnavailableError } from '../../lambdas/domain/errors.ts';
import { withDeadline } from '../../lambdas/storage/deadline.ts';
import { guarded, type SendOptions } from '../../lambdas/storage/client.ts';

describe('guarded', () => {
  it('aborts a call still running at the deadline: 503, not a Lambda timeout', async () => {
    let seen: SendOptions = {};
    const hang = (options: SendOptions) => {
      seen = options;
      return new Promise<never>((_r, reject) => {
        options.abortSignal!.onabort = () =>
          reject(Object.assign(new Error('Request aborted'), { name: 'AbortError' }));
      });
    };
    const err = await withDeadline(1_200, () => guarded(hang)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnavailableError);
    expect((err as UnavailableError).cause).toBe('Deadline');
    expect(seen.abortSignal?.aborted).toBe(true);
  });

  it('leaves no deadline behind once the call has answered', async () => {
    let seen: SendOptions = {};
    await withDeadline(1_200, () =>
      guarded(async (options) => {
        seen = options;
        return 'answered';
      }),
    );
    await sleep(400); // past the call's deadline (1,200 ms less the 1,000 ms reserve)
    expect(seen.abortSignal?.aborted).toBe(false);
  });

  it('outside a request, gives the call no deadline at all', async () => {
    expect(await guarded(async (options) => options)).toEqual({});
  });
});

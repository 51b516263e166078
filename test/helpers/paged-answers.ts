/**
 * API Gateway's paging on the control-plane fake (control-plane-fake.ts answers every list whole): GetApiKeys,
 * GetUsagePlans and GetUsagePlanKeys answer at most `limit` items (default 25, at most 500: more is a
 * BadRequestException), and at most `cap` here, so a test sees many pages with a few items, as AWS may also answer
 * fewer items than the limit; `position` says where the next page starts, absent on the last.
 */
import type { FakeControlPlane } from './control-plane-fake.ts';

const PAGED = new Set(['GetApiKeys', 'GetUsagePlans', 'GetUsagePlanKeys']);

/** Every list read's call, with the position it asked from (undefined: the first page). */
export interface PageRead {
  readonly op: string;
  readonly position?: string;
}

/** Makes the fake answer its lists in pages of at most `cap` items; answers the pages it served. */
export function pageAnswers(fake: FakeControlPlane, cap: number): PageRead[] {
  const whole = fake.send.bind(fake);
  const reads: PageRead[] = [];
  fake.send = async (command: object) => {
    const op = command.constructor.name.replace(/Command$/, '');
    if (!PAGED.has(op)) return whole(command);
    const input = (command as { input: { limit?: number; position?: string } }).input;
    if ((input.limit ?? 0) > 500)
      throw Object.assign(new Error('limit must be at most 500'), { name: 'BadRequestException' });
    const out = (await whole(command)) as { items: unknown[] };
    reads.push({ op, position: input.position });
    const start = input.position ? Number(input.position) : 0;
    const end = start + Math.min(input.limit ?? 25, cap);
    return { items: out.items.slice(start, end), ...(end < out.items.length ? { position: String(end) } : {}) };
  };
  return reads;
}

/**
 * Traffic for the limiter's simulations and its tests over HTTP: fixed schedules (an abusive client, plain load) and
 * clients that react to answers (a fleet that honours Retry-After). Times are ms since a run's start; nothing here
 * knows how the limiter works.
 */
export interface SimRequest {
  /** Arrival, ms since the run's start. */
  readonly atMs: number;
  /** Who sent it (a worker of a fleet, say): answers are reported back to it. */
  readonly client?: number;
}

export interface SimAnswer {
  readonly status: 200 | 429 | 503;
  readonly code?: string;
  readonly retryAfter?: number;
  readonly remaining: number;
  readonly reset: number;
}

/** Where requests come from: a fixed schedule, or clients that react to answers (a fleet honouring Retry-After). */
export interface Traffic {
  /** The next request at or after nothing in particular: undefined when the traffic is over. */
  next(): SimRequest | undefined;
  /** The answer to a request (clients that honour Retry-After schedule their next request from it). */
  answered?(req: SimRequest, answer: SimAnswer): void;
}

/** `count` requests evenly spaced over `[fromMs, fromMs + spanMs)`. */
export function even(count: number, spanMs: number, fromMs = 0): Traffic {
  let i = 0;
  return { next: () => (i < count ? { atMs: fromMs + Math.floor((i++ * spanMs) / count) } : undefined) };
}

/** Requests at `perSecond` for `seconds`, ignoring every answer (an abusive client, or plain load). */
export function steady(perSecond: number, seconds: number, fromMs = 0): Traffic {
  return even(Math.round(perSecond * seconds), seconds * 1000, fromMs);
}

/**
 * A fleet of `workers` clients on one key, each sending every `periodMs(i)` from its own phase, and after a 429
 * waiting its Retry-After (and `extraWaitMs(i)` more) before it sends again: every worker honours its own 429s.
 */
export function fleet(
  workers: number,
  seconds: number,
  periodMs: (i: number) => number,
  phaseMs: (i: number) => number,
  extraWaitMs: (i: number) => number = () => 0,
): Traffic {
  // A small binary heap of (time, worker), so a 1,000-worker fleet stays cheap.
  const heap: Array<[number, number]> = [];
  const push = (t: number, c: number) => {
    heap.push([t, c]);
    for (let i = heap.length - 1; i > 0;) {
      const p = (i - 1) >> 1;
      if (heap[p]![0] <= heap[i]![0]) break;
      [heap[p], heap[i]] = [heap[i]!, heap[p]!];
      i = p;
    }
  };
  const pop = () => {
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length) {
      heap[0] = last;
      for (let i = 0; ;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && heap[l]![0] < heap[m]![0]) m = l;
        if (r < heap.length && heap[r]![0] < heap[m]![0]) m = r;
        if (m === i) break;
        [heap[m], heap[i]] = [heap[i]!, heap[m]!];
        i = m;
      }
    }
    return top;
  };
  for (let i = 0; i < workers; i++) push(phaseMs(i), i);
  const end = seconds * 1000;
  return {
    next() {
      if (!heap.length || heap[0]![0] >= end) return undefined;
      const [atMs, client] = pop();
      return { atMs, client };
    },
    answered(req, a) {
      const i = req.client!;
      const wait = a.status === 429 ? Math.max(periodMs(i), (a.retryAfter ?? 1) * 1000 + extraWaitMs(i)) : periodMs(i);
      push(req.atMs + wait, i);
    },
  };
}

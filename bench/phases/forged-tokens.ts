/**
 * Phase 4b: DynamoDB requests per forged token, each a cache miss as every random token of a flood is, on the
 * handlers' own clients; with the old key form accepted (the default) and refused (OLD_KEY_FORM=refused). Then the
 * authorizer's capacity at each stage's reserved concurrency next to the stage throttle, with the local warm
 * duration of an uncached invocation beside the duration it is sized for, and the price of a keyed check (HMAC)
 * against the CRC it would replace.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { AUTHORIZER, ROUTES } from '../../contract/routes.ts';
import { generateKey } from '../../lambdas/domain/keys.ts';
import { AUTHORIZER_WARM_MS as AUTHORIZER_DURATION_MS, authorizerCapacity } from '../../lib/config/capacity.ts';
import { STAGES } from '../../lib/config/stages.ts';
import { invoke } from '../../lib/local/lambda.ts';
import type { Meter } from '../lib/meter.ts';
import { ROUTE_OPS, httpRequestOf } from '../lib/bench-ops.ts';
import { seededId } from '../lib/seed.ts';
import { printTable, round } from '../lib/util.ts';
import type { BenchContext } from './context.ts';

/**
 * What each forged token asks for: the route table's first request (the authorizer refuses a token before any
 * operation runs, so which one does not matter). Its path's resource, as the gateway names it in a method ARN.
 */
const FORGED_REQUEST = httpRequestOf(ROUTE_OPS[0]!, seededId(0));
const METHOD_ARN = `arn:aws:execute-api:r:a:x/v1/${FORGED_REQUEST.method}${FORGED_REQUEST.path.split('?')[0]}`;

/** A token of the checked key form whose check fails: a random key with its last character changed. */
function failsItsCheck(): string {
  const k = generateKey();
  return `${k.slice(0, -1)}${k.endsWith('A') ? 'B' : 'A'}`;
}
const oldShape = () => `ask_${randomBytes(32).toString('base64url')}`;

/** Forged tokens by shape; `reads` says whether the shape may cost a read while the old form is accepted. */
const TOKENS: readonly (readonly [string, () => string])[] = [
  ['checked form, check fails', failsItsCheck],
  ['old form exact shape (ask_ + 43), unknown', oldShape],
  ['other shape: 37 chars, no known prefix', () => `free_${randomBytes(16).toString('hex')}`],
  ['other shape: ask_ + 42', () => oldShape().slice(0, -1)],
  ['other shape: 128 random chars', () => randomBytes(96).toString('base64url')],
  // Anyone can compute a CRC: such a token passes the check and costs its read (a keyed check would not: below).
  ['checked form, valid CRC, unknown', generateKey],
];

export async function runForgedTokens({ P, endpoint, result, target, log }: BenchContext): Promise<void> {
  const { startLocalApi } = await import('../../lib/local/app.ts');
  const { attachMeter } = await import('../lib/meter.ts');
  const rows: Array<{ oldForm: string; form: string; tokens: number; statuses: number[]; requestsPerToken: number }> =
    [];
  for (const oldForm of ['accepted', 'refused'] as const) {
    const api = await startLocalApi({
      dynamoEndpoint: endpoint,
      tablePrefix: `bench-forged-${oldForm}`,
      authCacheTtlSeconds: 0,
      env: { CURSOR_SECRET: 'bench-cursor-secret-0123456789', OLD_KEY_FORM: oldForm },
    });
    const meter: Meter = attachMeter(
      [...api.functions.values()].flatMap((f) => [f.runtime.storage.ddb, f.runtime.storage.once.ddb]),
    );
    for (const [form, token] of TOKENS) {
      meter.reset();
      const statuses = new Set<number>();
      for (let i = 0; i < P.callsPerOp; i++) {
        const res = await fetch(`${api.url}${FORGED_REQUEST.path}`, {
          method: FORGED_REQUEST.method,
          headers: { Authorization: `Bearer ${token()}`, 'Content-Type': 'application/json' },
          ...(FORGED_REQUEST.body === undefined ? {} : { body: FORGED_REQUEST.body }),
        });
        statuses.add(res.status);
        await res.arrayBuffer();
      }
      rows.push({
        oldForm,
        form,
        tokens: P.callsPerOp,
        statuses: [...statuses],
        requestsPerToken: round(meter.calls.length / P.callsPerOp, 3),
      });
    }
    await api.close();
  }
  result.forgedTokens = rows;
  printTable(
    '4b. DynamoDB requests per forged token (authorizer uncached; OLD_KEY_FORM accepted, then refused)',
    ['old form', 'token', 'tokens', 'status', 'req/token'],
    rows.map((r) => [r.oldForm, r.form, r.tokens, String(r.statuses), r.requestsPerToken]),
  );
  // Every token that cannot be a key costs no read: all but the old key's exact shape (while accepted) and a token
  // that passes its CRC.
  const mayRead = (r: (typeof rows)[number]) =>
    r.form.startsWith('checked form, valid CRC') || (r.oldForm === 'accepted' && r.form.startsWith('old form'));
  const offending = rows.filter((r) => !mayRead(r) && (r.requestsPerToken !== 0 || r.statuses.join() !== '401'));
  target(
    'DynamoDB requests per token that cannot be a key = 0',
    `${rows.filter((r) => !mayRead(r)).length} shapes x form accepted/refused`,
    offending.length,
    '= 0 offending',
    offending.length === 0,
  );
  log('forged tokens: capacity and the keyed check');
  await authorizerCapacityTable({ P, endpoint, result, target, log } as BenchContext);
}

/**
 * The authorizer's capacity per stage: reserved concurrency / duration, next to what the stage throttle admits on
 * every authorized method; the local warm duration of an uncached invocation (a valid key: hash, BatchGetItem on
 * DynamoDB Local over loopback) beside the 25 ms it is sized for; and CRC-32 against HMAC-SHA-256 per token.
 */
async function authorizerCapacityTable({ P, endpoint, result }: BenchContext): Promise<void> {
  const { startLocalApi } = await import('../../lib/local/app.ts');
  const key = generateKey();
  const api = await startLocalApi({
    dynamoEndpoint: endpoint,
    tablePrefix: 'bench-capacity',
    authCacheTtlSeconds: 0,
    devKeys: [{ key, plan: 'pro' }],
    env: { CURSOR_SECRET: 'bench-cursor-secret-0123456789', LOG_LEVEL: 'ERROR' },
  });
  const authorizer = [...api.functions.values()].find((f) => f.def.name === AUTHORIZER.name)!;
  const event = {
    type: 'TOKEN',
    authorizationToken: `Bearer ${key}`,
    methodArn: METHOD_ARN,
  };
  for (let i = 0; i < 20; i++) await invoke(authorizer, event); // warm
  const ms: number[] = [];
  for (let i = 0; i < P.callsPerOp; i++) {
    const t0 = performance.now();
    const out = await invoke(authorizer, event);
    ms.push(performance.now() - t0);
    if (!out.ok) throw new Error(`the bench key was refused: ${String(out.error)}`);
  }
  await api.close();
  ms.sort((a, b) => a - b);
  const p50 = round(ms[Math.floor(ms.length / 2)]!, 2);
  const p99 = round(ms[Math.min(ms.length - 1, Math.floor(ms.length * 0.99))]!, 2);
  const stages = Object.values(STAGES).map((s) => ({
    stage: s.name,
    throttlePerMethod: s.stageThrottle.rateLimit,
    methods: ROUTES.length,
    admitted: s.stageThrottle.rateLimit * ROUTES.length,
    concurrency: s.authorizerReservedConcurrency,
    capacity: authorizerCapacity(s.authorizerReservedConcurrency),
    capacityAtLocalP99: authorizerCapacity(s.authorizerReservedConcurrency, p99),
  }));
  // The check per token: CRC-32 (today) against HMAC-SHA-256 under a stage secret (a keyed check).
  const body = generateKey().slice(0, -6);
  const secret = randomBytes(32);
  const time = (f: () => unknown) => {
    const n = 20_000;
    const t0 = performance.now();
    for (let i = 0; i < n; i++) f();
    return round(((performance.now() - t0) * 1000) / n, 3);
  };
  const crcUs = time(() => crc32(body));
  const hmacUs = time(() => createHmac('sha256', secret).update(body).digest());
  result.authorizerCapacity = {
    durationMs: AUTHORIZER_DURATION_MS,
    localP50Ms: p50,
    localP99Ms: p99,
    stages,
    crcUs,
    hmacUs,
  };
  printTable(
    `4c. Authorizer capacity: reserved concurrency / ${AUTHORIZER_DURATION_MS} ms sized duration (local warm uncached invocation: p50 ${p50} ms, p99 ${p99} ms)`,
    ['stage', 'throttle/method', 'methods', 'admitted req/s', 'concurrency', 'capacity req/s', 'at local p99'],
    stages.map((s) => [
      s.stage,
      s.throttlePerMethod,
      s.methods,
      s.admitted,
      s.concurrency,
      s.capacity,
      s.capacityAtLocalP99,
    ]),
  );
  printTable(
    '4d. Key check per token (µs)',
    ['check', 'µs'],
    [
      ['CRC-32 (node:zlib)', crcUs],
      ['HMAC-SHA-256 under a stage secret', hmacUs],
    ],
  );
}

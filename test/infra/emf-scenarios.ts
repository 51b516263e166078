/**
 * Run as a child process by emf-capture.ts (one per stage, its stdout holding nothing but the functions' lines):
 * starts the local API with metrics ON and drives every path that counts a metric, so the EMF lines printed to
 * stdout are the ones the deployed functions would emit. Prints nothing else to
 * stdout. Usage: node test/infra/emf-scenarios.ts <dynamoEndpoint> <the stage's function environment as JSON>.
 */
import { randomBytes } from 'node:crypto';
import { generateKey } from '../../lambdas/domain/keys.ts';
import { startLocalApi } from '../../lib/local/app.ts';
import { PLANS } from '../../contract/plans.ts';
import { onEveryClient, readsKeys, throttlingException } from '../helpers/clients.ts';

// Of the old key form: its use is counted (OldKeyFormAccepted).
const key = `ask_${randomBytes(32).toString('base64url')}`;
/** A second key, whose windows no earlier scenario filled (a container answers a full window without storage). */
const other = generateKey();
const api = await startLocalApi({
  dynamoEndpoint: process.argv[2] || undefined,
  tablePrefix: `emf${randomBytes(4).toString('hex')}`,
  devKeys: [
    { key, plan: 'free' },
    { key: other, plan: 'pro' },
  ],
  // Every request reaches the authorizer (no cached decision), as a first request with a new key does.
  authCacheTtlSeconds: 0,
  // The stage's function environment (from the template), with metrics back on and the logs quiet.
  env: {
    ...(JSON.parse(process.argv[3] ?? '{}') as Record<string, string>),
    METRICS: 'on',
    LOG_LEVEL: 'SILENT',
    CURSOR_SECRET: 'emf-cursor-secret-0123456789',
  },
});
const call = (path: string, init: RequestInit = {}) =>
  fetch(`${api.url}${path}`, {
    ...init,
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', ...init.headers },
  });

try {
  // DeprecatedOperationCall: the deprecated GET /pets/{petId}.
  const created = (await (
    await call('/pets', { method: 'POST', body: JSON.stringify({ name: 'Emf', categoryId: 1 }) })
  ).json()) as { id: number };
  await call(`/pets/${created.id}`);
  // NotImplemented: the operation the spec lists without a contract answers 501.
  await call('/store/orders');
  // RateLimited: requests over the Free minute (until one is refused: a minute boundary may pass meanwhile).
  for (let i = 0; i < 3 * PLANS.free.limits!.perMinute; i++) if ((await call('/pets?limit=1')).status === 429) break;

  // AuthorizerDenied: a well-formed key nobody issued (answered 401 by the authorizer, not by the header check).
  await call('/pets', { headers: { Authorization: `Bearer ${generateKey()}` } });

  // Storage failures, injected into the functions' own DynamoDB client (the faults test does the same).
  let failKeys = false;
  let bug = false;
  onEveryClient(
    api,
    'emfInjectThrottling',
    (next) => async (args) => {
      const isKeys = readsKeys(args.input);
      // An error storage does not know (a bug of ours): the operation answers 500 internal_error.
      if (bug && !isKeys) throw Object.assign(new Error('injected bug'), { name: 'EmfInjectedBug' });
      if (isKeys === failKeys) throw throttlingException();
      return next(args);
    },
    'finalizeRequest',
  );
  // InternalError and ServerError (per operation and version): the operation's tables fail in a way storage does not
  // map to 503.
  bug = true;
  await call('/pets', { headers: { Authorization: `Bearer ${other}` } });
  bug = false;
  // StorageUnavailable: the operation's tables fail (the key lookup works).
  await call('/pets', { headers: { Authorization: `Bearer ${other}` } });
  // AuthorizerFailure: the key lookup fails (the authorizer fails closed); a key never seen, so nothing is cached.
  failKeys = true;
  await call('/pets', { headers: { Authorization: `Bearer ${generateKey()}` } });
} finally {
  await api.close();
}

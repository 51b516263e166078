/**
 * Run as a child process by emf-capture.ts (one per stage, its stdout holding nothing but the functions' lines):
 * starts the local API with metrics ON and drives every path that counts a metric, so the EMF lines printed to
 * stdout are the ones the deployed functions would emit. Prints nothing else to
 * stdout. Usage: node test/infra/emf-scenarios.ts <dynamoEndpoint> <the stage's function environment as JSON>.
 */
import { randomBytes } from 'node:crypto';
import { generateKey } from '../../lambdas/domain/keys.ts';
import { TALLY_FLUSH_MS } from '../../lambdas/handlers/authorizer.ts';
import { startLocalApi } from '../../lib/local/app.ts';
import { PLANS } from '../../contract/plans.ts';
import { ROUTES } from '../../contract/routes.ts';
import { onEveryClient, readsKeys, throttlingException } from '../helpers/clients.ts';
import { fixturesSending, requestInit, sampleRequest, type SampleRequest } from '../helpers/samples.ts';

// Of the old key form: its use is counted (OldKeyFormAccepted).
const key = `ask_${randomBytes(32).toString('base64url')}`;
/** A second key, whose windows no earlier scenario filled (a container answers a full window without storage). */
const other = generateKey();
// The local gateway runs the local template, whose plan keys are named for its own stage: the authorizer names
// those, not the given stage's (which are on no usage plan here: 403).
const { USAGE_KEYS_STAGE: _ownStage, ...stageEnv } = JSON.parse(process.argv[3] ?? '{}') as Record<string, string>;
/** How far the functions' clock runs ahead of the wall clock: moved past the authorizer's tally interval below. */
let ahead = 0;
const api = await startLocalApi({
  now: () => Date.now() + ahead,
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
    ...stageEnv,
    METRICS: 'on',
    LOG_LEVEL: 'SILENT',
    CURSOR_SECRET: 'emf-cursor-secret-0123456789',
  },
});
/** A sample request (test/helpers/samples.ts) sent with the Free key, or with `headers` over its own. */
const send = (r: SampleRequest, headers: Record<string, string> = {}) =>
  fetch(`${api.url}${r.path}`, requestInit(r, { key, headers }));
const fixtures = fixturesSending(async (r) => (await send(r)).json());
const samplesOf = (routes: readonly (typeof ROUTES)[number][]) =>
  Promise.all(routes.map((route) => sampleRequest(route, fixtures)));
/** A read that names no item (the route table's first such), for the scenarios that only need a request. */
const plain = await sampleRequest(
  ROUTES.find((r) => r.does === 'reads' && !r.path.includes('{') && !r.notImplemented)!,
  fixtures,
);

try {
  // DeprecatedOperationCall: every deprecated operation, on an item made for it.
  for (const r of await samplesOf(ROUTES.filter((route) => route.deprecation))) await send(r);
  // NotImplemented: the operations the spec lists without a contract answer 501.
  for (const r of await samplesOf(ROUTES.filter((route) => route.notImplemented))) await send(r);
  // RateLimited: requests over the Free minute (until one is refused: a minute boundary may pass meanwhile).
  for (let i = 0; i < 3 * PLANS.free.limits!.perMinute; i++) if ((await send(plain)).status === 429) break;

  // AuthorizerDenied: a well-formed key nobody issued (answered 401 by the authorizer, not by the header check). The
  // authorizer writes its added-up counts at most once per TALLY_FLUSH_MS: a denial that long after its last line is
  // written at once.
  ahead += TALLY_FLUSH_MS;
  await send(plain, { Authorization: `Bearer ${generateKey()}` });

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
  await send(plain, { Authorization: `Bearer ${other}` });
  bug = false;
  // StorageUnavailable: the operation's tables fail (the key lookup works).
  await send(plain, { Authorization: `Bearer ${other}` });
  // AuthorizerFailure: the key lookup fails (the authorizer fails closed); a key never seen, so nothing is cached.
  failKeys = true;
  await send(plain, { Authorization: `Bearer ${generateKey()}` });
} finally {
  await api.close();
}

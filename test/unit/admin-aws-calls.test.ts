/**
 * What an admin's role must allow, walked from the admin tool's own source: every AWS API call it can make (each
 * `new …Command` of the SDK), by file. No key command touches API Gateway: the one file that sends API Gateway
 * calls is `keys remove-release-api-keys`'s, and its help (REMOVAL_PERMISSIONS) names exactly the writes it sends.
 * The runtime side is admin-scale.test.ts: 100,000 keys created, rotated, moved and revoked, 0 API Gateway calls.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { REMOVAL_PERMISSIONS } from '../../lib/admin/release-api-keys.ts';

const ADMIN = 'lib/admin';

/** The SDK commands each admin file constructs, by file name. */
function commandsByFile(): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const file of readdirSync(ADMIN).filter((f) => f.endsWith('.ts'))) {
    const text = readFileSync(join(ADMIN, file), 'utf8');
    const commands = [...text.matchAll(/new (?:\w+\.)?(\w+)Command\(/g)].map((m) => m[1]!);
    if (commands.length) out.set(file, new Set(commands));
  }
  return out;
}

/** API Gateway's REST operations, by the verb IAM's `apigateway:<verb>` action names for them. */
const GATEWAY_VERB: Record<string, string> = {
  GetUsagePlans: 'GET',
  GetUsagePlanKeys: 'GET',
  DeleteApiKey: 'DELETE',
  DeleteUsagePlanKey: 'DELETE',
  DeleteUsagePlan: 'DELETE',
  UpdateUsagePlan: 'PATCH',
};

it('sends API Gateway calls from the removal command only, and its help names each write it sends', () => {
  const byFile = commandsByFile();
  const gatewayFiles = [...byFile]
    .filter(([file]) => readFileSync(join(ADMIN, file), 'utf8').includes('@aws-sdk/client-api-gateway'))
    .map(([file]) => file);
  expect(gatewayFiles).toEqual(['release-api-keys.ts']);
  const sent = [...byFile.get('release-api-keys.ts')!].filter(
    (c) => !/^(DescribeStacks|GetTemplate|ListStack)/.test(c),
  );
  expect(sent.sort()).toEqual(Object.keys(GATEWAY_VERB).sort());
  for (const verb of new Set(Object.values(GATEWAY_VERB)))
    expect(REMOVAL_PERMISSIONS, verb).toContain(`apigateway:${verb}`);
  expect(REMOVAL_PERMISSIONS).not.toMatch(/apigateway:(POST|PUT)/);
});

it('writes nothing else outside DynamoDB but the check key’s secret', () => {
  const writes = [...commandsByFile()]
    .filter(([file]) => file !== 'release-api-keys.ts')
    .flatMap(([, commands]) => [...commands])
    .filter((c) => !/^(Get|Describe|List)/.test(c));
  // keys issue-check-key stores the check key's secret where the pre-traffic hook reads it.
  expect(writes.sort()).toEqual(['CreateSecret', 'PutSecretValue']);
});

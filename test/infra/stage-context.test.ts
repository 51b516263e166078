/**
 * A stage's `-c` values are checked at synth: an account, Region, alarm e-mail or topic that is not one is refused
 * naming the value, rather than passing synth and failing the deploy (or, for an e-mail, never delivering).
 */
import { expect, it } from 'vitest';
import { errorsOf, synth } from './prod-ops-fixture.ts';

it('refuses an account, Region, e-mail or topic that is not one, naming the value', () => {
  const app = synth({
    'animal-store:production:account': '12345',
    'animal-store:production:alarmEmails': 'ops@example.com, not-an-email',
    'animal-store:staging:region': 'Ireland',
    'animal-store:staging:alarmTopicArn': 'arn:aws:sqs:eu-west-1:123456789012:q',
  });
  const production = errorsOf(app, 'production');
  expect(production.some((e) => /account=.*12345.* is not an AWS account id/.test(e))).toBe(true);
  expect(production.some((e) => /"not-an-email" is not an e-mail address/.test(e))).toBe(true);
  expect(production.some((e) => e.includes('ops@example.com'))).toBe(false);
  const staging = errorsOf(app, 'staging');
  expect(staging.some((e) => /region=.*Ireland.* is not an AWS Region/.test(e))).toBe(true);
  expect(staging.some((e) => /alarmTopicArn=.* is not an SNS topic ARN/.test(e))).toBe(true);
});

it('accepts well-formed values', () => {
  const app = synth({
    'animal-store:production:account': '123456789012',
    'animal-store:production:region': 'eu-west-1',
    'animal-store:production:alarmEmails': 'ops@example.com,oncall@example.org',
    'animal-store:staging:alarmTopicArn': 'arn:aws:sns:eu-west-1:123456789012:alarms',
  });
  expect(errorsOf(app, 'production')).toEqual([]);
  expect(errorsOf(app, 'staging')).toEqual([]);
});

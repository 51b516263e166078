/**
 * No module of ours writes a library's private field (test/helpers/private-writes.ts): such a write compiles only
 * behind a cast, and the next release of the library may rename the field, leaving the write on nothing without an
 * error (Powertools' printers were once redirected that way).
 */
import { join, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { privateWrites } from '../helpers/private-writes.ts';

const ROOT = resolve(import.meta.dirname, '../..');
/** A module that does what must be refused, given to the compiler with ours (never written to disk). */
const FIXTURE = join(ROOT, 'test/unit/__private-write-fixture.ts');
const FIXTURE_TEXT = `
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
const logger = new Logger();
(logger as unknown as { console: Console }).console = console;
const metrics = new Metrics();
Object.defineProperty(metrics, 'console', { value: console });
class Quiet extends Metrics {
  constructor() {
    super();
    (this as unknown as { console: Console })['console'] = console;
  }
}
export { Quiet };
`;

function program(): ts.Program {
  const config = ts.getParsedCommandLineOfConfigFile(
    join(ROOT, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  )!;
  const host = ts.createCompilerHost(config.options);
  const { getSourceFile, fileExists, readFile } = host;
  host.fileExists = (f) => f === FIXTURE || fileExists(f);
  host.readFile = (f) => (f === FIXTURE ? FIXTURE_TEXT : readFile(f));
  host.getSourceFile = (f, ...rest) =>
    f === FIXTURE ? ts.createSourceFile(f, FIXTURE_TEXT, ts.ScriptTarget.Latest, true) : getSourceFile(f, ...rest);
  return ts.createProgram([...config.fileNames, FIXTURE], config.options, host);
}

describe('library private fields', () => {
  const all = privateWrites(program(), (f) => f.startsWith(ROOT) && !f.includes('/node_modules/'));

  it('are caught when written through a cast, Object.defineProperty or from a subclass', () => {
    expect(all.filter((w) => w.file === FIXTURE).map((w) => `${w.line} ${w.field}`)).toEqual([
      '5 console',
      '7 console',
      '11 console',
    ]);
  });

  it('are written by no module of ours', () => {
    expect(all.filter((w) => w.file !== FIXTURE)).toEqual([]);
  });
});

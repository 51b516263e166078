// Guard: the project runs on Node >= 24.18 (devDependency `node` puts it first on PATH for npm scripts).
// `npm ci --ignore-scripts` or a global npm on Node 20 would silently fall back to the system Node.
import { fileURLToPath } from 'node:url';
import { verifyNodeBinary } from './node-binary.mjs';

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 24 || (major === 24 && minor < 18)) {
  console.error(
    `Animal Store needs Node >= 24.18 but this is ${process.version} (${process.execPath}).\n` +
      'Run `npm ci` (without --ignore-scripts) so the pinned node@24 devDependency installs, then use npm scripts.',
  );
  process.exit(1);
}

// The binary itself: it runs every npm script, `cdk deploy` with deploy credentials included (scripts/node-binary.mjs).
const root = fileURLToPath(new URL('..', import.meta.url));
const v = verifyNodeBinary({ root });
if (v.status === 'mismatch' || v.status === 'missing') {
  console.error(
    `The Node binary running this (${v.running}) is not the one package-lock.json covers (${v.package}: ${v.reason ?? `${v.locked} is missing`}).\n` +
      'Reinstall with `npm ci` (optional dependencies included) and do not run the scripts until it passes.',
  );
  process.exit(1);
}
if (v.status === 'uncovered')
  console.warn(
    `check-node: package-lock.json covers no Node package for this platform (${v.package}); the binary is not verified.`,
  );

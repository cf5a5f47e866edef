import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  documentSelector,
  expandVariables,
  FILE_PATTERN,
  formatCommand,
  initializationOptions,
  needsPythonInterpreter,
  normalizeSettings,
  resolveServerCommand,
  Settings,
} from '../launch';

function settings(overrides: Partial<Settings> = {}): Settings {
  return { path: [], interpreter: [], select: [], ignore: [], target: '', codeLens: true, ...overrides };
}

function fromRaw(raw: Record<string, unknown>): Settings {
  return normalizeSettings((key) => raw[key]);
}

describe('resolveServerCommand', () => {
  it('uses shaderlint.path first and appends lsp', () => {
    const cmd = resolveServerCommand(
      settings({ path: ['/usr/local/bin/shaderlint'], interpreter: ['/usr/bin/python3'] }),
      { pythonInterpreter: ['/venv/bin/python'] },
    );
    assert.deepEqual(cmd, { command: '/usr/local/bin/shaderlint', args: ['lsp'], source: 'shaderlint.path' });
  });

  it('keeps extra args from shaderlint.path and does not duplicate lsp', () => {
    assert.deepEqual(resolveServerCommand(settings({ path: ['shaderlint', 'lsp', '--log-level', 'debug'] })), {
      command: 'shaderlint',
      args: ['lsp', '--log-level', 'debug'],
      source: 'shaderlint.path',
    });
    assert.deepEqual(resolveServerCommand(settings({ path: ['python3', '-m', 'shaderlint'] })).args, [
      '-m',
      'shaderlint',
      'lsp',
    ]);
  });

  it('uses shaderlint.interpreter with -m shaderlint lsp', () => {
    const cmd = resolveServerCommand(settings({ interpreter: ['/opt/py/bin/python3', '-X', 'utf8'] }), {
      pythonInterpreter: ['/venv/bin/python'],
    });
    assert.deepEqual(cmd, {
      command: '/opt/py/bin/python3',
      args: ['-X', 'utf8', '-m', 'shaderlint', 'lsp'],
      source: 'shaderlint.interpreter',
    });
  });

  it("falls back to the Python extension's interpreter", () => {
    const cmd = resolveServerCommand(settings(), { pythonInterpreter: ['/venv/bin/python'] });
    assert.deepEqual(cmd, { command: '/venv/bin/python', args: ['-m', 'shaderlint', 'lsp'], source: 'python-extension' });
    const conda = resolveServerCommand(settings(), { pythonInterpreter: ['conda', 'run', '-n', 'gpu', 'python'] });
    assert.deepEqual(conda.args, ['run', '-n', 'gpu', 'python', '-m', 'shaderlint', 'lsp']);
  });

  it('falls back to shaderlint on PATH', () => {
    assert.deepEqual(resolveServerCommand(settings()), { command: 'shaderlint', args: ['lsp'], source: 'PATH' });
    assert.deepEqual(resolveServerCommand(settings(), { pythonInterpreter: [] }).source, 'PATH');
    assert.deepEqual(resolveServerCommand(settings(), { pythonInterpreter: [''] }).source, 'PATH');
  });

  it('never adds --stdio itself (the language client does)', () => {
    for (const s of [settings(), settings({ path: ['x'] }), settings({ interpreter: ['py'] })]) {
      assert.ok(!resolveServerCommand(s, { pythonInterpreter: ['py'] }).args.includes('--stdio'));
    }
  });

  it('expands ~, ${userHome}, ${workspaceFolder} and ${env:X}', () => {
    const env = { home: '/home/u', workspaceFolder: '/ws' };
    assert.equal(
      resolveServerCommand(settings({ path: ['~/.local/bin/shaderlint'] }), env).command,
      '/home/u/.local/bin/shaderlint',
    );
    assert.equal(
      resolveServerCommand(settings({ interpreter: ['${workspaceFolder}/.venv/bin/python'] }), env).command,
      '/ws/.venv/bin/python',
    );
    assert.equal(expandVariables('${userHome}/x', env), '/home/u/x');
    assert.equal(expandVariables('${env:VENV}/bin/python', env, { VENV: '/v' }), '/v/bin/python');
    assert.equal(expandVariables('a~b', env), 'a~b');
  });
});

describe('normalizeSettings', () => {
  it('gives defaults for missing values', () => {
    assert.deepEqual(fromRaw({}), settings());
  });

  it('accepts a plain string for path/interpreter and ignores an empty program', () => {
    assert.deepEqual(fromRaw({ path: '/bin/shaderlint' }).path, ['/bin/shaderlint']);
    assert.deepEqual(fromRaw({ path: '' }).path, []);
    assert.deepEqual(fromRaw({ path: ['', 'lsp'] }).path, []);
    assert.deepEqual(fromRaw({ interpreter: ['  /usr/bin/python3 '] }).interpreter, ['/usr/bin/python3']);
    assert.deepEqual(fromRaw({ interpreter: 42 }).interpreter, []);
  });

  it('normalizes rule lists', () => {
    const s = fromRaw({ select: ['sl1', 'SL201, SL202', '', 7, 'SL1'], ignore: 'SL204' });
    assert.deepEqual(s.select, ['SL1', 'SL201', 'SL202']);
    assert.deepEqual(s.ignore, ['SL204']);
  });

  it('normalizes target and codeLens', () => {
    assert.equal(fromRaw({ target: ' sm_80 ' }).target, 'sm_80');
    assert.equal(fromRaw({ target: null }).target, '');
    assert.equal(fromRaw({ codeLens: false }).codeLens, false);
    assert.equal(fromRaw({ codeLens: 'no' }).codeLens, true);
  });

  it('decides when to consult the Python extension', () => {
    assert.equal(needsPythonInterpreter(settings()), true);
    assert.equal(needsPythonInterpreter(settings({ path: ['x'] })), false);
    assert.equal(needsPythonInterpreter(settings({ interpreter: ['x'] })), false);
  });
});

describe('initializationOptions', () => {
  it('passes select, ignore, target (and codeLens)', () => {
    const opts = initializationOptions(
      settings({ select: ['SL1', 'SL201'], ignore: ['SL204'], target: 'apple-m1', codeLens: false, path: ['x'] }),
    );
    assert.deepEqual(opts, { select: ['SL1', 'SL201'], ignore: ['SL204'], target: 'apple-m1', codeLens: false });
  });

  it('uses empty values for defaults', () => {
    assert.deepEqual(initializationOptions(settings()), { select: [], ignore: [], target: '', codeLens: true });
  });

  it('is JSON-serializable and not aliased to the settings', () => {
    const s = settings({ select: ['SL1'] });
    const opts = initializationOptions(s);
    opts.select.push('SL2');
    assert.deepEqual(s.select, ['SL1']);
    assert.deepEqual(JSON.parse(JSON.stringify(opts)), opts);
  });
});

describe('documentSelector', () => {
  it('covers the language ids and every shader extension', () => {
    const selector = documentSelector();
    for (const language of ['cuda-cpp', 'metal', 'glsl']) {
      assert.ok(selector.some((f) => f.language === language && f.scheme === 'file'), language);
    }
    const patterns = selector.filter((f) => f.pattern !== undefined);
    assert.deepEqual(patterns, [{ scheme: 'file', pattern: FILE_PATTERN }]);
    for (const ext of 'metal cu cuh glsl comp vert frag geom tesc tese mesh task rgen rchit rmiss rahit rint rcall'.split(' ')) {
      assert.match(FILE_PATTERN, new RegExp(`[{,]${ext}[,}]`), ext);
    }
  });

  it('matches the language ids contributed in package.json', () => {
    // eslint-disable-next-line @typescript-eslint/no-var-requires
    const manifest = require('../../package.json');
    const contributed = new Map<string, string[]>(
      manifest.contributes.languages.map((l: { id: string; extensions: string[] }) => [l.id, l.extensions]),
    );
    assert.deepEqual(contributed.get('metal'), ['.metal']);
    assert.deepEqual(
      [...(contributed.get('glsl') ?? [])].sort(),
      '.glsl .comp .vert .frag .geom .tesc .tese .mesh .task .rgen .rchit .rmiss .rahit .rint .rcall'.split(' ').sort(),
    );
    for (const id of ['cuda-cpp', 'metal', 'glsl']) {
      assert.ok(manifest.activationEvents.includes(`onLanguage:${id}`), id);
    }
    const props = Object.keys(manifest.contributes.configuration.properties);
    for (const key of ['path', 'interpreter', 'select', 'ignore', 'target', 'codeLens', 'trace.server']) {
      assert.ok(props.includes(`shaderlint.${key}`), key);
    }
    assert.ok(manifest.contributes.commands.some((c: { command: string }) => c.command === 'shaderlint.restart'));
  });
});

describe('formatCommand', () => {
  it('quotes arguments with spaces', () => {
    assert.equal(formatCommand({ command: '/a b/python', args: ['-m', 'shaderlint', 'lsp'] }), "'/a b/python' -m shaderlint lsp");
  });
});

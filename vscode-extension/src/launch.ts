/**
 * Settings -> server launch logic. Pure: no `vscode` import, no I/O, so it can
 * be unit-tested with node's built-in test runner.
 */

/** The `shaderlint.*` settings, as normalized by {@link normalizeSettings}. */
export interface Settings {
  /** Explicit server command: program followed by arguments. */
  path: string[];
  /** Python interpreter (program and arguments) to run `-m shaderlint lsp`. */
  interpreter: string[];
  select: string[];
  ignore: string[];
  /** GPU profile name; "" means the per-language default. */
  target: string;
  codeLens: boolean;
}

/** What the launch logic needs to know about its surroundings. */
export interface LaunchEnvironment {
  /**
   * Interpreter selected in the Python extension (`ms-python.python`), already
   * checked to be able to import shaderlint; undefined when unavailable.
   */
  pythonInterpreter?: string[];
  /** Home directory, for `~` and `${userHome}` expansion. */
  home?: string;
  /** First workspace folder (fs path), for `${workspaceFolder}` expansion. */
  workspaceFolder?: string;
}

export type CommandSource = 'shaderlint.path' | 'shaderlint.interpreter' | 'python-extension' | 'PATH';

export interface ServerCommand {
  command: string;
  args: string[];
  /** Which resolution step produced the command (for logging and messages). */
  source: CommandSource;
}

export interface InitializationOptions {
  select: string[];
  ignore: string[];
  target: string;
  codeLens: boolean;
}

/** The executable name looked up on PATH when nothing else is configured. */
export const DEFAULT_EXECUTABLE = 'shaderlint';

/** Settings whose change requires restarting the server process. */
export const RESTART_SETTINGS = ['shaderlint.path', 'shaderlint.interpreter', 'shaderlint.codeLens'];

export const SHADER_EXTENSIONS = [
  'metal',
  'cu',
  'cuh',
  'glsl',
  'comp',
  'vert',
  'frag',
  'geom',
  'tesc',
  'tese',
  'mesh',
  'task',
  'rgen',
  'rchit',
  'rmiss',
  'rahit',
  'rint',
  'rcall',
];

/** VS Code language ids handled by the server (`cuda-cpp` is VS Code's own id for .cu/.cuh). */
export const LANGUAGE_IDS = ['cuda-cpp', 'metal', 'glsl'];

export const FILE_PATTERN = `**/*.{${SHADER_EXTENSIONS.join(',')}}`;

/** Structurally an LSP/VS Code document filter. */
export type DocumentFilter =
  | { scheme: string; language: string; pattern?: undefined }
  | { scheme: string; pattern: string; language?: undefined };

/**
 * Documents the client sends to the server: the three language ids (saved and
 * untitled), plus every file with a shader extension whatever language id it
 * was opened under.
 */
export function documentSelector(): DocumentFilter[] {
  const selector: DocumentFilter[] = [];
  for (const language of LANGUAGE_IDS) {
    selector.push({ scheme: 'file', language });
    selector.push({ scheme: 'untitled', language });
  }
  selector.push({ scheme: 'file', pattern: FILE_PATTERN });
  return selector;
}

function stringArray(value: unknown): string[] {
  if (typeof value === 'string') {
    return value.trim() === '' ? [] : [value];
  }
  if (!Array.isArray(value)) {
    return [];
  }
  return value.filter((v): v is string => typeof v === 'string');
}

function ruleList(value: unknown): string[] {
  const out: string[] = [];
  for (const item of stringArray(value)) {
    // Tolerate "SL101, SL201" typed into one entry.
    for (const part of item.split(/[\s,]+/)) {
      const code = part.trim().toUpperCase();
      if (code !== '' && !out.includes(code)) {
        out.push(code);
      }
    }
  }
  return out;
}

/**
 * Turn raw configuration values (whatever the user wrote in settings.json)
 * into well-typed {@link Settings}. `get(key)` returns the value of
 * `shaderlint.<key>` or undefined.
 */
export function normalizeSettings(get: (key: string) => unknown): Settings {
  // A command is used only if its program (first entry) is non-empty.
  const command = (key: string) => {
    const parts = stringArray(get(key)).map((s) => s.trim());
    return parts.length > 0 && parts[0] !== '' ? parts : [];
  };
  const target = get('target');
  const codeLens = get('codeLens');
  return {
    path: command('path'),
    interpreter: command('interpreter'),
    select: ruleList(get('select')),
    ignore: ruleList(get('ignore')),
    target: typeof target === 'string' ? target.trim() : '',
    codeLens: typeof codeLens === 'boolean' ? codeLens : true,
  };
}

/** Expand `~`, `${userHome}`, `${workspaceFolder}` and `${env:NAME}` in one argument. */
export function expandVariables(value: string, env: LaunchEnvironment, processEnv: Record<string, string | undefined> = {}): string {
  let out = value;
  if (env.home !== undefined) {
    if (out === '~') {
      out = env.home;
    } else if (out.startsWith('~/') || out.startsWith('~\\')) {
      out = env.home + out.slice(1);
    }
    out = out.split('${userHome}').join(env.home);
  }
  if (env.workspaceFolder !== undefined) {
    out = out.split('${workspaceFolder}').join(env.workspaceFolder);
  }
  out = out.replace(/\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, name: string) => processEnv[name] ?? '');
  return out;
}

/**
 * Decide how to start the language server. Resolution order:
 * 1. `shaderlint.path` (program + args; `lsp` appended unless present),
 * 2. `shaderlint.interpreter` + `-m shaderlint lsp`,
 * 3. the Python extension's selected interpreter + `-m shaderlint lsp`,
 * 4. `shaderlint lsp` from PATH.
 * The language client appends `--stdio` itself.
 */
export function resolveServerCommand(
  settings: Settings,
  env: LaunchEnvironment = {},
  processEnv: Record<string, string | undefined> = {},
): ServerCommand {
  const expand = (parts: string[]) => parts.map((p) => expandVariables(p, env, processEnv));
  if (settings.path.length > 0) {
    const [command, ...args] = expand(settings.path);
    if (!args.includes('lsp')) {
      args.push('lsp');
    }
    return { command, args, source: 'shaderlint.path' };
  }
  if (settings.interpreter.length > 0) {
    const [command, ...args] = expand(settings.interpreter);
    return { command, args: [...args, '-m', 'shaderlint', 'lsp'], source: 'shaderlint.interpreter' };
  }
  const python = (env.pythonInterpreter ?? []).filter((s) => s !== '');
  if (python.length > 0) {
    const [command, ...args] = python;
    return { command, args: [...args, '-m', 'shaderlint', 'lsp'], source: 'python-extension' };
  }
  return { command: DEFAULT_EXECUTABLE, args: ['lsp'], source: 'PATH' };
}

/** Whether the Python extension should be consulted (steps 1 and 2 did not apply). */
export function needsPythonInterpreter(settings: Settings): boolean {
  return settings.path.length === 0 && settings.interpreter.length === 0;
}

/** `initializationOptions` sent with `initialize`; same shape as the `shaderlint` configuration section. */
export function initializationOptions(settings: Settings): InitializationOptions {
  return {
    select: [...settings.select],
    ignore: [...settings.ignore],
    target: settings.target,
    codeLens: settings.codeLens,
  };
}

/** Quote a command line for display in the output channel. */
export function formatCommand(cmd: { command: string; args: string[] }): string {
  const quote = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
  return [cmd.command, ...cmd.args].map(quote).join(' ');
}

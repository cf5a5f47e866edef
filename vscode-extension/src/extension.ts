import { execFile } from 'child_process';
import * as os from 'os';
import * as vscode from 'vscode';
import {
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  ServerOptions,
  TransportKind,
} from 'vscode-languageclient/node';

import {
  documentSelector,
  formatCommand,
  initializationOptions,
  LaunchEnvironment,
  needsPythonInterpreter,
  normalizeSettings,
  resolveServerCommand,
  RESTART_SETTINGS,
  ServerCommand,
  Settings,
} from './launch';

const PYTHON_EXTENSION_ID = 'ms-python.python';

let client: LanguageClient | undefined;
let log: vscode.LogOutputChannel;
let lastCommand: ServerCommand | undefined;
/** Start/stop/restart run one at a time, in order. */
let queue: Promise<void> = Promise.resolve();

function enqueue(task: () => Promise<void>): Promise<void> {
  queue = queue.then(task).catch((err) => {
    log.error(`shaderlint: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
  });
  return queue;
}

function readSettings(): Settings {
  const config = vscode.workspace.getConfiguration('shaderlint');
  return normalizeSettings((key) => config.get(key));
}

// --- Python extension (optional) -------------------------------------------

interface PythonEnvironmentsApi {
  getActiveEnvironmentPath(resource?: vscode.Uri): { id: string; path: string };
  resolveEnvironment(env: { id: string; path: string } | string): Promise<{ executable: { uri?: vscode.Uri } } | undefined>;
  onDidChangeActiveEnvironmentPath?: vscode.Event<unknown>;
}

interface PythonApi {
  environments?: PythonEnvironmentsApi;
  settings?: {
    getExecutionDetails?(resource?: vscode.Uri): { execCommand: string[] | undefined };
    onDidChangeExecutionDetails?: vscode.Event<unknown>;
  };
}

function withTimeout<T>(promise: Thenable<T>, ms: number): Promise<T | undefined> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(undefined), ms);
    Promise.resolve(promise).then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      () => {
        clearTimeout(timer);
        resolve(undefined);
      },
    );
  });
}

async function pythonApi(): Promise<PythonApi | undefined> {
  const ext = vscode.extensions.getExtension<PythonApi>(PYTHON_EXTENSION_ID);
  if (!ext) {
    return undefined;
  }
  try {
    return ext.isActive ? ext.exports : await withTimeout(ext.activate(), 15000);
  } catch {
    return undefined;
  }
}

/** The interpreter selected in the Python extension, if any. */
async function selectedPythonInterpreter(api: PythonApi): Promise<string[] | undefined> {
  const resource = vscode.workspace.workspaceFolders?.[0]?.uri;
  try {
    if (api.environments) {
      const active = api.environments.getActiveEnvironmentPath(resource);
      const resolved = await withTimeout(api.environments.resolveEnvironment(active), 10000);
      const exe = resolved?.executable.uri?.fsPath;
      if (exe) {
        return [exe];
      }
    }
    const command = api.settings?.getExecutionDetails?.(resource)?.execCommand;
    if (command && command.length > 0 && command[0]) {
      return command;
    }
  } catch (err) {
    log.warn(`Could not query the Python extension: ${String(err)}`);
  }
  return undefined;
}

/** Whether `interpreter` can import shaderlint (without importing all of it). */
function hasShaderlint(interpreter: string[]): Promise<boolean> {
  const [command, ...args] = interpreter;
  const probe = 'import importlib.util, sys; sys.exit(0 if importlib.util.find_spec("shaderlint") else 1)';
  return new Promise((resolve) => {
    execFile(command, [...args, '-c', probe], { timeout: 10000 }, (err) => resolve(!err));
  });
}

async function pythonExtensionInterpreter(): Promise<string[] | undefined> {
  const api = await pythonApi();
  if (!api) {
    return undefined;
  }
  const interpreter = await selectedPythonInterpreter(api);
  if (!interpreter) {
    return undefined;
  }
  if (await hasShaderlint(interpreter)) {
    return interpreter;
  }
  log.info(`The Python extension's interpreter ${interpreter.join(' ')} has no shaderlint; falling back to PATH.`);
  return undefined;
}

// --- client lifecycle -------------------------------------------------------

async function startClient(): Promise<void> {
  const settings = readSettings();
  const env: LaunchEnvironment = {
    home: os.homedir(),
    workspaceFolder: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath,
  };
  if (needsPythonInterpreter(settings)) {
    env.pythonInterpreter = await pythonExtensionInterpreter();
  }
  const cmd = resolveServerCommand(settings, env, process.env);
  lastCommand = cmd;
  log.info(`Starting language server (from ${cmd.source}): ${formatCommand(cmd)} --stdio`);

  const serverOptions: ServerOptions = {
    command: cmd.command,
    args: cmd.args,
    transport: TransportKind.stdio,
    options: { cwd: env.workspaceFolder, env: { ...process.env } },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: documentSelector(),
    initializationOptions: initializationOptions(settings),
    // The server may also ask for the `shaderlint` section via workspace/configuration
    // (answered by the client) and is told about changes with workspace/didChangeConfiguration.
    synchronize: { configurationSection: 'shaderlint' },
    outputChannel: log,
    revealOutputChannelOn: RevealOutputChannelOn.Never,
    diagnosticCollectionName: 'shaderlint',
    middleware: {
      provideCodeLenses: (document, token, next) => (settings.codeLens ? next(document, token) : []),
    },
  };

  const newClient = new LanguageClient('shaderlint', 'shaderlint', serverOptions, clientOptions);
  client = newClient;
  try {
    await newClient.start();
    log.info('Language server started.');
  } catch (err) {
    client = undefined;
    try {
      await newClient.dispose(2000);
    } catch {
      // already dead
    }
    await reportStartFailure(cmd, err);
  }
}

async function reportStartFailure(cmd: ServerCommand, err: unknown): Promise<void> {
  const detail = err instanceof Error ? err.message : String(err);
  log.error(`Failed to start ${formatCommand(cmd)}: ${detail}`);
  const hint =
    cmd.source === 'PATH'
      ? 'Install shaderlint (`pip install shaderlint`) or set `shaderlint.path` / `shaderlint.interpreter`.'
      : `Check the \`${cmd.source}\` setting.`;
  const choice = await vscode.window.showErrorMessage(
    `shaderlint: could not start the language server (${formatCommand(cmd)}). ${hint}`,
    'Open Settings',
    'Show Output',
  );
  if (choice === 'Open Settings') {
    await vscode.commands.executeCommand('workbench.action.openSettings', 'shaderlint');
  } else if (choice === 'Show Output') {
    log.show();
  }
}

async function stopClient(): Promise<void> {
  const old = client;
  client = undefined;
  if (!old) {
    return;
  }
  try {
    if (old.isRunning()) {
      await old.stop(2000);
    }
  } catch (err) {
    log.warn(`Stopping the language server: ${String(err)}`);
  }
  try {
    await old.dispose(2000);
  } catch {
    // ignore
  }
}

function restart(reason: string): Promise<void> {
  return enqueue(async () => {
    log.info(`Restarting language server (${reason}).`);
    await stopClient();
    await startClient();
  });
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  log = vscode.window.createOutputChannel('shaderlint', { log: true });
  context.subscriptions.push(log);

  context.subscriptions.push(
    vscode.commands.registerCommand('shaderlint.restart', () => restart('command')),
    vscode.commands.registerCommand('shaderlint.showOutput', () => log.show()),
    vscode.workspace.onDidChangeConfiguration((e) => {
      const changed = RESTART_SETTINGS.find((key) => e.affectsConfiguration(key));
      if (changed) {
        void restart(`${changed} changed`);
      }
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => restart('workspace trusted')),
  );

  // Follow the Python extension's interpreter when it is what we launch with.
  const pyExt = vscode.extensions.getExtension<PythonApi>(PYTHON_EXTENSION_ID);
  if (pyExt) {
    void (async () => {
      const api = await pythonApi();
      const event = api?.environments?.onDidChangeActiveEnvironmentPath ?? api?.settings?.onDidChangeExecutionDetails;
      if (event) {
        context.subscriptions.push(
          event(() => {
            if (needsPythonInterpreter(readSettings())) {
              void restart('Python interpreter changed');
            }
          }),
        );
      }
    })();
  }

  // Not awaited: consulting the Python extension may take a while.
  void enqueue(startClient);
}

export function deactivate(): Promise<void> {
  return enqueue(stopClient);
}

/** For tests and diagnostics: the command last used to start the server. */
export function currentServerCommand(): ServerCommand | undefined {
  return lastCommand;
}

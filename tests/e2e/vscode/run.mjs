#!/usr/bin/env node
// End-to-end check of the shaderlint VS Code extension in a real VS Code:
// code-server (VS Code in the browser) + Debian's chromium driven by
// playwright-core. Everything lives in a fresh temporary directory that is
// removed afterwards (unless --keep).
//
//   node run.mjs --vsix ../../../vscode-extension/shaderlint-0.1.0.vsix \
//                --workspace /tmp/ws --file kernel.cu --expect SL201 \
//                [--settings '{"shaderlint.interpreter": ["/usr/bin/python3"]}'] \
//                [--fix 'Ignore SL201 on this line' [--fix-code SL201]] \
//                [--timeout 180] [--chromium /usr/bin/chromium] [--artifacts DIR] [--keep]
//
// Prints progress on stderr and one JSON object on stdout:
//   {"ok": bool, "squiggles": int, "problems": [str], "fix": {...}|null, "timings": {...},
//    "error": str|null, "logs": {...}}
// Exit status 0 when a problem row containing every --expect code was found and, with --fix,
// the quick fix of that title, picked from the Ctrl+. menu on the first --fix-code (default:
// first --expect) finding, changed the file on disk after Ctrl+S and that finding's Problems
// row went away. "fix" holds the menu titles, the file's text before and after, and the rows after.

import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const CODE_SERVER = path.join(here, 'node_modules', '.bin', 'code-server');
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
const USER_SETTINGS = {
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.enableExperiments': false,
  'workbench.welcomePage.walkthroughs.openOnInstall': false,
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'extensions.ignoreRecommendations': true,
  'security.workspace.trust.enabled': false,
  'git.enabled': false,
  'chat.disableAIFeatures': true,
  'shaderlint.trace.server': 'messages',
};

function parseArgs(argv) {
  const opts = {
    vsix: undefined,
    workspace: undefined,
    file: undefined,
    expect: [],
    settings: {},
    timeout: 180,
    chromium: process.env.CHROMIUM || '/usr/bin/chromium',
    artifacts: undefined,
    keep: false,
    fix: undefined,
    fixCode: undefined,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${arg} needs a value`);
      return argv[++i];
    };
    switch (arg) {
      case '--vsix': opts.vsix = path.resolve(value()); break;
      case '--workspace': opts.workspace = path.resolve(value()); break;
      case '--file': opts.file = value(); break;
      case '--expect': opts.expect.push(...value().split(',').map((s) => s.trim()).filter(Boolean)); break;
      case '--settings': Object.assign(opts.settings, JSON.parse(value())); break;
      case '--timeout': opts.timeout = Number(value()); break;
      case '--chromium': opts.chromium = value(); break;
      case '--artifacts': opts.artifacts = path.resolve(value()); break;
      case '--keep': opts.keep = true; break;
      case '--fix': opts.fix = value(); break;
      case '--fix-code': opts.fixCode = value(); break;
      case '-h': case '--help':
        process.stderr.write(fs.readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n').slice(1, 21).join('\n') + '\n');
        process.exit(0);
        break;
      default: throw new Error(`unknown argument ${arg}`);
    }
  }
  for (const key of ['vsix', 'workspace', 'file']) {
    if (!opts[key]) throw new Error(`--${key} is required`);
  }
  if (opts.fix && !opts.fixCode) opts.fixCode = opts.expect[0];
  if (opts.fix && !opts.fixCode) throw new Error('--fix needs --fix-code or --expect');
  return opts;
}

const t0 = Date.now();
const timings = {};
function log(msg) {
  process.stderr.write(`[e2e ${((Date.now() - t0) / 1000).toFixed(1)}s] ${msg}\n`);
}
function mark(name) {
  timings[name] = Number(((Date.now() - t0) / 1000).toFixed(2));
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitForHttp(url, deadline, child) {
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`code-server exited with ${child.exitCode}`);
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      // not up yet
    }
    await sleep(250);
  }
  throw new Error(`timed out waiting for ${url}`);
}

/** Files under `dir` whose path matches `re`, newest first. */
function findFiles(dir, re) {
  const out = [];
  const walk = (d) => {
    let entries = [];
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (re.test(p)) out.push(p);
    }
  };
  walk(dir);
  return out;
}

function tail(file, max = 6000) {
  try {
    const text = fs.readFileSync(file, 'utf8');
    return text.length > max ? '…' + text.slice(-max) : text;
  } catch {
    return '';
  }
}

async function killTree(child) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  try {
    process.kill(-child.pid, 'SIGTERM'); // the process group we created (detached)
  } catch {
    return;
  }
  const done = await Promise.race([exited.then(() => true), sleep(5000).then(() => false)]);
  if (!done) {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // gone
    }
    await Promise.race([exited, sleep(2000)]);
  }
}

// Lines of the extension's output channel that mean the server is not going to answer.
const SERVER_DEAD = /Failed to start|crashed \d+ times|will not be restarted|Server initialization failed/;

/** Wait for a squiggle; give up early when the extension reports that the server is dead. */
async function waitForSquiggle(page, userData, deadline) {
  const squiggle = page.locator('.monaco-editor .squiggly-warning, .monaco-editor .squiggly-error, .monaco-editor .squiggly-info');
  while (Date.now() < deadline) {
    if ((await squiggle.count()) > 0) return;
    for (const f of findFiles(path.join(userData, 'logs'), /shaderlint\.log$/)) {
      const line = tail(f, 100000).split('\n').find((l) => SERVER_DEAD.test(l));
      if (line) throw new Error(`language server did not start: ${line.trim()}`);
    }
    await sleep(500);
  }
  throw new Error('timed out waiting for a squiggle in the editor');
}

/** Poll `fn` every 250 ms until it returns a truthy value; that value, or undefined at `until`. */
async function pollUntil(fn, until) {
  for (;;) {
    const v = await fn();
    if (v || Date.now() > until) return v;
    await sleep(250);
  }
}

const problemRows = (page) => page.locator('.markers-panel .monaco-list-row');
const readProblems = async (page) =>
  (await problemRows(page).allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim());

/**
 * Put the cursor on the finding `code` (position from its Problems row), open the Quick Fix
 * menu (Ctrl+.), pick `title`, save (Ctrl+S), then wait for the file on disk to change and for
 * the finding's Problems row to disappear. Fills `fix` as it goes; throws on failure.
 */
async function applyQuickFix(page, opts, problems, fix, deadline) {
  const file = path.join(opts.workspace, opts.file);
  const code = opts.fixCode;
  const row = problems.find((p) => p.includes(code));
  const at = row && /\[Ln (\d+), Col (\d+)\]/.exec(row);
  if (!at) throw new Error(`no position in the Problems row for ${code}: ${JSON.stringify(row)}`);
  fix.at = { line: Number(at[1]), column: Number(at[2]) };
  fix.before = fs.readFileSync(file, 'utf8');
  const short = (ms) => Math.min(ms, Math.max(1000, deadline - Date.now()));

  const widget = page.locator('.action-widget');
  const actions = widget.locator('.monaco-list-row.action');
  const item = actions.filter({ hasText: opts.fix });
  const focusedLabel = () => widget.locator('.monaco-list-row.action.focused').first().getAttribute('aria-label', { timeout: 2000 }).catch(() => null);
  let picked = false;
  for (let attempt = 0; attempt < 2 && !picked; attempt++) { // at most one retry
    if (attempt > 0) {
      log(`quick fix menu attempt ${attempt + 1}`);
      await page.keyboard.press('Escape');
      await page.keyboard.press('Escape');
    }
    // Ctrl+G "line:column" moves the cursor there and focuses the editor.
    await page.keyboard.press('Control+G');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible', timeout: short(10000) });
    await input.fill(`:${fix.at.line}:${fix.at.column}`);
    await input.press('Enter');
    await input.waitFor({ state: 'hidden', timeout: short(10000) });
    const status = page.locator('.statusbar-item', { hasText: `Ln ${fix.at.line}, Col ${fix.at.column}` });
    try {
      await status.first().waitFor({ timeout: short(10000) });
    } catch {
      continue;
    }
    await page.keyboard.press('Control+.');
    try {
      await widget.waitFor({ state: 'visible', timeout: short(10000) });
      await item.first().waitFor({ state: 'visible', timeout: short(10000) });
    } catch {
      fix.menu = (await widget.locator('.monaco-list-row').allInnerTexts().catch(() => [])).map((t) => t.trim());
      continue;
    }
    fix.menu = (await widget.locator('.monaco-list-row').allInnerTexts()).map((t) => t.trim());
    // Pick the item with the keyboard (a pointer-block overlay swallows clicks on a fresh menu):
    // arrow down until it has the focus, then Enter.
    const n = await actions.count();
    for (let i = 0; i <= n && (await focusedLabel()) !== opts.fix; i++) await page.keyboard.press('ArrowDown');
    if ((await focusedLabel()) !== opts.fix) continue;
    await page.keyboard.press('Enter');
    await widget.waitFor({ state: 'hidden', timeout: short(10000) });
    picked = true;
  }
  if (!picked) throw new Error(`no quick fix "${opts.fix}" at ${fix.at.line}:${fix.at.column} (menu: ${JSON.stringify(fix.menu)})`);
  mark('quick_fix_applied');

  // The edit is in the (dirty) editor; Ctrl+S writes it. One retry if the file does not change.
  let changed;
  for (let attempt = 0; attempt < 2 && !changed; attempt++) {
    await page.keyboard.press('Control+S');
    changed = await pollUntil(() => {
      const now = fs.readFileSync(file, 'utf8');
      return now !== fix.before ? now : undefined;
    }, Date.now() + short(10000));
  }
  fix.after = fs.readFileSync(file, 'utf8');
  if (!changed) throw new Error(`${opts.file} unchanged on disk after the quick fix and Ctrl+S`);
  mark('file_saved');

  // The server re-lints the edited document: the finding's row must go away (from a Problems
  // panel that is still on screen, so that an empty list means something), and its squiggle.
  const panel = page.locator('.markers-panel');
  const gone = await pollUntil(async () => {
    if (!(await panel.isVisible())) return false;
    fix.problems_after = await readProblems(page);
    fix.squiggles_after = await page.locator('.monaco-editor .squiggly-warning').count();
    return !fix.problems_after.some((p) => p.includes(code)) && fix.squiggles_after === 0;
  }, Date.now() + short(15000));
  if (!gone) {
    throw new Error(`the Problems row or squiggle for ${code} is still there after the fix: ` +
      `${JSON.stringify(fix.problems_after)}, ${fix.squiggles_after} squiggle(s)`);
  }
  mark('problem_gone');
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const result = { ok: false, squiggles: 0, problems: [], fix: null, timings, error: null, logs: {} };
  if (!fs.existsSync(CODE_SERVER)) throw new Error(`${CODE_SERVER} missing: run ./install.sh`);
  if (!fs.existsSync(opts.chromium)) throw new Error(`${opts.chromium} missing: apt-get install -y chromium`);
  if (!fs.existsSync(path.join(opts.workspace, opts.file))) throw new Error(`${opts.file} not in ${opts.workspace}`);

  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'shaderlint-e2e-'));
  const userData = path.join(tmp, 'user-data');
  const extensions = path.join(tmp, 'extensions');
  const config = path.join(tmp, 'config.yaml');
  fs.mkdirSync(path.join(userData, 'User'), { recursive: true });
  fs.mkdirSync(extensions);
  fs.writeFileSync(config, 'auth: none\ncert: false\n');
  fs.writeFileSync(
    path.join(userData, 'User', 'settings.json'),
    JSON.stringify({ ...USER_SETTINGS, ...opts.settings }, null, 2),
  );
  // Keep code-server's own state (default config, coder-logs) out of $HOME.
  const env = {
    ...process.env,
    XDG_CONFIG_HOME: path.join(tmp, 'xdg-config'),
    XDG_DATA_HOME: path.join(tmp, 'xdg-data'),
    XDG_CACHE_HOME: path.join(tmp, 'xdg-cache'),
  };
  const common = ['--config', config, '--user-data-dir', userData, '--extensions-dir', extensions];

  let server;
  let browser;
  let page;
  const deadline = t0 + opts.timeout * 1000;
  const remaining = () => Math.max(1000, deadline - Date.now());
  try {
    log(`installing ${path.basename(opts.vsix)} into ${extensions}`);
    const inst = spawnSync(CODE_SERVER, [...common, '--install-extension', opts.vsix], {
      env,
      encoding: 'utf8',
      timeout: remaining(),
    });
    if (inst.status !== 0) {
      throw new Error(`--install-extension failed (${inst.status}): ${inst.stdout}\n${inst.stderr}`);
    }
    const installed = fs.readdirSync(extensions).filter((d) => d.startsWith('shaderlint.shaderlint'));
    if (installed.length === 0) throw new Error(`extension not found in ${extensions}: ${inst.stdout}`);
    mark('extension_installed');

    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    log(`starting code-server on ${base}`);
    const serverLog = fs.openSync(path.join(tmp, 'code-server.log'), 'a');
    server = spawn(
      CODE_SERVER,
      [
        ...common,
        '--bind-addr', `127.0.0.1:${port}`,
        '--auth', 'none',
        '--disable-telemetry',
        '--disable-update-check',
        '--disable-workspace-trust',
        '--ignore-last-opened',
        opts.workspace,
      ],
      { env, stdio: ['ignore', serverLog, serverLog], detached: true },
    );
    await waitForHttp(`${base}/healthz`, deadline, server);
    mark('code_server_up');

    log('launching chromium');
    browser = await chromium.launch({
      executablePath: opts.chromium,
      headless: true,
      args: CHROMIUM_FLAGS,
      env, // XDG_* under tmp: keeps chromium's crashpad dir out of $HOME too
      timeout: remaining(),
    });
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    page = await context.newPage();
    await page.goto(`${base}/?folder=${encodeURIComponent(opts.workspace)}`, { timeout: remaining() });
    await page.waitForSelector('.monaco-workbench', { timeout: remaining() });
    mark('workbench_loaded');
    await sleep(1500); // let the workbench settle before it takes keyboard input

    log(`opening ${opts.file}`);
    const base_ = path.basename(opts.file);
    let opened = false;
    for (let attempt = 0; attempt < 5 && !opened; attempt++) {
      await page.locator('.monaco-workbench').click({ position: { x: 700, y: 450 } }).catch(() => {});
      await page.keyboard.press('Control+P');
      const input = page.locator('.quick-input-widget input');
      try {
        await input.waitFor({ state: 'visible', timeout: 10000 });
      } catch {
        continue;
      }
      await input.fill(opts.file);
      const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: base_ }).first();
      try {
        await row.waitFor({ state: 'visible', timeout: 15000 });
        await row.click();
      } catch {
        await page.keyboard.press('Escape');
        continue;
      }
      try {
        await page.locator(`.tab[aria-label*="${base_}"], .tab:has-text("${base_}")`).first().waitFor({ timeout: 10000 });
        opened = true;
      } catch {
        // retry
      }
    }
    if (!opened) throw new Error(`could not open ${opts.file} with Ctrl+P`);
    mark('file_opened');

    log('waiting for a warning squiggle');
    await waitForSquiggle(page, userData, deadline);
    result.squiggles = await page.locator('.monaco-editor .squiggly-warning').count();
    mark('squiggle');

    log('reading the Problems panel');
    await page.keyboard.press('Control+Shift+M');
    await problemRows(page).first().waitFor({ timeout: Math.min(30000, remaining()) });
    // Rows may arrive in more than one batch; read until the expectation holds or time is up.
    await pollUntil(async () => {
      result.problems = await readProblems(page);
      return opts.expect.every((code) => result.problems.some((p) => p.includes(code)));
    }, Date.now() + Math.min(15000, remaining()));
    mark('problems_read');
    const missing = opts.expect.filter((code) => !result.problems.some((p) => p.includes(code)));
    if (missing.length > 0) throw new Error(`no Problems row with ${missing.join(', ')}`);
    if (result.squiggles === 0) throw new Error('no .squiggly-warning in the editor');

    if (opts.fix) {
      log(`applying the quick fix "${opts.fix}" to ${opts.fixCode}`);
      result.fix = { title: opts.fix, code: opts.fixCode, at: null, menu: [], before: null, after: null, problems_after: [], squiggles_after: null };
      await applyQuickFix(page, opts, result.problems, result.fix, deadline);
    }
    result.ok = true;
  } catch (err) {
    result.error = err instanceof Error ? err.message : String(err);
    log(`FAILED: ${result.error}`);
  } finally {
    if (!result.ok) {
      // Enough to diagnose: the extension's output channel, the LSP trace, code-server's log.
      for (const f of findFiles(path.join(userData, 'logs'), /shaderlint|exthost\.log$|remoteexthost\.log$/i)) {
        result.logs[path.relative(tmp, f)] = tail(f);
      }
      result.logs['code-server.log'] = tail(path.join(tmp, 'code-server.log'));
      if (page && opts.artifacts) {
        fs.mkdirSync(opts.artifacts, { recursive: true });
        await page.screenshot({ path: path.join(opts.artifacts, 'failure.png') }).catch(() => {});
      }
    }
    if (browser) await browser.close().catch(() => {});
    await killTree(server);
    mark('shutdown');
    if (opts.keep) log(`kept ${tmp}`);
    else fs.rmSync(tmp, { recursive: true, force: true });
  }
  process.stdout.write(JSON.stringify(result, null, 2) + '\n');
  return result.ok ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`[e2e] ${err instanceof Error ? err.message : String(err)}\n`);
    process.stdout.write(JSON.stringify({ ok: false, error: String(err), timings }) + '\n');
    process.exit(2);
  },
);

/**
 * The API as other people's tools read it, checked by those tools: Stoplight Spectral (`spectral:oas`) and
 * Redocly (`recommended`) over the OpenAPI document, the MCP Inspector's CLI (`tools/list --strict`) over the
 * MCP tools. Each must report no problem at all: a warning fails too. `npm run api:lint` runs them on the route
 * table (in process, nothing left behind) and prints each tool's own closing line; test/api/api-lint.test.ts
 * runs them on a test server.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');
const bin = (path: string) => join(ROOT, 'node_modules', path);
const SPECTRAL = bin('@stoplight/spectral-cli/dist/index.js');
const REDOCLY = bin('@redocly/cli/bin/cli.js');
const INSPECTOR = bin('@modelcontextprotocol/inspector/clients/launcher/build/index.js');

export interface LintOutcome {
  tool: string;
  ok: boolean;
  /** The tool's own summary line, as it printed it. */
  summary: string;
  /** Everything it printed, for a failure's message. */
  output: string;
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A Node tool run on this process's Node (24), with no telemetry and no update notice. */
function run(script: string, args: string[], timeoutMs = 120_000): Promise<Run> {
  return new Promise((done, failed) => {
    const child = spawn(process.execPath, [script, ...args], {
      cwd: ROOT,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1', FORCE_COLOR: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: timeoutMs,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', failed);
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

const lastLine = (text: string): string =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .at(-1) ?? '';

/** Spectral with the project's ruleset (.spectral.yaml: spectral:oas); any severity down to hint fails. */
export async function spectral(documentPath: string): Promise<LintOutcome> {
  const result = await run(SPECTRAL, ['lint', documentPath, '--ruleset', join(ROOT, '.spectral.yaml'), '--format', 'stylish', '--fail-severity', 'hint']);
  const output = `${result.stdout}${result.stderr}`;
  const summary = lastLine(output);
  // stylish prints "No results with a severity of 'hint' or higher found!" when there is nothing to report
  return { tool: 'spectral (spectral:oas)', ok: result.code === 0 && /^No results with a severity of 'hint' or higher found!$/.test(summary), summary, output };
}

/** Redocly's built-in `recommended` rules: "valid" and not a single warning. */
export async function redocly(documentPath: string): Promise<LintOutcome> {
  const result = await run(REDOCLY, ['lint', documentPath, '--extends=recommended', '--format=stylish']);
  const output = `${result.stdout}${result.stderr}`;
  const summary = lastLine(output);
  const clean = /Your API description is valid/.test(output) && !/\bwarnings?\b|\berrors?\b/i.test(output.replace(/No configurations were provided[^\n]*/, ''));
  return { tool: 'redocly (recommended)', ok: result.code === 0 && clean, summary, output };
}

/**
 * The MCP Inspector's CLI, `--method tools/list --strict`, against a Streamable HTTP endpoint. `--strict`
 * prints each schema-portability finding (Error: or Warning:) and closes with a count line ("0 errors, 3
 * warnings across 2 tools."); it exits 6 on an error-severity finding but 0 on warnings alone, and prints no
 * line at all when it found nothing. So the outcome is read from what it printed: the tools listed (stdout,
 * JSON) and no finding on stderr.
 */
export async function inspectorStrict(mcpUrl: string, token: string): Promise<LintOutcome> {
  const result = await run(INSPECTOR, ['--cli', mcpUrl, '--transport', 'http', '--header', `Authorization: Bearer ${token}`, '--method', 'tools/list', '--strict']);
  let tools = -1;
  try {
    tools = (JSON.parse(result.stdout) as { tools: unknown[] }).tools.length;
  } catch {
    /* not the listing: reported below */
  }
  const findings = /^(Error|Warning): tool /m.test(result.stderr) || /\d+ errors?, \d+ warnings? across/.test(result.stderr);
  const summary = findings ? lastLine(result.stderr) : `${tools} tools listed; no schema portability finding (stderr: ${JSON.stringify(result.stderr.trim())})`;
  return { tool: 'mcp-inspector --cli --method tools/list --strict', ok: result.code === 0 && tools > 0 && !findings, summary, output: `${result.stderr}\n${result.stdout.slice(0, 2000)}` };
}

/** The two document linters over a document, written to a file of its own for them. */
export async function lintDocument(document: object): Promise<LintOutcome[]> {
  const dir = mkdtempSync(join(tmpdir(), 'gcp-api-lint-'));
  try {
    const path = join(dir, 'openapi.json');
    writeFileSync(path, JSON.stringify(document, null, 2));
    return await Promise.all([spectral(path), redocly(path)]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

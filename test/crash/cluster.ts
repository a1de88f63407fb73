import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { listening, SERVER_MAIN, spawnEntry, stop, SWEEP_MAIN, type Spawned } from '../support/processes.ts';

/** The processes the crash test kills: the server, a replica beside it (PostgreSQL only) and the sweep daemon (PostgreSQL only). */
export type Kind = 'server' | 'replica' | 'daemon';

const FAKE_RUNPOD_MAIN = resolve(import.meta.dirname, '../fakes/runpod/main.ts');

/**
 * The crash test's processes (docs/decisions.md, "Crash anywhere, lose nothing"): an upstream cloud of its own (the
 * RunPod fake, never killed: its machines outlive our crashes), and our processes on one database, each started
 * again after its kill. They share one clock, ahead of the real one by what the clock file holds (CRASH_CLOCK_FILE),
 * which the test moves forward between kills.
 */
export class Cluster {
  readonly kinds: readonly Kind[];
  /** Time spent starting our processes, in ms, and how many starts. */
  startMs = 0;
  starts = 0;
  private readonly procs = new Map<Kind, Spawned>();
  private readonly bases = new Map<Kind, string>();
  private offsetMs = 0;
  private readonly dir: string;
  private readonly clockFile: string;
  private readonly env: Record<string, string>;
  private readonly cloud: Spawned;
  private readonly cloudUrl: string;
  private readonly cloudKey: string;

  private constructor(kinds: readonly Kind[], env: Record<string, string>, dir: string, cloud: Spawned, cloudUrl: string, cloudKey: string) {
    this.kinds = kinds;
    this.dir = dir;
    this.clockFile = join(dir, 'clock-offset-ms');
    this.cloud = cloud;
    this.cloudUrl = cloudUrl;
    this.cloudKey = cloudKey;
    this.env = { ...env, CRASH_CLOCK_FILE: this.clockFile, SANDBOX_ENABLED: 'false', RUNPOD_API_KEY: cloudKey, RUNPOD_BASE_URL: cloudUrl };
    this.writeClock();
  }

  /** Starts the fake cloud; our processes are started one by one with `start`. */
  static async open(kinds: readonly Kind[], env: Record<string, string>): Promise<Cluster> {
    const dir = mkdtempSync(join(tmpdir(), 'crash-cluster-'));
    const cloud = spawnEntry(FAKE_RUNPOD_MAIN, {});
    const line = await cloud.line((entry) => entry.msg === 'fake runpod listening', 30_000);
    return new Cluster(kinds, env, dir, cloud, `http://127.0.0.1:${line.port as number}`, String(line.apiKey));
  }

  /** The shared clock, in ms. */
  now(): number {
    return Date.now() + this.offsetMs;
  }

  /** Moves every process's clock forward (they read the file within milliseconds). */
  advance(ms: number): void {
    this.offsetMs += ms;
    this.writeClock();
  }

  /** Starts one of our processes; resolves once it serves (a server) or runs (the daemon), or once it was killed starting. */
  async start(kind: Kind, crashAt: string | null): Promise<void> {
    const asked = performance.now();
    const env = { ...this.env, ...(crashAt && { CRASH_AT: crashAt }) };
    this.bases.delete(kind);
    const proc = kind === 'daemon' ? spawnEntry(SWEEP_MAIN, { ...env, CRASH_SWEEP_SECONDS: '1' }) : spawnEntry(SERVER_MAIN, env);
    this.procs.set(kind, proc);
    this.starts++;
    try {
      if (kind === 'daemon') await proc.line((entry) => String(entry.msg).includes('billing sweep daemon started'), 120_000);
      else this.bases.set(kind, await listening(proc, 120_000));
    } catch (error) {
      // a kill at a random moment may fall while it starts: that is one more moment, not a failure to start
      if (proc.child.signalCode !== 'SIGKILL') throw error;
    } finally {
      this.startMs += performance.now() - asked;
    }
  }

  alive(kind: Kind): boolean {
    const proc = this.procs.get(kind);
    return proc !== undefined && proc.child.exitCode === null && proc.child.signalCode === null;
  }

  process(kind: Kind): Spawned | undefined {
    return this.procs.get(kind);
  }

  /** The base URL of a server or replica. */
  base(kind: Kind): string | undefined {
    return this.bases.get(kind);
  }

  /** The servers (server, replica) that serve now. */
  liveServers(): Kind[] {
    return this.kinds.filter((kind) => kind !== 'daemon' && this.alive(kind) && this.bases.has(kind));
  }

  async kill(kind: Kind): Promise<void> {
    const proc = this.procs.get(kind);
    if (proc) await stop(proc, 'SIGKILL');
  }

  /** The fake cloud's machines, by the instance id each carries (its pod name), read through its own list API. */
  async machines(): Promise<Map<string, number>> {
    const res = await fetch(`${this.cloudUrl}/v2/pods`, { headers: { authorization: `Bearer ${this.cloudKey}` } });
    if (!res.ok) throw new Error(`the fake cloud's pod list answered ${res.status}`);
    const { pods } = (await res.json()) as { pods: { name: string; env?: Record<string, string> }[] };
    const byLabel = new Map<string, number>();
    for (const pod of pods) {
      const label = pod.env?.CP_INSTANCE_ID ?? pod.name;
      byLabel.set(label, (byLabel.get(label) ?? 0) + 1);
    }
    return byLabel;
  }

  /** Stops our processes (SIGTERM: what they committed stays), then the cloud. */
  async close(): Promise<void> {
    await Promise.all([...this.procs.values()].map((proc) => stop(proc, 'SIGTERM')));
    await stop(this.cloud, 'SIGTERM');
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** SIGTERM: the process ends what it does and exits. */
  async stop(kind: Kind): Promise<void> {
    const proc = this.procs.get(kind);
    if (proc) await stop(proc, 'SIGTERM');
  }

  /** SIGTERM to every process of ours that runs, waiting for each to end. */
  async stopAll(): Promise<void> {
    await Promise.all(this.kinds.filter((kind) => this.alive(kind)).map((kind) => stop(this.procs.get(kind)!, 'SIGTERM')));
  }

  private writeClock(): void {
    // whole or not at all: a process reads the old offset or the new one, never half a number
    const next = `${this.clockFile}.next`;
    writeFileSync(next, String(this.offsetMs));
    renameSync(next, this.clockFile);
  }
}

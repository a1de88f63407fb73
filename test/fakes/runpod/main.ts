/**
 * The RunPod fake as a process of its own (`node test/fakes/runpod/main.ts`), for tests that kill our processes: its
 * pods outlive every crash of a server, a replica or the sweep daemon, as a real cloud's machines would. It prints
 * one JSON line `{"msg": "fake runpod listening", "port", "apiKey"}` (test/support/processes.ts `listening` reads it),
 * boots every pod it makes within FAKE_RUNPOD_BOOT_MS (default 200), and is read through its own list API
 * (GET /v2/pods). FAKE_RUNPOD_API_KEY chooses the key.
 */
import { startFakeRunpod } from './server.ts';

const fake = await startFakeRunpod(process.env.FAKE_RUNPOD_API_KEY ? { apiKey: process.env.FAKE_RUNPOD_API_KEY } : {});
// several of our processes call it at once for a whole test: no rate limit of its own, nothing remembered per request
fake.knobs.minuteQuota = Number.MAX_SAFE_INTEGER;
const bootMs = Number(process.env.FAKE_RUNPOD_BOOT_MS ?? 200);
setInterval(() => {
  fake.knobs.runPods();
  fake.state.requests.length = 0;
}, bootMs);
const port = Number(new URL(fake.url).port);
console.log(JSON.stringify({ msg: 'fake runpod listening', port, apiKey: fake.apiKey }));
process.on('SIGTERM', () => void fake.close().then(() => process.exit(0)));

import { upstreamUnavailable } from '../errors.ts';
import type { DeviceStart } from '../ports/code-host.ts';
import { requireCodeHost, type SignInContext } from './sign-in-context.ts';

/** A device flow begins at the code host (GitHub): its codes for the person, and a flow of ours keyed by the device code's digest. */
export async function startDevice(ctx: SignInContext): Promise<DeviceStart> {
  const host = requireCodeHost(ctx);
  let start: DeviceStart;
  try {
    start = await host.startDevice();
  } catch (error) {
    throw upstreamUnavailable(`${host.name} did not start a device flow`, error, 'try again shortly');
  }
  const now = ctx.clock.now();
  await ctx.storage.transaction((uow) =>
    uow.deviceFlows.add({
      id: ctx.ids.newId('dfl'),
      provider: host.name,
      deviceCodeDigest: ctx.secrets.digest(start.deviceCode),
      status: 'pending',
      intervalSeconds: Math.max(1, start.interval),
      expiresAt: new Date(now.getTime() + start.expiresIn * 1000),
      lastPolledAt: null,
      tenantId: null,
      createdAt: now,
    }),
  );
  return start;
}

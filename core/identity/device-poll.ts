import { upstreamUnavailable } from '../errors.ts';
import type { Token } from '../tenancy/token.ts';
import { linkIn, mayLink, type Session } from './link-or-provision.ts';
import type { DeviceFlow, IdentityLink } from './links.ts';
import { requireCodeHost, type SignInContext } from './sign-in-context.ts';

export type DevicePollResult =
  | { status: 'pending' | 'slow_down' | 'expired' | 'denied'; interval: number }
  | { status: 'complete'; interval: number; session: Session };

/**
 * One poll of a device flow. A poll sooner than the interval answers slow_down (and the interval grows by 5 s, as
 * RFC 8628 says) without asking the code host; a flow that completed, expired or was denied answers `expired` (or
 * `denied`) for ever after, so one device code signs in once: twenty parallel polls of a completed code make one
 * tenant.
 */
export async function pollDevice(ctx: SignInContext, caller: Token | null, deviceCode: string): Promise<DevicePollResult> {
  const host = requireCodeHost(ctx);
  await mayLink(ctx, caller);
  const digest = ctx.secrets.digest(deviceCode);
  const gate = await ctx.storage.transaction(async (uow): Promise<{ answer: DevicePollResult } | { flow: DeviceFlow }> => {
    const flow = await uow.deviceFlows.lockByDigest(digest);
    const now = ctx.clock.now();
    if (!flow || flow.provider !== host.name) return { answer: { status: 'expired' as const, interval: 5 } };
    if (flow.status !== 'pending') return { answer: { status: flow.status === 'denied' ? ('denied' as const) : ('expired' as const), interval: flow.intervalSeconds } };
    if (now.getTime() >= flow.expiresAt.getTime()) {
      await uow.deviceFlows.update({ ...flow, status: 'expired' });
      return { answer: { status: 'expired' as const, interval: flow.intervalSeconds } };
    }
    if (flow.lastPolledAt && now.getTime() - flow.lastPolledAt.getTime() < flow.intervalSeconds * 1000) {
      const slower = { ...flow, intervalSeconds: flow.intervalSeconds + 5, lastPolledAt: now };
      await uow.deviceFlows.update(slower);
      return { answer: { status: 'slow_down' as const, interval: slower.intervalSeconds } };
    }
    await uow.deviceFlows.update({ ...flow, lastPolledAt: now });
    return { flow };
  });
  if ('answer' in gate) return gate.answer;
  const polled = await host.pollDevice(deviceCode).catch((error: unknown) => {
    throw upstreamUnavailable(`${host.name} did not answer the poll`, error, 'poll again after the interval');
  });
  if (polled.status === 'pending') return { status: 'pending', interval: gate.flow.intervalSeconds };
  const done = await ctx.storage.transaction(async (uow): Promise<{ answer: DevicePollResult; newLink: IdentityLink | null }> => {
    const flow = await uow.deviceFlows.lockByDigest(digest);
    if (!flow || flow.status !== 'pending') return { answer: { status: 'expired', interval: gate.flow.intervalSeconds }, newLink: null };
    if (polled.status === 'slow_down') {
      const interval = Math.max(polled.interval, flow.intervalSeconds);
      await uow.deviceFlows.update({ ...flow, intervalSeconds: interval });
      return { answer: { status: 'slow_down', interval }, newLink: null };
    }
    if (polled.status !== 'complete') {
      await uow.deviceFlows.update({ ...flow, status: polled.status });
      return { answer: { status: polled.status, interval: flow.intervalSeconds }, newLink: null };
    }
    const { session, newLink } = await linkIn(ctx, uow, caller, polled.identity);
    await uow.deviceFlows.update({ ...flow, status: 'complete', tenantId: session.tenantId });
    return { answer: { status: 'complete' as const, interval: flow.intervalSeconds, session }, newLink };
  });
  if (done.newLink) await ctx.people.announceLinked(done.newLink);
  return done.answer;
}

import type { Instance, InstanceStatus } from '../rentals/instance.ts';
import type { EventType, NewEvent } from './event.ts';

/** What an instance held before a change that the events depend on. */
export interface InstanceBefore {
  status: InstanceStatus;
  preemptedAt: Date | null;
}

/** The status change an event tells: the first start (a reboot coming back is not news), the end, a failure. */
function statusEvent(before: InstanceStatus | null, after: InstanceStatus): EventType | null {
  if (before === after) return null;
  if (after === 'running' && before === 'provisioning') return 'instance.running';
  if (after === 'terminated') return 'instance.terminated';
  if (after === 'failed') return 'instance.failed';
  return null;
}

export const instanceData = (instance: Instance): Record<string, unknown> => ({
  instance_id: instance.id,
  name: instance.name,
  status: instance.status,
  node_id: instance.nodeId,
  provider: instance.provider,
  gpu_type: instance.gpuType,
  gpu_count: instance.gpuCount,
  started_at: instance.startedAt?.toISOString() ?? null,
  terminated_at: instance.terminatedAt?.toISOString() ?? null,
  failure: instance.failure,
});

/**
 * The events one change of an instance tells, in order: its preemption when the provider took the machine back
 * (spot), then its status change. Every update of an instance passes here, in the update's transaction.
 */
export function instanceEvents(before: InstanceBefore | null, after: Instance): NewEvent[] {
  const events: NewEvent[] = [];
  if (after.preemptedAt && !before?.preemptedAt) {
    events.push({ tenantId: after.tenantId, type: 'instance.preempted', data: { ...instanceData(after), preempted_at: after.preemptedAt.toISOString() }, at: after.preemptedAt });
  }
  const type = statusEvent(before?.status ?? null, after.status);
  if (type) events.push({ tenantId: after.tenantId, type, data: instanceData(after), at: after.terminatedAt && type !== 'instance.running' ? after.terminatedAt : after.startedAt ?? after.createdAt });
  return events;
}

/**
 * A managed recovery's outcome for the machine that ended (docs/decisions.md, "Managed recovery"): the replacement
 * rented for it, or why none was.
 */
export function recoveryEvent(
  lost: Instance,
  outcome: { replacement: Instance; attemptsLeft: number; leftVolumeIds: string[] } | { failure: string; attemptsLeft: number },
  at: Date,
): NewEvent {
  if ('failure' in outcome) {
    return { tenantId: lost.tenantId, type: 'instance.recovery_failed', data: { ...instanceData(lost), recovery_failure: outcome.failure, attempts_left: outcome.attemptsLeft }, at };
  }
  const { replacement } = outcome;
  return {
    tenantId: lost.tenantId,
    type: 'instance.recovered',
    data: {
      ...instanceData(lost),
      replaced_by: replacement.id,
      replacement: { instance_id: replacement.id, node_id: replacement.nodeId, provider: replacement.provider, rate_cents_per_hour: replacement.rateCentsPerHour },
      attempts_left: outcome.attemptsLeft,
      left_volume_ids: outcome.leftVolumeIds,
    },
    at,
  };
}

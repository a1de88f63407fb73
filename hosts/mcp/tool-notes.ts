import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';

/**
 * What an agent needs besides an operation's summary before it calls a tool: what it costs, whether a
 * second call does anything more, what it cannot undo. Keyed by tool name; a tool without a note gets its
 * summary and hints derived from its method (tool-catalog.ts), so a new operation needs no entry here to be
 * a tool, only to say more.
 */
export interface ToolNote {
  text?: string;
  hints?: Partial<ToolAnnotations>;
  agentRequired?: readonly string[];
}

const NOTES: Record<string, ToolNote> = {
  rent_instance: {
    text:
      'Money: charges the first hour (rate_cents_per_hour) to the balance now, and the token\'s spend cap commits rate x termination_hours; ' +
      'past the cap, a burn ceiling (max_burn_cents_per_hour; get_token_self says what is left) or the balance it fails (402) with nothing charged. Send a fresh idempotency_key per machine and the same key when you retry: ' +
      'a retry answers the machine rented the first time, never a second one. Quote first: quote_rental with node_id (from search_gpus) or search ' +
      'answers the price and what it charges and commits, held 120 s; then rent with its quote_id, never charged above it (a rise answers PRICE_CHANGED: quote again). ' +
      'search rents the cheapest match at or under max_price_per_gpu_hour; dry_run: true answers the figures and changes nothing. ' +
      'With recovery {max_attempts}, a machine lost, preempted or failed is replaced by the sweep (each replacement is a new rental: first hour charged, within the same cap and window); follow replaced_by.',
    hints: { destructiveHint: false, idempotentHint: true, openWorldHint: true },
    agentRequired: ['idempotency_key'],
  },
  quote_rental: {
    text:
      'Money: charges and commits nothing; answers what rent_instance would charge now, commit on the cap and leave of it, refused (402, 409) as the rental would be. ' +
      'Rent it with rent_instance {quote_id, idempotency_key} within 120 s (expires_at): once, at no more than rate_cents_per_hour.',
    hints: { destructiveHint: false, idempotentHint: false, openWorldHint: true },
  },
  terminate_instance: {
    text: 'Ends the machine for good (its disk is deleted); unused time after the first hour is refunded. Calling it on an ended machine answers it again.',
    hints: { destructiveHint: true, idempotentHint: true, openWorldHint: true },
  },
  reboot_instance: { text: 'Interrupts whatever runs on the machine.', hints: { destructiveHint: true, idempotentHint: false, openWorldHint: true } },
  schedule_removal: {
    text: 'Money: the last hour block is charged pro rata up to removal_scheduled_at; the machine is deleted then.',
    hints: { destructiveHint: true, idempotentHint: true },
  },
  cancel_scheduled_removal: { text: 'The machine keeps running and billing by the hour.', hints: { destructiveHint: false, idempotentHint: true } },
  emergency_stop: {
    text: 'Stops EVERY machine of the account at once (disks deleted, volumes kept) and pauses renting until resume_rentals.',
    hints: { destructiveHint: true, idempotentHint: true, openWorldHint: true },
  },
  resume_rentals: { hints: { destructiveHint: false, idempotentHint: true } },
  set_budget: {
    text:
      'Money: with stop_at_limit, the charge that reaches 100 % of the month\'s budget pauses renting and stops EVERY machine of the account. ' +
      'The people of the tenant are mailed, and budget.threshold_reached sent, at each alert percent once a month.',
    hints: { destructiveHint: false, idempotentHint: true },
  },
  clear_budget: { text: 'No alert nor stop for the month any more; a budget stop in place stays until resume_rentals.', hints: { destructiveHint: true, idempotentHint: true } },
  create_deposit: { text: 'Money: credits nothing until an operator confirms the bank transfer.', hints: { destructiveHint: false, idempotentHint: false } },
  create_checkout: {
    text: 'Money: charges nothing itself; answers a page where a person pays by card, credited once paid (sync_checkout).',
    hints: { destructiveHint: false, idempotentHint: false },
  },
  sync_checkout: { text: 'Money: credits the balance once, however often it is called.', hints: { destructiveHint: false, idempotentHint: true } },
  update_auto_recharge: { text: 'Money: lets the server charge the saved card amount_usd whenever the balance falls under threshold_usd.' },
  forget_card: { hints: { destructiveHint: true, idempotentHint: true } },
  create_volume: { text: 'Money: its storage is billed per started hour from now until delete_volume.', hints: { destructiveHint: false, idempotentHint: false, openWorldHint: true } },
  delete_volume: { text: 'Its data is gone for good; storage is billed up to now.' },
  create_reservation: {
    text: 'Money: moves nothing now; holds the quote x hours on the token\'s spend cap (402 beyond it) and charges the first hour when it starts. Send an idempotency_key to make a retry safe.',
    hints: { destructiveHint: false, idempotentHint: false },
  },
  cancel_reservation: { text: 'Before the start it costs nothing; during the window the machine is terminated with the usual refund.' },
  ingest_usage: { text: 'Money: each record is owed at once at its kind\'s price. Send an idempotency_key to make a retry safe.', hints: { destructiveHint: false, idempotentHint: false } },
  settle_usage: { text: 'Money: posts owed usage to the ledger while the balance covers it.', hints: { destructiveHint: false, idempotentHint: true } },
  get_token_self: {
    text:
      'Your own limits: scopes, spend cap and what remains, hours, expiry, and the dead-man switch (idle_timeout_minutes, idle_deadline_at): ' +
      'every call moves the deadline (recorded at most once a minute); silent past it, every machine rented under this token and the tokens it issued is terminated and the token stops working.',
  },
  heartbeat_token: {
    text: 'Keeps this token alive when you have nothing else to call; any tool call does as much. Call it well within idle_timeout_minutes (e.g. every third of it).',
    hints: { destructiveHint: false, idempotentHint: true },
  },
  create_token: {
    text: 'The new token\'s secret is answered once; its scopes, spend cap, hours and idle timeout stay within this token\'s.',
    hints: { destructiveHint: false, idempotentHint: false },
  },
  revoke_token: { text: 'Every token it issued is revoked too.' },
};

export const toolNote = (name: string): ToolNote => NOTES[name] ?? {};

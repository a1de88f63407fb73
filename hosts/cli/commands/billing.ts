import { spawn } from 'node:child_process';
import type { Command } from 'commander';
import { connect, example, expectOk, note, optionsOf, print, printJson, withJson } from '../context.ts';
import { CliError, EXIT } from '../exit-codes.ts';
import { fields, money, rate, relative, table } from '../format.ts';
import { integer, usd } from '../parse.ts';
import { confirm } from '../prompt.ts';

/** The system's way to open a URL in a browser; a failure is only a note: the URL is printed anyway. */
function openInBrowser(url: string): void {
  const [command, args] = process.platform === 'darwin' ? ['open', [url]] : process.platform === 'win32' ? ['cmd', ['/c', 'start', '', url]] : ['xdg-open', [url]];
  const child = spawn(command, args, { stdio: 'ignore', detached: true });
  child.on('error', () => note('(could not open a browser: open the URL yourself)'));
  child.unref();
}

export function registerBilling(program: Command): void {
  example(withJson(program.command('balance').description('The account: balance, owed, available, burn rate and when funds run out')), 'gpuctl balance').action(
    async (_options: unknown, command: Command) => {
      const session = connect(command);
      const account = await expectOk(session, session.client.GET('/v1/billing/account'));
      if (optionsOf(command).json) return printJson(account);
      print(
        fields([
          ['balance', money(account.balance_cents)],
          ['owed', money(account.owed_cents)],
          ['available', money(account.available_cents)],
          ['burn', `${rate(account.burn_cents_per_hour)} (${account.running_machines} running)`],
          ['runs out', account.stops_at ? relative(account.stops_at) : 'never at this burn'],
          ['rentals', account.rentals + (account.pause ? ` (${account.pause.kind}${account.pause.reason ? `: ${account.pause.reason}` : ''})` : '')],
          ['card', account.card ? `${account.card.brand} ${account.card.last4}` : 'none'],
        ]),
      );
    },
  );

  example(
    withJson(program.command('ledger').description('Ledger entries, newest first; they sum to the balance').option('--limit <n>', 'how many (default 500)', integer(1, 1_000))),
    'gpuctl ledger --limit 20',
  ).action(async (_options: unknown, command: Command) => {
    const options = optionsOf<{ limit?: number }>(command);
    const session = connect(command);
    const entries = await expectOk(session, session.client.GET('/v1/billing/ledger', { params: { query: { ...(options.limit && { limit: options.limit }) } } }));
    if (options.json) return printJson(entries);
    print(
      table(
        ['WHEN', 'KIND', 'AMOUNT', 'BALANCE', 'DESCRIPTION'],
        entries.map((e) => [relative(e.created_at), e.kind, money(e.amount_cents), money(e.balance_after_cents), e.description ?? e.reference]),
        'No ledger entries yet: add funds with `gpuctl checkout <usd>` or `gpuctl deposit <usd>`.',
      ),
    );
  });

  example(
    withJson(
      program
        .command('deposit')
        .description('Ask to fund the account by bank transfer; nothing is credited until an operator confirms it')
        .argument('<usd>', 'the amount in USD, e.g. 500 or 99.50', usd)
        .option('--reference <text>', 'your transfer reference, shown to the operator'),
    ),
    'gpuctl deposit 500 --reference "INV-2026-11"',
  ).action(async (amount: string, _options: unknown, command: Command) => {
    const options = optionsOf<{ reference?: string }>(command);
    const session = connect(command);
    const deposit = await expectOk(session, session.client.POST('/v1/billing/deposits', { body: { amount_usd: amount, ...(options.reference && { reference: options.reference }) } }));
    if (options.json) return printJson(deposit);
    print(`Deposit ${deposit.id} of ${money(deposit.amount_cents)} is ${deposit.status}: it is credited once an operator confirms the transfer`);
  });

  example(
    withJson(
      program
        .command('checkout')
        .description('Add funds by card: prints the checkout page and opens it on a terminal')
        .argument('<usd>', 'the amount in USD, e.g. 50', usd)
        .option('--no-open', 'only print the URL'),
    ),
    'gpuctl checkout 50',
  ).action(async (amount: string, _options: unknown, command: Command) => {
    const options = optionsOf<{ open: boolean }>(command);
    const session = connect(command);
    const checkout = await expectOk(session, session.client.POST('/v1/billing/checkout', { body: { amount_usd: amount } }));
    if (options.json) return printJson(checkout);
    print(`Pay ${money(checkout.amount_cents)} at:\n${checkout.url}`);
    if (options.open && process.stdout.isTTY) openInBrowser(checkout.url);
  });

  example(
    withJson(
      program
        .command('stop')
        .description('Emergency stop: every machine stops now (disks deleted, volumes kept) and renting pauses')
        .option('--yes', 'do not ask for confirmation')
        .option('--reason <text>', 'why, kept with the pause'),
    ),
    'gpuctl stop --yes --reason "runaway job"',
  ).action(async (_options: unknown, command: Command) => {
    const options = optionsOf<{ yes?: boolean; reason?: string }>(command);
    const session = connect(command);
    if (!options.yes && !(await confirm('Stop every machine now and pause renting?', '--yes'))) {
      throw new CliError('not stopped', EXIT.unexpected);
    }
    const stopped = await expectOk(session, session.client.POST('/v1/billing/stop', { body: { ...(options.reason && { reason: options.reason }) } }));
    if (options.json) return printJson(stopped);
    print(`Stopped ${stopped.terminated.length} machine(s)${stopped.terminated.length ? `: ${stopped.terminated.join(', ')}` : ''}; renting is paused (gpuctl resume reopens it)`);
  });

  example(withJson(program.command('resume').description('Reopen renting after an emergency stop, a tripped breaker once funds are in, or a budget stop once raised or in a new month')), 'gpuctl resume').action(
    async (_options: unknown, command: Command) => {
      const session = connect(command);
      const account = await expectOk(session, session.client.POST('/v1/billing/resume'));
      if (optionsOf(command).json) return printJson(account);
      print(`Renting is ${account.rentals}; available ${money(account.available_cents)}`);
    },
  );
}

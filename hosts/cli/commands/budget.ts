import { InvalidArgumentError, type Command } from 'commander';
import type { Schema } from '../../client/api-client.ts';
import { connect, example, expectOk, optionsOf, print, printJson, withJson } from '../context.ts';
import { fields, money } from '../format.ts';
import { usd } from '../parse.ts';

/** "50,80,100" as whole percents (the server checks 1 to 100, each once); "none" for no alerts. */
const percents = (text: string): number[] => {
  if (text.trim() === 'none') return [];
  const list = text.split(',').map((item) => item.trim().replace(/%$/, ''));
  if (list.some((item) => !/^\d+$/.test(item))) throw new InvalidArgumentError('must be whole percents separated by commas, e.g. 50,80,100, or none');
  return list.map(Number);
};

const show = (budget: Schema<'BudgetOut'>): string =>
  fields([
    ['budget', `${money(budget.monthly_cents)} a month (UTC)`],
    ['spent', `${money(budget.spent_cents)} this month (${budget.percent} %)`],
    ['alerts', budget.alert_percents.length ? budget.alert_percents.map((p) => `${p} %`).join(', ') : 'none'],
    ['next alert', budget.next_alert_percent === null ? 'none left this month' : `${budget.next_alert_percent} %`],
    ['at 100 %', budget.stop_at_limit ? 'renting pauses and every machine stops' : 'alerts only'],
  ]);

export function registerBudget(program: Command): void {
  const budget = example(program.command('budget').description('The monthly budget: alerts by mail and webhook at its percents, a stop at 100 % if asked'), 'gpuctl budget show');

  example(withJson(budget.command('show').description("The monthly budget and this month's spend against it")), 'gpuctl budget show').action(async (_options: unknown, command: Command) => {
    const session = connect(command);
    const answer = await expectOk(session, session.client.GET('/v1/billing/budget'));
    if (optionsOf(command).json) return printJson(answer);
    print(show(answer));
  });

  example(
    withJson(
      budget
        .command('set')
        .description('Set the monthly budget; a raise above the spend re-arms the alerts above it')
        .argument('<usd>', 'what a calendar month (UTC) may charge, e.g. 500', usd)
        .option('--alerts <percents>', 'whole percents, comma separated, or none (default 50,80,100)', percents)
        .option('--stop', 'at 100 %: pause renting and stop every machine'),
    ),
    'gpuctl budget set 500 --alerts 50,80,100 --stop',
  ).action(async (amount: string, _options: unknown, command: Command) => {
    const options = optionsOf<{ alerts?: number[]; stop?: boolean }>(command);
    const session = connect(command);
    const answer = await expectOk(
      session,
      session.client.PUT('/v1/billing/budget', { body: { monthly_usd: amount, ...(options.alerts && { alert_percents: options.alerts }), stop_at_limit: options.stop === true } }),
    );
    if (options.json) return printJson(answer);
    print(show(answer));
  });

  example(withJson(budget.command('clear').description('Remove the monthly budget (a budget stop stays until gpuctl resume)')), 'gpuctl budget clear').action(
    async (_options: unknown, command: Command) => {
      const session = connect(command);
      await expectOk(session, session.client.DELETE('/v1/billing/budget'));
      // a 204 has no JSON to print: --json prints nothing, the exit status says it worked
      if (!optionsOf(command).json) print('No monthly budget now');
    },
  );
}
